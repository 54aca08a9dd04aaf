"""Memory poisoning: text that tries to become a rule for the system, judged by what it does.

A list of phrasings cannot win against a hostile user, so the judgement is on the act the text
performs, after undoing disguises:

- **disguise**: NFKC (full-width letters, ligatures), a confusables skeleton (Cyrillic "ѕ" and
  Greek "ο" read as Latin "s" and "o"), zero-width characters dropped, digits inside words read
  as letters ("r3v3al"), whitespace collapsed, case folded;
- **what it does**: addresses the assistant's behaviour towards other users; asks to disclose
  stored data, other people's data or the assistant's own instructions; switches off security;
  asks for or hands out credentials; makes the system run commands; claims a role or authority
  over the system; arrives dressed as pasted tool or system output (a "system:" line, a chat
  template token, a JSON policy object);
- **in which language**: English and Chinese here, French, Spanish and German in `poisoning_eu`;
- **encoded**: base64, hex and percent-encoded runs are decoded (bounded, `encoded`) and what
  they say is judged like the text itself (an act found there is reported as `encoded:<act>`).

Each act is a small set of patterns over the skeleton, all with bounded gaps so they run in
linear time. A text that performs any of them is never a rule or a preference: the gate stores
it at most as a low-trust, flagged episode (by default not at all), and recall never offers
such a memory as something to follow.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from memory.gating.rules import poisoning_eu as eu
from memory.gating.rules.encoded import decoded_texts

__all__ = ["PoisoningVerdict", "judge", "skeleton"]

# Letters from other scripts that look like Latin ones (Unicode's confusables, the part that
# matters for English text). NFKC already folds full-width forms and most compatibility letters.
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i",
        "ј": "j", "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "г": "r",
        "ѕ": "s", "т": "t", "ц": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "ʏ": "y", "з": "3",
        "ь": "b", "п": "n", "д": "d", "л": "n", "ɡ": "g",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "μ": "u", "ϲ": "c", "ϳ": "j",
        # Armenian, Latin look-alikes, dotless i
        "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i",
        "ℓ": "l", "ǀ": "l", "ⅼ": "l", "ｌ": "l",
    }
)  # fmt: skip
# The same look-alikes with case kept, for encoded runs (base64 is case-sensitive): Cyrillic
# "В" in a base64 run stands for Latin "B", not "b".
_CONFUSABLES_CASED = {
    **_CONFUSABLES,
    **{
        ord(chr(k).upper()): v.upper()
        for k, v in _CONFUSABLES.items()
        if len(chr(k).upper()) == 1 and not chr(k).upper().isascii() and chr(k).upper() != chr(k)
    },
}
# Digits and symbols standing in for letters inside a word ("r3v3al", "p@ssw0rd").
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
)
# Word starts only, lookaheads bounded by the word cap: linear on a 1 MB run of letters.
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?=[\w@$]{0,39}[a-z])(?=[\w@$]{0,39}[0134578@$])[\w@$]{3,40}(?![\w@$])"
)
_SPACE = re.compile(r"[^\S\n]+")


def skeleton(text: str) -> str:
    """The text as a reader sees it, disguises undone.

    NFKC, confusables mapped to Latin, no zero-width characters or combining marks, leetspeak
    inside words undone, spaces collapsed, casefolded.
    """
    text = unicodedata.normalize("NFKC", text)
    decomposed = unicodedata.normalize("NFD", text)
    text = "".join(ch for ch in decomposed if unicodedata.category(ch) not in ("Mn", "Cf"))
    text = unicodedata.normalize("NFC", text).casefold().translate(_CONFUSABLES)
    text = text.replace("’", "'").replace("‘", "'").replace("`", "'")
    text = _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), text)
    return _SPACE.sub(" ", text)


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), re.MULTILINE)


# Within one clause: at most 60 characters between a verb and what it acts on.
_GAP = r"[^.!?;\n。！？；]{0,60}?"
_ZGAP = r"[^。！？；\n]{0,20}?"

_OTHERS_EN = (
    r"(?:other|another|all|every|any|each|different)\s+(?:\w+\s+){0,2}?(?:users?|customers?|"
    r"people|persons?|accounts?|tenants?|clients?|members?|patients?|employees?)(?:'s?)?"
    # "never tested by anyone" names whoever did something, not whom to treat some way.
    r"|(?<!\bby )\b(?:everyone|everybody|anyone|anybody|someone else|somebody else)(?:'s)?"
)
_STORED_EN = (
    r"(?:stored|saved|all|every|their|other|the whole|entire)\s+(?:\w+\s+)?(?:memor(?:y|ies)|"
    r"conversations?|chats?|chat logs?|histor(?:y|ies)|records?|data(?:base)?|profiles?|"
    r"messages?|notes|files)"
)
_INTERNALS_EN = (
    r"(?:system|hidden|initial|original|developer|internal|secret)\s+(?:prompt|instructions?|"
    r"rules|message|configuration|config|policies)|\byour\s+(?:instructions|prompt|rules|"
    r"configuration|guidelines)"
)
_DISCLOSE_EN = (
    r"\b(?:reveal|disclose|share|show|print|dump|leak|expose|export|send|list|give|output|"
    r"display|forward|e-?mail|tell|read out|provide|hand over|upload|post|return|repeat|recite|"
    r"include|paste|write out|spill)\b"
)
_SECRETS_EN = (
    r"\b(?:passwords?|passcodes?|api[ -]?keys?|access keys?|tokens?|secrets?|credentials?|creds|"
    r"private keys?|ssh keys?|session (?:cookies?|ids?)|2fa codes?|otp codes?|otps?|"
    r"one[- ]time (?:codes?|passwords?)|security codes?|cvv|pins?)\b(?!\s*(?:reset|manager))"
)
_SECURITY_EN = (
    r"\b(?:safety|security|authentication|authorization|authorisation|auth|verification|"
    r"identity checks?|2fa|mfa|filters?|filtering|guardrails?|moderation|redaction|approvals?|"
    r"restrictions?|content polic(?:y|ies)|safeguards?|sandbox(?:ing)?|permission checks?|"
    r"access controls?|audit(?:ing)?)\b"
)
_DISABLE_EN = (
    r"\b(?:disable|bypass|turn off|switch off|ignore|skip|circumvent|deactivate|remove|suspend|"
    r"relax|stop (?:doing|applying|enforcing|using)|get around|work around|drop|lift|waive|"
    r"override|no longer (?:apply|enforce|require|do))\b"
)
_STANDING_EN = (
    r"\b(?:from now on|going forward|henceforth|hereafter|in (?:the )?future|always|never|"
    r"every time|whenever|each time|for all (?:future )?(?:conversations|sessions|requests|chats)"
    r"|new (?:rule|policy|instruction|directive)|as a rule|by default|permanently|"
    r"from this point)\b"
)
_ADDRESSED_EN = (
    r"\b(?:you|the assistant|assistant|the ai|the model|the bot|the agent|the system)\s+"
    r"(?:must|should|shall|will|are (?:to|required|allowed|permitted)|need to|have to|is to|"
    r"may now|can now|are now)\b"
)

DISCLOSURE = _rx(
    _DISCLOSE_EN + _GAP + r"(?:" + _OTHERS_EN + r"|" + _STORED_EN + r"|" + _INTERNALS_EN + r")",
    r"(?:" + _OTHERS_EN + r")" + _GAP + r"(?:memor(?:y|ies)|data|records?|histor(?:y|ies)|"
    r"conversations?|messages?|details|information|info|profiles?|secrets?|files)\b"
    + _GAP
    + r"\b(?:to|with)\s+(?:me|anyone|everyone|whoever|them)\b",
    r"\b(?:what|whatever)\s+(?:other|all)\s+users?\s+(?:have\s+)?(?:said|stored|told|shared)",
    # Chinese: 透露/导出/列出 … 其他用户/所有记忆/系统提示词, in either order.
    r"(?:透露|泄露|公开|显示|展示|告诉|发给|发送|导出|输出|列出|分享|打印|给我看|提供|交出|转发|念出|复述)"
    + _ZGAP
    + r"(?:(?:其他|别的|所有|每个|任何|全部|其它|别人)的?(?:用户|人|客户|账号|账户|成员|患者|员工)"
    r"|(?:所有|全部|存储的|保存的|别人的|其他人的)(?:记忆|数据|聊天记录|对话|记录|资料|信息|档案)"
    r"|系统提示词?|隐藏(?:的)?(?:指令|规则|提示)|内部(?:指令|规则|配置|设定)|你的(?:指令|设定|提示词))",
    r"(?:其他|别的|所有|每个|任何|其它|别人)(?:的)?(?:用户|人|客户|成员)(?:的)?"
    r"(?:记忆|数据|聊天记录|对话|记录|资料|信息|隐私)"
    + _ZGAP
    + r"(?:透露|泄露|公开|显示|告诉|发给|发送|导出|输出|列出|分享|给我|提供|转发)",
    *eu.DISCLOSURE,
)
SECURITY = _rx(
    _DISABLE_EN + _GAP + _SECURITY_EN,
    r"(?:关闭|禁用|绕过|跳过|忽略|停用|取消|去掉|不要再?(?:做|进行|执行)?)"
    + _ZGAP
    + r"(?:安全|验证|认证|审核|审批|过滤|防护|限制|风控|脱敏|权限检查|身份核验|身份校验|合规检查)",
    *eu.SECURITY,
)
CREDENTIALS = _rx(
    r"\b(?:send|e-?mail|post|give|share|reveal|tell|forward|upload|include|append|print|output|"
    r"collect|harvest|ask (?:\w+\s+){0,3}?for|request|store|log|save|dump|list)\b"
    + _GAP
    + _SECRETS_EN,
    r"(?:发送|告诉|透露|给我|发给|提供|索要|收集|要求|记录|保存|打印|输出|列出|附上|附带|带上|贴出|写出)"
    + _ZGAP
    + r"(?:密码|密钥|令牌|token|验证码|私钥|凭证|口令|cookie)",
    *eu.CREDENTIALS,
)
EXECUTION = _rx(
    r"\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^\n]{0,200}?\|\s*(?:sudo\s+)?"
    r"(?:sh|bash|zsh|python3?|perl|ruby|iex|node)\b",
    r"\brm\s+-(?:rf|fr)\s+[/~*]",
    r"\b(?:run|execute|eval|exec|invoke|launch|call)\s+(?:\w+\s+){0,3}?(?:curl|wget|"
    r"powershell|payload|reverse shell|(?:this|that|the following|these|below) (?:command|"
    r"script|code|snippet|one-liner|shell command)s?|the script at|shell commands?)",
    r"\b(?:download|fetch)\s+(?:\w+\s+){0,2}?(?:and|&|then)\s+(?:run|execute|install|open)\b",
    r"\bbase64\s+-d\b[^\n]{0,40}\|\s*(?:sh|bash)\b|\b(?:nc|netcat|ncat)\s+-e\b|/dev/tcp/",
    r"\b(?:os\.system|subprocess\.|eval\(|exec\(|powershell\s+-(?:enc|e|c)\b)",
    r"(?:执行|运行)"
    + _ZGAP
    + r"(?:curl|wget|bash|powershell|rm -rf|这(?:个|条|段)(?:命令|脚本|代码)"
    r"|以下(?:命令|脚本|代码)|下面的(?:命令|脚本|代码))",
)
AUTHORITY = _rx(
    r"\b(?:i am|i'm|im|this is|speaking as|acting as)\s+(?:an?\s+|the\s+|your\s+)?"
    r"(?:verified\s+|authori[sz]ed\s+|official\s+|real\s+|actual\s+|new\s+|head\s+|lead\s+|"
    r"super\s+|system\s+|platform\s+|chief\s+)?(?:admin|administrator|root|superuser|"
    r"sysadmin|moderator|operator|creator|maker|owner|developer|dev|programmer|staff member)"
    r"\b(?!\s+(?:at|in|for|of|with|on)\s+(?!(?:this|the|your)\s+(?:system|platform|assistant|"
    r"bot|server|app|deployment|workspace|service|model|ai)\b))",
    r"\b(?:your|this (?:system|assistant|bot|server|app)'s?|the system's)\s+(?:admin|"
    r"administrator|owner|developer|creator|operator|maker|boss|master)\b",
    r"\bi (?:have|hold|was given|got|now have)\s+(?:\w+\s+)?(?:admin|root|elevated|full|"
    r"unrestricted|superuser|sudo|god|special)\s+(?:access|privileges?|rights|permissions?|"
    r"clearance|powers?)",
    r"\b(?:message|notice|instruction|directive|update|order|memo|alert)s?\s+from\s+(?:the\s+|"
    r"your\s+)?(?:developers?|admins?|administrators?|system|security team|operators?|openai|"
    r"anthropic|management|it department|platform team|creators?)\b",
    r"\bsystem\s+(?:notice|message|override|alert|instruction|update|directive|announcement|"
    r"policy|command|notification)\b",
    r"\b(?:authori[sz]ed|approved|sanctioned|cleared)\s+by\s+(?:the\s+|your\s+)?(?:admin|"
    r"administrator|system|security|developers?|management|operators?|it)\b",
    r"\b(?:admin|developer|god|debug|maintenance|sudo|root|unrestricted|jailbreak|dan)\s+mode\b",
    r"\b(?:override|master|admin|access|security)\s+(?:code|password|key)\s*[:=]",
    r"\b(?:priority|emergency|security)\s+(?:override|instruction|directive)\b",
    r"我是(?:你的|系统的?|本系统的?|这个系统的?|平台的?)?(?:超级)?(?:管理员|开发者|运维|创造者|主人|root|站长|负责人)"
    r"(?!的(?:朋友|孩子))",
    r"(?:你的|系统的|本系统的?|这个系统的?)(?:管理员|开发者|主人|创造者)",
    r"(?:来自|这是)(?:系统|开发者|管理员|官方|安全团队|平台)的?(?:通知|消息|指令|公告|命令)",
    r"系统(?:通知|公告|指令|消息|提示|命令|更新)[:：]|官方(?:通知|指令)|管理员(?:模式|权限|身份)",
    r"最高权限|超级权限|root权限|开发者模式|调试模式|上帝模式|越狱",
    r"我(?:有|拥有|获得了?)(?:管理员|最高|特殊|root|全部)(?:的)?权限",
    *eu.AUTHORITY,
)
FRAMING = _rx(
    # Possessive leads: `^\s*(...)?\s*` would split one run of blanks every possible way.
    r"^[ \t]*+(?:\[|<|\{|\(|#+|\*\*)?[ \t]*+"
    r"(?:tool(?:\s+|_)(?:output|result|response|message)|tool|"
    r"function(?:\s+|_)(?:output|result|call|response)|system|system (?:message|prompt|notice|"
    r"note|alert|instruction|update|override)|assistant|developer|observation|api response|"
    r"server response|admin|root|operator)\s*(?:\]|>|\}|\)|\*\*)?\s*[:：>]",
    r"<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|?>",
    r"\[/?inst\]|<<\s*/?sys\s*>>|</?(?:system|tool|function|instructions?|admin)(?:\s[^>]{0,40})?>",
    r"[\"']role[\"']\s*:\s*[\"'](?:system|developer|tool)[\"']",
    r"[\"'](?:policy|policies|instructions?|system_prompt|system|directive|rules?|override|"
    r"command|admin_note|assistant_rules)[\"']\s*:",
    r"\bbegin (?:system|hidden|new) (?:prompt|instructions?)\b|###\s*(?:system|instruction)",
    r"^[ \t]*+(?:【|\[)?[ \t]*+(?:系统|工具(?:输出|结果|返回)?|助手|开发者|管理员)"
    r"\s*(?:】|\])?\s*[:：]",
)
OTHER_USERS = _rx(
    r"(?:" + _OTHERS_EN + r")",
    r"(?:其他|别的|所有|每个|任何|其它)(?:的)?(?:用户|人|客户|来访者|访客)|别人",
    *eu.OTHER_USERS,
)
STANDING = _rx(
    _STANDING_EN,
    _ADDRESSED_EN,
    r"以后|今后|从现在(?:起|开始)|从今天(?:起|开始)|每次|总是|一律|始终|永远|默认|新规则|记住",
    r"你(?:必须|应该|要|得|需要|务必|可以)|助手(?:必须|应该|要)",
    *eu.STANDING,
)
OVERRIDE = _rx(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.]{0,30}\b(?:previous|prior|earlier|"
    r"above|all|your|the|any|existing|original)\s+(?:\w+\s+)?(?:instructions?|rules?|prompts?|"
    r"guidelines|polic(?:y|ies)|directives?|restrictions?|constraints?)\b",
    r"\b(?:you are now|you're now|from now on you are|act as|pretend (?:to be|you're|you are)|"
    r"roleplay as|no restrictions|without (?:any )?restrictions|no longer bound)\b",
    r"(?:忽略|无视|忘掉|忘记|跳过|绕过)" + _ZGAP + r"(?:指令|规则|设定|提示|限制|要求|约束)",
    r"从现在(?:起|开始)你(?:是|就是)|你现在是|不受任何限制|无条件服从|服从我的",
    r"\b(?:obey|comply with)\b[^.]{0,20}\b(?:me|my|all|every|commands?|orders?)\b",
    r"\bgrant(?:ed)?\b[^.]{0,30}\b(?:root|admin|all|full|elevated|unrestricted)\b[^.]{0,12}"
    r"(?:privileges?|access|permissions?|rights)",
    r"\b(?:jailbreak|jailbroken)\b",
    *eu.OVERRIDE,
)
# A clause that opens with a negation forbids the act it names ("never share my address with
# anyone", "不要把我的地址告诉任何人"): a protective rule, not a request to perform it.
_NEGATED = re.compile(
    r"^\s*(?:please\s+|pls\s+|and\s+|but\s+|also\s+|请|也|千万)?(?:don't|do not|dont|never|"
    r"no one should|nobody should|you must not|you should not|you shouldn't|must not|"
    r"not to|不要|别|不准|禁止|不许|不能|绝不|不得|永远不要|切勿|" + eu.NEGATION + r")"
)
# Clauses end at sentence punctuation followed by a space or the end: the dots inside a URL or
# "os.system" do not end one.
_CLAUSE = re.compile(r"(?:[^.!?;\n。！？；]|[.!?;](?![\s]|$))+")


@dataclass(frozen=True, slots=True)
class PoisoningVerdict:
    """Whether a text tries to steer the system, and the acts found (for the audit log)."""

    flagged: bool
    acts: tuple[str, ...]


def judge(text: str) -> PoisoningVerdict:
    """Judge what `text` does; `flagged` means it must never become a rule or a preference.

    Encoded runs are decoded (bounded, see `encoded`) and judged too: an act found only there
    is reported as `encoded:<act>`.
    """
    acts = _acts(text)
    if not acts:
        for decoded in decoded_texts(_unhidden(text)):
            acts = tuple(f"encoded:{act}" for act in _acts(decoded))
            if acts:
                break
    return PoisoningVerdict(bool(acts), acts)


def _unhidden(text: str) -> str:
    """The text a decoder is given: NFKC, invisible characters dropped, look-alikes mapped.

    Case is kept (base64 depends on it), unlike in the skeleton.
    """
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return text.translate(_CONFUSABLES_CASED)


def _acts(text: str) -> tuple[str, ...]:
    s = skeleton(text)
    acts: dict[str, None] = {}
    for name, pattern in (("authority", AUTHORITY), ("pasted_output", FRAMING),
                          ("override", OVERRIDE)):  # fmt: skip
        if pattern.search(s):
            acts[name] = None
    for clause in _CLAUSE.findall(s):
        if _NEGATED.search(clause):
            continue
        for name, pattern in (("disclosure", DISCLOSURE), ("security", SECURITY),
                              ("credentials", CREDENTIALS), ("execution", EXECUTION)):  # fmt: skip
            if pattern.search(clause):
                acts[name] = None
        if OTHER_USERS.search(clause) and STANDING.search(clause):
            # A standing instruction that mentions other users is about how the assistant
            # treats them: never the speaker's preference to keep.
            acts["other_users"] = None
    return tuple(acts)
