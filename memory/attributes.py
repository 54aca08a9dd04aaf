"""Which attribute of the user a statement sets, and to what value (English and Chinese).

People rarely announce a correction: "I moved to Munich last month" after "I live in Berlin"
changes where they live without "actually". Two statements that set the same attribute
(residence, employer, editor, drink, diet, ...) to different values are an update whatever
their surface similarity; the same value is agreement. Each pattern is a plain alternation
with bounded gaps, so matching stays linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A value: the rest of the clause after the trigger, up to punctuation or a joining word.
_EN_VALUE = r"(?P<value>[^.,;:!?()\n]{1,60}?)"
_EN_END = (
    r"(?=\s+(?:now|these days|nowadays|since|last|this|from|for|in \d|at the|and|but|when|"
    r"every|each|because|after|before|instead|anymore)\b|\s*[.,;:!?()\n]|\s*$)"
)
_ZH_VALUE = r"(?P<value>[\u4e00-\u9fffA-Za-z0-9 ]{1,20}?)"
_ZH_END = r"(?=[了啦呢吧啊，。！？、；,.!?;\s]|工作|上班|$)"

# "I", "I'm", "we are": the subject before a trigger verb.
_SUBJECT = r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+"
# (attribute, pattern); the first pattern that matches a clause names its attribute.
_EN: tuple[tuple[str, str], ...] = (
    (
        "residence",
        _SUBJECT + r"(?:\w+\s+){0,2}?(?:live|lived|moved|relocated|living|"
        r"based|settled)\s+(?:back\s+)?(?:to|in|into)\s+(?:the\s+)?",
    ),
    ("residence", r"\bmy\s+(?:home|place|apartment|flat)\s+is\s+(?:now\s+)?in\s+"),
    (
        "employer",
        _SUBJECT + r"(?:\w+\s+){0,2}?(?:work|worked|working)\s+(?:at|for)\s+",
    ),
    ("employer", r"\bi\s+(?:\w+\s+){0,2}?(?:joined|started at|started working at)\s+"),
    ("employer", r"\bmy\s+(?:employer|company)\s+is\s+(?:now\s+)?"),
    ("role", r"\bi\s+(?:\w+\s+){0,2}?work\s+as\s+(?:an?\s+)?"),
    ("role", r"\bmy\s+(?:job|role|title)\s+is\s+(?:now\s+)?(?:an?\s+)?"),
    (
        "editor",
        r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?:use|code in|write code in|edit in)\s+"
        r"(?=(?:vim|neovim|emacs|vs ?code|visual studio|sublime|atom|intellij|pycharm|"
        r"webstorm|zed|cursor|helix|nano|xcode|eclipse)\b)",
    ),
    ("editor", r"\bmy\s+(?:\w+\s+)?(?:editor|ide)\s+is\s+(?:now\s+)?"),
    (
        "os",
        _SUBJECT + r"(?:\w+\s+){0,2}?(?:use|run|on)\s+"
        r"(?=(?:linux|ubuntu|fedora|arch|debian|windows|macos|mac|a mac|chromeos)\b)",
    ),
    (
        "programming_language",
        r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?:code|program|write|develop)\s+"
        r"(?:\w+\s+){0,2}?in\s+(?=[A-Za-z+#]+\b)",
    ),
    ("programming_language", r"\bmy\s+(?:main|primary|go-to)\s+language\s+is\s+(?:now\s+)?"),
    ("learning", r"\bi(?:'m| am)\s+(?:\w+\s+){0,1}?learning\s+"),
    (
        "drink",
        r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?:drink|have|start the day with|start my day with)\s+"
        r"(?=(?:\w+\s+)?(?:coffee|tea|matcha|espresso|water|juice|milk|latte|cocoa|kombucha)\b)",
    ),
    (
        "drink",
        r"\bmy\s+(?:morning|usual|daily|go-to)\s+drink\s+is\s+(?:now\s+)?",
    ),
    (
        "diet",
        r"\bi(?:'m| am)\s+(?:\w+\s+){0,1}?(?=(?:vegan|vegetarian|pescatarian|keto|paleo|"
        r"gluten-free|on a \w+ diet|eating meat)\b)",
    ),
    ("diet", r"\bi\s+(?:\w+\s+){0,1}?(?:eat|follow|keep)\s+(?:a\s+)?(?=\w+\s+diet\b)"),
    (
        "relationship",
        r"\bi(?:'m| am)\s+(?:\w+\s+){0,1}?(?=(?:single|married|engaged|divorced|dating|"
        r"in a relationship|seeing someone)\b)",
    ),
    ("partner", r"\bmy\s+(?:girlfriend|boyfriend|partner|wife|husband|fiancée?)\s+is\s+"),
    (
        "commute",
        r"\bi\s+(?:\w+\s+){0,2}?(?:commute|get to work|go to work)\s+(?:by|on)\s+",
    ),
    ("phone", r"\bmy\s+phone\s+is\s+(?:now\s+)?(?:an?\s+)?"),
    ("phone", r"\bi\s+(?:\w+\s+){0,1}?(?:use|have)\s+an?\s+(?=(?:iphone|pixel|galaxy|android)\b)"),
    ("car", r"\bi\s+(?:\w+\s+){0,1}?drive\s+(?:an?\s+)?"),
    # A schedule or a project's decision: the attribute is the thing being set.
    (
        "schedule:{thing}",
        r"\b(?:my|our|the)\s+(?P<thing>(?:\w+\s+){0,1}?(?:standup|stand-up|meeting|sync|"
        r"class|lesson|workout|gym session|run|review|call|session|practice))\s+"
        r"(?:is|are|happens|takes place|is now|moved to|has moved to)\s+(?:now\s+)?"
        r"(?:on|at|every)?\s*",
    ),
    (
        "decision:{thing}",
        r"\b(?:we|the team|our team|i)\s+(?:\w+\s+){0,2}?(?:use|uses|decided on|went with|"
        r"are going with|picked|chose|switched to|moved to)\s+"
        r"(?P<value>[A-Za-z0-9.+# -]{1,30}?)\s+(?:for|as)\s+(?:the\s+|our\s+|my\s+)?"
        r"(?P<thing>[a-z][a-z -]{1,30}?)(?=\s*[.,;:!?]|\s+(?:now|these days|since|from)\b|\s*$)",
    ),
)

_ZH: tuple[tuple[str, str], ...] = (
    ("residence", r"(?:住在|搬到了?|搬去了?|搬回了?|定居在|定居)"),
    ("commute", r"(?:坐|骑|开)(?=[\u4e00-\u9fff]{1,4}(?:上班|通勤))"),
    (
        "employer",
        (
            r"(?:(?<!现)在(?=[\u4e00-\u9fffA-Za-z0-9 ]{1,20}?(?:工作|上班))"
            r"|入职了?|跳槽到了?|加入了?)"
        ),
    ),
    (
        "editor",
        (r"(?:用|改用|换成|换用)" r"(?=(?:Vim|vim|Emacs|VS ?Code|vscode|PyCharm|IntelliJ|Cursor))"),
    ),
    ("drink", r"(?:喝|改喝|爱喝|喜欢喝)(?=[\u4e00-\u9fff]{0,2}(?:咖啡|茶|果汁|牛奶|豆浆|水))"),
    ("diet", r"(?:吃)(?=(?:素|肉|荤))"),
    ("diet", r"(?:是)(?=(?:素食者|纯素|吃素的))"),
    ("learning", r"(?:在学|学习|开始学)"),
    ("relationship", r"(?:我)(?:现在|已经)?(?=(?:单身|结婚|订婚|离婚|恋爱|有对象))"),
    ("partner", r"(?:女朋友|男朋友|对象|老婆|老公)(?:是|叫)"),
    (
        "schedule:{thing}",
        (
            r"(?P<thing>[\u4e00-\u9fff]{1,4}?(?:例会|周会|站会|会议|课|健身|跑步))"
            r"(?:改到|定在|挪到|在|是)"
        ),
    ),
)

_EN_COMPILED = tuple(
    (name, re.compile(pattern + ("" if "(?P<value>" in pattern else _EN_VALUE + _EN_END), re.I))
    for name, pattern in _EN
)
_ZH_COMPILED = tuple((name, re.compile(pattern + _ZH_VALUE + _ZH_END)) for name, pattern in _ZH)
# Someone other than the user as the subject of a Chinese clause.
_ZH_OTHER = re.compile(
    r"他|她|它|妈|爸|母|父|女儿|儿子|孩子|哥|姐|弟|妹|朋友|同事|老板|对象|老婆|老公"
)
_CLAUSE = re.compile(r"[^.;!?。；！？\n]+")
_FILLER = frozenset(
    "a an the my our now these days nowadays currently mostly mainly pretty much everything "
    "for all still just really full time full-time".split()
)
_ZH_FILLER = re.compile(r"^(?:了|在|到|去|回)+|(?:了|的|啦|呢|吧|工作|上班)+$")


@dataclass(frozen=True, slots=True)
class Setting:
    """One attribute a clause sets and the value it gives (normalised words)."""

    attribute: str
    value: str
    negative: bool


_NEGATIVE = re.compile(
    r"\b(?:don't|do not|no longer|not|never|stopped|quit|gave up)\b|不再|不|没|戒了", re.I
)


# A clause about a wish, a plan or the past states no current value: "I want to live in
# Munich", "I used to live in Munich", "我以前住在北京" must not replace where the user lives.
_NOT_NOW = re.compile(
    r"\b(?:want(?:s|ed)? to|would (?:like|love) to|'d (?:like|love) to|wish|hope|plan(?:s|ned)? to"
    r"|going to|gonna|thinking (?:of|about)|might|may|could|someday|one day|used to|before"
    r"|previously|formerly|back when|when i was|if)\b"
    r"|想|打算|希望|计划|准备|可能|以前|曾经|原来|过去|小时候|如果",
    re.I,
)


def settings(text: str) -> tuple[Setting, ...]:
    """Every attribute the statement's clauses set, at most one per clause."""
    out: list[Setting] = []
    for clause in _CLAUSE.findall(text.replace("’", "'")):
        if _NOT_NOW.search(clause):
            continue
        found = _match(clause)
        if found is not None:
            out.append(found)
    return tuple(out)


def _match(clause: str) -> Setting | None:
    cjk = any("\u4e00" <= ch <= "\u9fff" for ch in clause)
    for name, pattern in _ZH_COMPILED if cjk else _EN_COMPILED:
        hit = pattern.search(clause)
        if hit is None:
            continue
        if cjk and name != "partner" and _ZH_OTHER.search(clause[: hit.start()]):
            continue  # "我妈妈住在杭州" sets the mother's residence, not the user's
        value = _normalise(hit.group("value"), cjk)
        if not value:
            continue
        groups = hit.groupdict()
        thing = groups.get("thing")
        attribute = name.format(thing=_normalise(thing, cjk)) if thing else name
        # Only a negation before the trigger negates this setting ("tea, not coffee" does not).
        negative = bool(_NEGATIVE.search(clause[: hit.start("value")]))
        return Setting(attribute, value, negative)
    return None


def _normalise(value: str, cjk: bool) -> str:
    if cjk:
        return _ZH_FILLER.sub("", value.strip()).replace(" ", "").lower()
    words = [w for w in value.lower().replace("-", " ").split() if w not in _FILLER]
    return " ".join(words).replace("vs code", "vscode").replace("vs ", "vs")


def compare(new: str, old: str) -> tuple[str, str] | None:
    """`compare_settings` on two texts."""
    return compare_settings(settings(new), settings(old))


def compare_settings(
    mine: tuple[Setting, ...], theirs: tuple[Setting, ...]
) -> tuple[str, str] | None:
    """("update" | "agree", attribute) when the statements set a shared attribute, else None.

    An update is the same attribute, same polarity, a different value; the same value (or a
    negated old value next to the new one, "tea, not coffee") is agreement.
    """
    for a in mine:
        for b in theirs:
            if a.attribute != b.attribute:
                continue
            if a.negative != b.negative:
                # "I no longer live in Berlin" after "I live in Berlin": the value is withdrawn.
                return ("update", a.attribute) if a.value == b.value else None
            if a.value == b.value or a.value in b.value or b.value in a.value:
                return ("agree", a.attribute)
            return ("update", a.attribute)
    return None


# Questions that ask for an attribute's value: "where do I live?", "which editor do I use?",
# "我在哪里工作？". Plain alternations with bounded gaps, as the statement patterns.
_THINGS = (
    r"standup|stand-up|meeting|sync|class|lesson|workout|gym session|run|review|call|session|"
    r"practice"
)
_ASK_EN: tuple[tuple[str, str], ...] = (
    (
        "residence",
        r"\bwhere\s+(?:do|did|does|have)\s+(?:i|we)\s+(?:\w+\s+){0,2}?(?:live|lived|stay|reside)"
        r"|\bwhere\s+(?:am|was|were)\s+(?:i|we)\s+(?:living|based|staying)\b"
        r"|\bwhich\s+(?:city|town|country|place|neighbou?rhood)\b[^?.!]{0,40}?\b(?:live|lived|"
        r"living|home|based|reside|move|moved)\b|\bwhere(?:'s|\s+is|\s+was)\s+(?:my\s+)?home\b"
        r"|\bmy\s+(?:home\s*town|address|current\s+city)\b",
    ),
    (
        "employer",
        r"\bwhere\s+(?:do|did|does)\s+(?:i|we)\s+(?:\w+\s+){0,2}?work\b"
        r"|\bwho\s+(?:do|did)\s+i\s+work\s+for\b|\bwhere\s+(?:am|was)\s+i\s+working\b"
        r"|\b(?:which|what)\s+(?:company|employer|firm)\b|\bmy\s+(?:employer|company)\b",
    ),
    (
        "role",
        r"\bwhat\s+(?:do|did)\s+i\s+do\s+for\s+(?:a\s+)?(?:living|work)\b"
        r"|\bmy\s+(?:job\s+title|job|role|title|position)\b|\bwhat\s+(?:is|was)\s+my\s+job\b",
    ),
    ("editor", r"\b(?:editor|ide|code\s+editor)\b"),
    ("os", r"\b(?:operating\s+system|os)\b"),
    (
        "programming_language",
        r"\b(?:programming|coding|main)\s+language\b"
        r"|\bwhich\s+language\s+(?:do|did)\s+i\s+(?:code|program|write|use)\b",
    ),
    ("learning", r"\b(?:am|was)\s+i\s+learning\b|\bi(?:'m|\s+am|\s+was)\s+learning\b"),
    ("drink", r"\bdrink(?:s|ing)?\b"),
    ("diet", r"\b(?:diet|vegan|vegetarian|pescatarian|eat\s+meat)\b"),
    ("relationship", r"\b(?:relationship\s+status|single|married|engaged|divorced|dating)\b"),
    ("partner", r"\b(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?)\b"),
    ("commute", r"\b(?:commute|commuting|get\s+to\s+work|go\s+to\s+work)\b"),
    ("phone", r"\bphone\b"),
    ("car", r"\b(?:car|drive)\b"),
    (
        "schedule:{thing}",
        r"\b(?:when|what\s+time|which\s+day|what\s+day)\b[^?.!]{0,40}?\b(?:my|our|the)\s+"
        r"(?P<thing>(?:\w+\s+){0,1}?(?:" + _THINGS + r"))\b",
    ),
    (
        "decision:{thing}",
        r"\b(?:what|which)\s+(?:\w+\s+){0,2}?(?:do|did|does|are|were)\s+(?:we|i|the\s+team)\s+"
        r"(?:\w+\s+){0,1}?(?:use|using|pick|picked|choose|chose|go\s+with|went\s+with)\s+"
        r"(?:for|as)\s+(?:the\s+|our\s+|my\s+)?(?P<thing>[a-z][a-z -]{1,30}?)(?=\s*[?.!]|\s*$)",
    ),
)
_ASK_ZH: tuple[tuple[str, str], ...] = (
    ("residence", r"住在?哪|住在什么地方|住在哪个城市|家在哪|在哪个城市(?:生活|住)"),
    ("employer", r"在哪(?:里|儿|家公司)?(?:工作|上班)|哪家公司|什么公司|工作单位"),
    ("role", r"做什么工作|什么职位|职位是|什么职务"),
    ("editor", r"编辑器|IDE|ide"),
    ("drink", r"喝什么|喝的是|喝哪|什么饮料"),
    ("diet", r"吃素|饮食|吃肉|吃荤"),
    ("relationship", r"单身|结婚|恋爱|婚姻|订婚"),
    ("partner", r"女朋友|男朋友|对象|老婆|老公"),
    ("commute", r"通勤|怎么(?:去)?上班"),
    ("learning", r"在学|学什么"),
    (
        "schedule:{thing}",
        r"(?P<thing>[\u4e00-\u9fff]{0,2}?(?:例会|周会|站会|会议|课|健身|跑步))"
        r"(?:是|定在|改到)?(?:几点|什么时候|哪天|星期几|周几)",
    ),
)
_ASK_EN_COMPILED = tuple((name, re.compile(p, re.I)) for name, p in _ASK_EN)
_ASK_ZH_COMPILED = tuple((name, re.compile(p)) for name, p in _ASK_ZH)


def asked_attributes(question: str) -> frozenset[str]:
    """The attributes whose value a question asks for (empty for any other text)."""
    cjk = any("\u4e00" <= ch <= "\u9fff" for ch in question)
    found = set()
    for name, pattern in (*_ASK_EN_COMPILED, *(_ASK_ZH_COMPILED if cjk else ())):
        hit = pattern.search(question.replace("’", "'"))
        if hit is None:
            continue
        thing = hit.groupdict().get("thing")
        found.add(name.format(thing=_normalise(thing, cjk)) if thing else name)
    return frozenset(found)
