"""Which attribute of the user a statement sets, and to what value (English and Chinese).

People rarely announce a correction: "I moved to Munich last month" after "I live in Berlin"
changes where they live without "actually". Two statements that set the same attribute
(residence, employer, editor, drink, diet, ...) to different values are an update whatever
their surface similarity; the same value is agreement. Each pattern is a plain alternation
with bounded gaps, so matching stays linear in the text.

The patterns read classes of phrasing rather than sentences: the possessive copula both ways
("my X is Y", "Y has become my X", "我的X是Y"), a product whose class names the attribute (an
editor, a phone, a notes app), move and switch verbs with an object ("switched my notes to",
"把X迁到Y"), schedules whose value is a day or a time, and decisions whose things share a word.
Questions are read the same way: a question word and a noun that names an attribute.
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
_ZH_END = r"(?=[了啦呢吧啊，。！？、；,.!?;\s]|工作|上班|生活|定居|读|做|来|写|里|$)"

# "I", "I'm", "we are": the subject before a trigger verb.
_SUBJECT = r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+"
# Products whose class names the attribute: "I read on a Kindle", "I do all my C# in Visual
# Studio" set the e-reader and the editor whatever verb carries them.
_PRODUCTS_EN: tuple[tuple[str, str], ...] = (
    (
        "editor",
        r"vim|neovim|emacs|vs ?code|visual studio(?: code)?|sublime(?: text)?|intellij(?: idea)?|"
        r"pycharm|webstorm|(?:jetbrains )?rider|zed|cursor|helix|xcode|eclipse",
    ),
    ("laptop", r"thinkpad|macbook|mac book|surface laptop|dell xps"),
    ("phone", r"iphone|pixel|galaxy|oneplus|xiaomi|huawei"),
    ("notes", r"evernote|notion|obsidian|onenote|apple notes|logseq"),
    ("ereader", r"kindle|kobo|nook|pocketbook"),
    ("database", r"postgres(?:ql)?|mysql|mongodb|cockroachdb|tidb|sqlite|dynamodb|mariadb"),
)
# Who the user's possessions and relations are named by: "my boss", "my IDE", "我的领导".
# Nouns not listed name their own attribute ("my favourite band" -> favourite band).
_NOUN_ATTRIBUTE: dict[str, str] = {
    **dict.fromkeys(["home", "city", "place", "hometown", "家"], "residence"),
    **dict.fromkeys(
        [
            "manager",
            "boss",
            "line manager",
            "lead",
            "supervisor",
            "team lead",
            "领导",
            "经理",
            "直属领导",
            "老板",
            "上司",
            "主管",
            "leader",
        ],
        "manager",
    ),
    **dict.fromkeys(["editor", "ide", "code editor", "编辑器"], "editor"),
    **dict.fromkeys(["phone", "mobile", "smartphone", "daily phone", "手机"], "phone"),
    **dict.fromkeys(["laptop", "computer", "笔记本", "电脑", "笔记本电脑"], "laptop"),
    **dict.fromkeys(["notes", "note app", "notes app", "note taking app", "笔记"], "notes"),
    **dict.fromkeys(["team", "团队", "组"], "team_size"),
    **dict.fromkeys(
        [
            "language",
            "main language",
            "programming language",
            "primary language",
            "go to language",
            "主力语言",
            "编程语言",
            "语言",
        ],
        "programming_language",
    ),
    **dict.fromkeys(["university", "uni", "school", "college", "学校", "大学"], "university"),
    **dict.fromkeys(["e reader", "ereader", "reader"], "ereader"),
    **dict.fromkeys(["employer", "company", "公司"], "employer"),
    **dict.fromkeys(["job", "role", "title", "position", "工作", "职位"], "role"),
    **dict.fromkeys(["drink", "morning drink", "饮料"], "drink"),
    **dict.fromkeys(["car", "车"], "car"),
    **dict.fromkeys(["database", "db", "数据库"], "database"),
    **dict.fromkeys(["code", "main language", "代码"], "programming_language"),
    **dict.fromkeys(["bedtime"], "bedtime"),
    **dict.fromkeys(["relationship status", "感情状态"], "relationship"),
}
_EN_NOUN = r"(?P<noun>(?:[a-z-]{1,24}\s+){0,2}?[a-z-]{1,24})"
_THINGS_WORDS = (
    r"standup|stand-up|meeting|sync|class|lesson|workout|gym session|run|review|call|session|"
    r"practice|planning|retro|retrospective|demo|one-on-one|1:1"
)
# (attribute, pattern); the first pattern that matches a clause names its attribute.
_EN: tuple[tuple[str, str], ...] = (
    *(
        (
            name,
            r"\b(?:use|using|uses|in|on|to|with|got|bought|have|over|onto|into|is|are|"
            r"switched|moved)\s+(?:an?\s+|the\s+|my\s+|new\s+)?(?=(?:" + words + r")\b)",
        )
        for name, words in _PRODUCTS_EN
    ),
    # The possessive copula both ways: "my X is Y", "Y is my X", "Y has become my X".
    (
        "{noun}",
        r"\bmy\s+" + _EN_NOUN + r"\s+(?:is|are|has|have|live|lives|has become)\s+"
        r"(?:now\s+|still\s+)?(?:in\s+|with\s+|an?\s+)?",
    ),
    (
        "{noun}",
        # Anchored, with bounded space runs: an unbounded run on both sides of the lazy value
        # retried every split of a long run of spaces (quadratic).
        r"^\s{0,8}(?P<value>[^,;:]{1,40}?)\s{1,8}(?:is|are|has become|have become|"
        r"has been|is now|became|was)\s{1,8}(?:now\s+)?my\s+"
        + _EN_NOUN
        + r"(?=\s*[.,;:!?]|\s+(?:now|these days|nowadays|lately|since|for|from)\b|\s*$)",
    ),
    ("residence", r"^\s{0,8}home\s+(?:is|has been)\s+(?:now\s+)?"),
    (
        "residence",
        r"^\s{0,8}(?P<value>[^,;:]{1,30}?)\s{1,8}(?:is|has been)\s{1,8}(?:now\s+)?"
        r"(?:my\s+)?home\b",
    ),
    # A move or switch of a named thing: "I switched my notes over to Obsidian".
    (
        "{noun}",
        r"\b(?:i|we)(?:'ve|'re)?\s+(?:\w+\s+){0,1}?(?:switched|moved|changed|migrated)\s+"
        r"(?:all\s+)?(?:my|our)\s+" + _EN_NOUN + r"\s+(?:over\s+)?to\s+",
    ),
    ("employer", r"\bfirst\s+(?:week|day|month)\s+(?:at|with)\s+"),
    (
        "employer",
        r"\bi(?:'m|\s+am)\s+(?:an?\s+)(?:[\w-]+\s+){1,3}?(?:at|for)\s+(?=[A-Z])",
    ),
    ("residence", r"\bi(?:'m|\s+am)\s+(?:now\s+)?based\s+(?:in|out of)\s+"),
    (
        "residence",
        r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+(?:now\s+)?rent(?:ing)?\s+(?:a|an|our|my)\s+"
        r"(?:place|flat|apartment|house|room|studio)\s+in\s+",
    ),
    # The size of the user's team: "the team is twelve people now", "my team has seven".
    (
        "team_size",
        r"\b(?:my|our|the)\s+team\s+(?:is|has|now has|is now|grew to|shrank to)\s+(?:now\s+)?"
        r"(?=(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
        r"fourteen|fifteen|twenty|thirty|a dozen)\b)",
    ),
    # When the user goes to bed: "I go to bed around 1am", "I'm in bed by 10:30".
    (
        "bedtime",
        r"\bi(?:'m|\s+am)?\s+(?:\w+\s+){0,1}?(?:go to bed|go to sleep|fall asleep|in bed|asleep|"
        r"sleep)\s+(?:at|around|by|about|before)\s+",
    ),
    ("manager", r"\bi\s+(?:now\s+)?report\s+(?:directly\s+)?to\s+"),
    (
        "university",
        r"\bi(?:'m|\s+am)?\s+(?:\w+\s+){0,1}?(?:studying|study|transferred|started a phd|"
        r"started a master's|started uni)\s+(?:[\w-]+\s+){0,2}?(?:at|to)\s+(?:the\s+)?",
    ),
    (
        "residence",
        _SUBJECT + r"(?:\w+\s+){0,2}?(?:live|lived|moved|relocated|living|"
        r"based|settled)\s+(?:back\s+|out\s+)?(?:to|in|into)\s+(?:the\s+)?",
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
    (
        "programming_language",
        r"\bi\s+(?:\w+\s+){0,1}?(?:write|code)\s+(?=[A-Z][\w+#]{0,20}\s+(?:scripts|code|services|apps)\b)",
    ),
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
        r"\bi(?:'m| am|'ve been| have been| went| became)\s+(?:\w+\s+){0,1}?"
        r"(?=(?:vegan|vegetarian|pescatarian|keto|paleo|"
        r"gluten-free|on a \w+ diet|eating meat)\b)",
    ),
    ("diet", r"\bi\s+(?:\w+\s+){0,1}?(?:eat|follow|keep)\s+(?:a\s+)?(?=\w+\s+diet\b)"),
    (
        "relationship",
        r"\b(?:i|we)(?:'m| am|'re| are|'ve been| have been| got)\s+(?:\w+\s+){0,1}?"
        r"(?=(?:single|married|engaged|divorced|dating|in a relationship|seeing someone)\b)",
    ),
    # A break-up or living alone ends the earlier status: "we split up", "I'm on my own".
    ("relationship", r"\b(?:i|we)\s+(?=(?:broke up|split up|separated)\b)"),
    ("relationship", r"\bi(?:'m|\s+am)\s+(?:\w+\s+){0,1}?(?=(?:on my own|by myself)\b)"),
    ("partner", r"\bmy\s+(?:girlfriend|boyfriend|partner|wife|husband|fiancée?)\s+is\s+"),
    (
        "commute",
        r"\bi\s+(?:\w+\s+){0,2}?(?:commute|get to work|go to work)\s+(?:by|on)\s+",
    ),
    # "I take the ferry to work", "I walk to the office": the means is the value.
    (
        "commute",
        r"\bi\s+(?:\w+\s+){0,1}?(?:take|ride|catch)\s+(?:the\s+|a\s+|my\s+)?"
        r"(?P<value>[a-z]+)\s+(?:in\s+)?to\s+(?:work|the office)\b",
    ),
    (
        "commute",
        r"\bi\s+(?:\w+\s+){0,1}?(?P<value>walk|cycle|bike|drive|run|scooter)\s+"
        r"(?:in\s+)?to\s+(?:work|the office)\b",
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
    # A recurring thing whose value is a day or a time: "sprint planning happens Wednesdays".
    (
        "schedule:{thing}",
        r"\b(?P<thing>(?:[a-z-]{1,24}\s+){0,2}?[a-z-]{1,24})\s+(?:is|are|happens|happen|"
        r"takes place|moved to|has moved to|is now|now happens|starts|start)\s+(?:now\s+|still\s+)?"
        r"(?:on\s+|at\s+|every\s+)?(?=(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|"
        r"saturdays?|sundays?|noon|midnight|\d{1,2}(?::\d\d)?\s*(?:am|pm)?)\b)",
    ),
    (
        "schedule:{thing}",
        r"\b(?:we|i)\s+(?:\w+\s+){0,1}?(?:hold|have|run|do)\s+(?:the\s+|our\s+)?"
        r"(?P<thing>(?:[a-z-]{1,24}\s+){0,1}?(?:" + _THINGS_WORDS + r"))\s+(?:at|on|every)\s+",
    ),
    # A decision that names the thing and the new value: "we decided to expose the API over
    # GraphQL", "the platform team moved our deploys to GitHub Actions".
    (
        "decision:{thing}",
        r"\b(?:decided|agreed|chose)\s+to\s+\w+\s+(?:the\s+|our\s+|all\s+our\s+)?"
        r"(?P<thing>(?:[a-z-]{1,24}\s+){0,2}?[a-z-]{1,24})\s+(?:over|on|with|to|in|as)\s+",
    ),
    (
        "decision:{thing}",
        r"\b(?:moved|migrated|switched|changed)\s+(?:all\s+)?(?:of\s+)?(?:the\s+|our\s+)"
        r"(?P<thing>(?:[a-z-]{1,24}\s+){0,1}?[a-z-]{1,24})\s+(?:over\s+)?to\s+",
    ),
    ("decision:{thing}", r"\bwe\s+(?P<thing>deploy|host|build|test|ship)\s+(?:with|on|via)\s+"),
    (
        "decision:{thing}",
        r"\b(?:our|the)\s+(?P<thing>(?:[a-z-]{1,24}\s+){0,1}?(?:api|stack|framework|database|db|"
        r"backend|frontend|ci|cd|protocol|architecture|language|cloud|platform|app|service|client|"
        r"auth|cache|queue|orm|pipeline))\s+"
        r"(?:is|runs on)\s+(?:now\s+)?",
    ),
    (
        "decision:{thing}",
        r"\b(?:we|the team|our team|i)(?:'re|'ve)?\s+(?:\w+\s+){0,2}?(?:use|uses|decided on|"
        r"went with|are going with|going with|picked|chose|switched to|moved to)\s+"
        r"(?P<value>[A-Za-z0-9.+# -]{1,30}?)\s+(?:for|as)\s+(?:the\s+|our\s+|my\s+)?"
        r"(?P<thing>[a-z][a-z -]{1,30}?)(?=\s*[.,;:!?]|\s+(?:now|these days|since|from)\b|\s*$)",
    ),
)

_PRODUCTS_ZH: tuple[tuple[str, str], ...] = (
    ("editor", r"(?i:vim|neovim|emacs|vs ?code|visual studio|sublime|pycharm|intellij|cursor|zed)"),
    ("laptop", r"(?i:thinkpad|macbook|小新|拯救者|联想|matebook)"),
    ("phone", r"(?i:iphone|华为|小米|vivo|oppo|三星|荣耀|一加|pixel|苹果手机)"),
    ("notes", r"(?i:印象笔记|飞书文档|语雀|notion|obsidian|onenote|有道云笔记)"),
    ("database", r"(?i:postgres(?:ql)?|mysql|mongodb|tidb|oceanbase|sqlite)"),
)
# The reading by meaning's name for each product class (`memory/attribute_prototypes.json`).
_PRODUCT_ATTRIBUTE = {
    "editor": "editor",
    "laptop": "computer",
    "phone": "phone",
    "database": "tech_decision",
}
_PRODUCT_NAMES = tuple(
    (_PRODUCT_ATTRIBUTE[name], re.compile(rf"\b(?:{words})\b", re.I))
    for name, words in _PRODUCTS_EN
    if name in _PRODUCT_ATTRIBUTE
) + tuple(
    (_PRODUCT_ATTRIBUTE[name], re.compile(words))
    for name, words in _PRODUCTS_ZH
    if name in _PRODUCT_ATTRIBUTE
)


def products_named(text: str) -> frozenset[str]:
    """Attributes (the reading by meaning's names) whose products `text` names ("Zed": editor)."""
    return frozenset(name for name, pattern in _PRODUCT_NAMES if pattern.search(text[:2000]))


_ZH_NOUN = r"(?P<noun>[\u4e00-\u9fff]{1,6}?)"
_ZH_THINGS = r"例会|周会|站会|早会|晨会|会议|课|健身|跑步|周报|日报|月报|评审|复盘"
_ZH: tuple[tuple[str, str], ...] = (
    *(
        (
            name,
            r"(?:用|用的是|换成了?|换了一[台部个]|改用|拿的是|是|在|到|开的是|定了用|迁到了?)"
            r"\s*(?:一[台部辆个])?\s*(?=" + words + r")",
        )
        for name, words in _PRODUCTS_ZH
    ),
    # A recurring thing and its new time: "周报改成周一上午交", "早会定在九点半".
    (
        "schedule:{thing}",
        r"(?P<thing>[\u4e00-\u9fff]{0,4}?(?:" + _ZH_THINGS + r"))[^，。]{0,8}?"
        r"(?:改到|改成|定在|挪到|放在|调到|是)",
    ),
    (
        "schedule:{thing}",
        r"(?P<thing>[\u4e00-\u9fff]{0,4}?(?:" + _ZH_THINGS + r"))"
        r"(?=每|周[一二三四五六日天]|星期|礼拜|[一二三四五六七八九十两\d]{1,4}点)",
    ),
    # The possessive copula both ways and its change: "我的领导是X", "我的经理换成了X".
    (
        "{noun}",
        r"我(?:们)?(?:最喜欢|最爱|现在)?的"
        + _ZH_NOUN
        + r"(?:是|换成了?|改成了?|转到了?|变成了?|迁到了?|叫)",
    ),
    (
        "{noun}",
        r"^(?P<value>[\u4e00-\u9fffA-Za-z0-9 ]{1,12}?)(?:是|成了)我(?:们)?(?:最喜欢|最爱)?的"
        + _ZH_NOUN
        + r"(?=[了，。！？,.!?]|$)",
    ),
    # A decision: "把X迁到Y", "X定为Y", "用Y(来)管理X".
    (
        "decision:{thing}",
        r"把(?P<thing>[\u4e00-\u9fffA-Za-z]{1,8}?)(?:迁到|换成|改成|改到|转到)了?",
    ),
    ("decision:{thing}", r"(?P<thing>[\u4e00-\u9fffA-Za-z]{1,10}?)(?:定为|定成|改为)"),
    (
        "decision:{thing}",
        r"(?:用|改用|选了|选用|定了用)\s*(?P<value>[A-Za-z0-9\u4e00-\u9fff.+#-]"
        r"[A-Za-z0-9\u4e00-\u9fff .+#-]{0,14}?)\s*来?(?:管理|写|做|跑|部署|存|实现|开发)"
        r"(?P<thing>[\u4e00-\u9fffA-Za-z]{1,8}?)(?=[了，。！？,.!?;；\s]|$)",
    ),
    ("programming_language", r"写\s*(?=[A-Z][A-Za-z+#]{0,20})"),
    ("manager", r"向(?P<value>[\u4e00-\u9fffA-Za-z]{1,6}?)汇报"),
    ("relationship", r"我和(?P<value>[\u4e00-\u9fffA-Za-z]{1,6}?)在一起"),
    ("relationship", r"(?:领证)?(?=(?:结婚|订婚|离婚|分手)了)"),
    # Dating and living alone are statuses too: "在谈恋爱", "一个人过".
    ("relationship", r"(?:在谈(?=(?:异地)?恋爱?)|(?=一个人过|单身))"),
    ("diet", r"(?=纯素|全素)"),
    # The size of the user's team: "我们组一共五个人", "组里现在有二十人".
    (
        "team_size",
        r"(?:组|团队|组里|我们)[^，。]{0,4}?(?:一共|共|现在有|有|只剩|剩下?)了?"
        r"(?=[一二三四五六七八九十两百\d]{1,4}个?人)",
    ),
    (
        "bedtime",
        r"(?P<value>(?:凌晨|晚上|半夜)?[一二三四五六七八九十两\d]{1,4}点半?)[前左右]{0,2}"
        r"(?:才|就)?(?:睡|上床)",
    ),
    ("car", r"(?:我|现在|如今|改|还在)开(?!会|始|心|发|车|着|了|学|玩笑|完)"),
    ("university", r"(?:(?<!现)在|去了?|考上了?|转到了?)(?=[^，。]{1,10}?(?:读|上学|念书|上大学))"),
    ("employer", r"去了(?=[^，。]{1,12}?[，,]?[^。]{0,8}?(?:做|上班|工作))"),
    (
        "residence",
        r"(?:(?<!现)在(?=[^，。]{1,10}?生活)|(?<!把)迁到了?|回了?(?:老家)?(?=[^，。]{1,8}?定居))",
    ),
    # How the user gets to work comes first: "公司搬到家附近以后，我走路上班" is no move.
    ("commute", r"(?:坐|骑|开)(?=[\u4e00-\u9fff]{1,4}(?:上班|通勤))"),
    ("commute", r"(?=(?:走路|步行)(?:上班|通勤|去公司))"),
    ("residence", r"(?:住在|搬到了?|搬去了?|搬回了?|定居在|定居)"),
    (
        "employer",
        (
            r"(?:(?<!现)在(?=[\u4e00-\u9fffA-Za-z0-9 ]{1,20}?(?:工作|上班|做))"
            r"|入职了?|跳槽到了?|加入了?)"
        ),
    ),
    (
        "editor",
        (r"(?:用|改用|换成|换用)" r"(?=(?:Vim|vim|Emacs|VS ?Code|vscode|PyCharm|IntelliJ|Cursor))"),
    ),
    (
        "drink",
        r"(?:喝|改喝|爱喝|喜欢喝)(?=(?:一[杯瓶罐])?[\u4e00-\u9fff]{0,2}(?:咖啡|茶|果汁|牛奶|豆浆|水))",
    ),
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
_ZH_COMPILED = tuple(
    (name, re.compile(pattern + ("" if "(?P<value>" in pattern else _ZH_VALUE + _ZH_END)))
    for name, pattern in _ZH
)
# Someone other than the user as the subject of a Chinese statement: at the start of its first
# clause, after "我(的)" or up to two characters of a name ("刘姐"), so a person named later as
# the object ("仓鼠送给表妹了") is not the subject.
_ZH_OTHER = re.compile(
    r"^(?:我们?的?|我家的?|咱们?的?)?(?P<who>[\u4e00-\u9fff]{0,2}?"
    r"(?:他|她|它|妈|爸|母|父|女儿|儿子|孩子|哥|姐|弟|妹|朋友|同事|老板|对象|老婆|老公|邻居|同学"
    r"|室友|老师|队友|奶奶|爷爷|外婆|外公|姥姥|姥爷|舅舅|叔叔|阿姨|姑姑|侄子|侄女|外甥|亲戚|闺蜜"
    r"|男友|女友))"
)
_ZH_CLAUSE_END = re.compile(r"[，。；！？,.;!?\s]")
# A full stop inside a token ("D.C", "3.5") or after an initial ("Fontaines D.") ends nothing.
# Someone other than the user as the subject of an English clause (the user's "I" resets it).
# "My best friend", "my older sister", "our new neighbours": up to two words between.
_EN_OTHER = re.compile(
    r"\b(?:(?:my|our)\s+(?:[a-z-]+\s+){0,2}?(?:mother|mom|mum|father|dad|parents?|sister|"
    r"brother|siblings?|wife|husband|partner|fianc[eé]e?|girlfriend|boyfriend|kids?|children|"
    r"son|daughter|cousins?|aunt|auntie|uncle|niece|nephew|grand(?:ma|pa|mother|father|parents?|"
    r"son|daughter|kids?|children)|nan|gran|in-laws|friends?|mates?|pals?|buddy|colleagues?|"
    r"co-?workers?|teammates?|classmates?|housemates?|neighbou?rs?|boss|manager|roommate|"
    # "They bumped me to test lead": the user is the one it happens to.
    r"flatmate)|(?:he|she|they)(?!\s+[a-z]+\s+me\b)|his|her|their)\b(?![^,;]{0,60}\bi\b)",
    re.I,
)
_CLAUSE = re.compile(r"(?:[^.;!?。；！？\n]|\.(?=\S)|(?<=\b[A-Z])\.)+")
_FILLER = frozenset(
    "a an the my our now these days nowadays currently mostly mainly pretty much everything "
    "for all still just really full time full-time".split()
)
_ZH_FILLER = re.compile(
    r"^(?:了|在|到|去|回|老家|一[台部辆个杯条只])+|(?:了|的|啦|呢|吧|工作|上班|生活|定居)+$"
)


def not_current(text: str) -> bool:
    """Whether the statement is a wish, a plan or the past: it states no current value.

    "I want to live in Munich", "我以前住在北京".
    """
    return bool(_NOT_NOW.search(text))


# A clause of a statement: up to a comma, semicolon or sentence end (not a dot inside "D.C.").
_SEGMENT = re.compile(r"[^,，;；。！？!?.]+(?:\.(?=\S)[^,，;；。！？!?.]*)*")


def current_part(text: str) -> str:
    """The statement up to its first clause about a wish, a plan or the past ("" from the first).

    "预算加到二十万了，厨房想弄好一点" sets the budget now, and the wish after it sets
    nothing; "If I get the job, I'll move to Munich" and "I used to live in Munich" set nothing.
    """
    for match in _SEGMENT.finditer(text):
        if _NOT_NOW.search(match.group(0)):
            return text[: match.start()].rstrip(" ,，;；")
    return text


def first_clause(text: str) -> str:
    """The statement's first clause ("Got engaged in Lisbon" of "Got engaged in Lisbon!! Wow")."""
    found = _SEGMENT.search(text)
    return found.group(0).strip() if found else ""


def someone_else(text: str) -> str | None:
    """Who the statement is about when that is not the user ("my sister", "他", "刘姐").

    "my sister lives in Paris", "我妈妈住在杭州" set their attribute, not the user's.
    """
    if any("\u4e00" <= ch <= "\u9fff" for ch in text):
        head = text[:24]
        end = _ZH_CLAUSE_END.search(head)
        found = _ZH_OTHER.match(head[: end.start()] if end else head)
        return found.group("who") if found else None
    match = _EN_OTHER.search(text[:200])
    return match.group(0).split()[-1].lower() if match else None


def about_someone_else(text: str) -> bool:
    """Whether the statement's subject is someone other than the user (`someone_else`)."""
    return someone_else(text) is not None


def different_subjects(new: str, old: str) -> bool:
    """Whether two statements are about different people, so one cannot replace the other.

    A statement about someone the other one names is about the same person:
    "刘姐调去别的部门了" after "我的直属领导是刘姐", "女儿这学期转学了" after
    "我女儿在实验小学读书"; "my brother lives in Ottawa now" after "I live in Toronto" is not.
    """
    theirs, mine = someone_else(new), someone_else(old)
    if theirs is None and mine is None:
        return False
    # "She started reception at St Mary's" after "My daughter goes to Little Acorns": a pronoun
    # is the person just named; "儿子" after "孩子" is one of the same kin.
    if theirs is not None and mine is not None and _same_person(theirs, mine):
        return False
    return not (
        (theirs is not None and _names_person(old, theirs))
        or (mine is not None and _names_person(new, mine))
    )


_PRONOUNS = frozenset("he she they his her their 他 她 它".split())
_KIN = (
    frozenset("kid kids son daughter child children 孩子 儿子 女儿 娃 闺女 宝宝".split()),
    frozenset(
        "wife husband partner girlfriend boyfriend fiance fiancé fiancee fiancée 对象 老婆 老公 "
        "男友 女友 男朋友 女朋友".split()
    ),
    frozenset("boss manager 老板 领导".split()),
)
# A name that opens a statement is its subject: "Priya left the company, so I report to Tom".
_NAME_FIRST = re.compile(r"(?i:(?:actually|so|well|and|but|oh),?\s+)?(?P<name>[A-Z][a-z]{2,20})\b")


def _same_person(who: str, other: str) -> bool:
    """Whether two words for someone can mean one person: a pronoun, or one kin ("孩子", "儿子")."""
    if who in _PRONOUNS or other in _PRONOUNS:
        return True

    def kin(word: str) -> set[int]:
        # A Chinese kin word may carry more characters ("我儿子", "大女儿").
        return {
            i
            for i, group in enumerate(_KIN)
            for w in group
            if w == word or (not w.isascii() and w in word)
        }

    return bool(kin(who) & kin(other))


def opens_with_a_name_of(new: str, old: str) -> bool:
    """Whether `new` opens with a name that `old` holds inside a sentence ("... is Priya.")."""
    found = _NAME_FIRST.match(new.lstrip()[:200])
    if found is None:
        return False
    inside = rf"(?<=[\w,;:] ){re.escape(found.group('name'))}\b"
    return re.search(inside, old[:400]) is not None


def _names_person(text: str, who: str) -> bool:
    if who.isascii():
        return re.search(rf"\b{re.escape(who)}\b", text[:400], re.I) is not None
    return who in text


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
    r"|going to|gonna|thinking (?:of|about)|might|(?<!in )(?<!of )may|could|someday|one day"
    # "getting used to the prices" is being accustomed, not a habit given up.
    r"|(?<!getting )(?<!get )(?<!got )(?<!gotten )(?<!am )(?<!'m )(?<!be )(?<!been )used to|before"
    r"|previously|formerly|back when|when i was|if)\b"
    r"|(?<![理思感梦幻联构猜])想|打算|希望|计划|准备|可能|以前|曾经|原来|过去|小时候|如果|假如"
    r"|(?<![一二三四五六七八九十两百千0-9])万一|(?<![主只不需])要是",
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
        if (
            cjk
            and name not in ("partner", "relationship")
            and _ZH_OTHER.search(clause[: hit.start()])
        ):
            continue  # "我妈妈住在杭州" sets the mother's residence, not the user's
        if (
            not cjk
            and name not in ("partner", "relationship")
            and _EN_OTHER.search(clause[: hit.start()])
        ):
            continue  # "my sister uses an iPhone" sets the sister's phone, not the user's
        copula = name == "{noun}" or _MY_COPULA.search(clause[hit.start() : hit.start("value")])
        if copula and not _names_a_value(clause, hit.start("value"), hit.group("value")):
            continue  # "my manager is great" judges the manager, it names no new one
        value = _normalise(hit.group("value"), cjk)
        if not value:
            continue
        groups = hit.groupdict()
        thing = groups.get("thing")
        if groups.get("noun") is not None:
            attribute = _canon(groups["noun"], cjk)
        elif thing:
            attribute = name.format(thing=_thing(thing, cjk))
        else:
            attribute = name
        # Only a negation before the trigger, in the same comma part, negates this setting
        # ("tea, not coffee" does not; nor "奶茶戒了，现在喝柠檬水").
        start = hit.start("value")
        part = max(clause.rfind(",", 0, start), clause.rfind("，", 0, start)) + 1
        negative = bool(_NEGATIVE.search(clause[part:start]))
        return Setting(attribute, value, negative)
    return None


_THING_FILLER = frozenset("a an the my our your team's daily weekly whole".split())
_ZH_THING_FILLER = re.compile(
    r"^(?:我们组的|我们的|我的|项目的|团队的|每天的|每周的|我们|组里|把|现在|目前"
    r"|从[\u4e00-\u9fff]{1,5}?起)+"
)
# One name for a recurring meeting however it is called: "standup", "daily sync", "早会".
_THING_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        ["stand up", "stand-up", "daily sync", "daily standup", "daily", "早会", "站会", "晨会"],
        "standup",
    ),
}


def _canon(noun: str, cjk: bool) -> str:
    """The attribute a possessed noun names: "boss" -> manager, "favourite band" as itself."""
    words = _normalise(noun, cjk)
    if cjk:
        words = _ZH_THING_FILLER.sub("", words)
        words = re.sub(r"^(?:现在的|现在|目前的|主要的)", "", words)
    if words in _NOUN_ATTRIBUTE:
        return _NOUN_ATTRIBUTE[words]
    last = words.split()[-1] if words.split() else words
    return _NOUN_ATTRIBUTE.get(last, words)


def _thing(thing: str, cjk: bool) -> str:
    """A scheduled or decided thing without determiners, plural or synonym."""
    plain = _normalise(thing, cjk)
    for name, canonical in _THING_SYNONYMS.items():
        if name in plain:
            return canonical
    if cjk:
        words = _ZH_THING_FILLER.sub("", _normalise(thing, cjk))
    else:
        kept = [w.rstrip("s") if len(w) > 3 else w for w in _normalise(thing, cjk).split()]
        words = " ".join(w for w in kept if w not in _THING_FILLER)
    for name, canonical in _THING_SYNONYMS.items():
        if name in words:
            return canonical
    return words


# A possessive copula names a value when it is a name, a number or a noun with an article
# ("my phone is a Pixel", "my team is four engineers"), not an opinion ("my boss is great").
_NAMED_EN = re.compile(
    r"^\s*(?:(?:now|still)\s+)?(?:[A-Z0-9]|(?:one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|twenty|thirty|a dozen)\b)"
)
_MY_COPULA = re.compile(r"\bmy\s+(?:\w+\s+){0,2}?(?:is|are)\s+(?:now\s+)?(?:an?\s+)?$", re.I)
_ARTICLE_BEFORE = re.compile(r"\b(?:an?|the)\s+$", re.I)
_OPINION_ZH = re.compile(r"^(?:很|挺|太|非常|比较|特别|有点|超)|的$")


def _names_a_value(clause: str, start: int, value: str) -> bool:
    if any("\u4e00" <= ch <= "\u9fff" for ch in clause):
        return not _OPINION_ZH.search(clause[start:].strip())
    return bool(_NAMED_EN.match(value) or _ARTICLE_BEFORE.search(clause[max(0, start - 8) : start]))


def _normalise(value: str, cjk: bool) -> str:
    if cjk:
        return _ZH_FILLER.sub("", value.strip()).replace(" ", "").lower()
    words = [w for w in value.lower().replace("-", " ").split() if w not in _FILLER]
    return " ".join(words).replace("vs code", "vscode").replace("vs ", "vs")


def same_attribute(a: str, b: str) -> bool:
    """Equal attributes, or a schedule or decision whose things share a word.

    "state management" and "state", "需求" and "需求管理" name one decided thing; the
    kind before the colon must agree.
    """
    if a == b:
        return True
    kind_a, _, thing_a = a.partition(":")
    kind_b, _, thing_b = b.partition(":")
    if kind_a != kind_b or not thing_a or not thing_b:
        return False
    if any("\u4e00" <= ch <= "\u9fff" for ch in thing_a + thing_b):
        return thing_a in thing_b or thing_b in thing_a
    return bool(set(thing_a.split()) & set(thing_b.split()))


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
            if not same_attribute(a.attribute, b.attribute):
                continue
            if a.negative != b.negative:
                # "I no longer live in Berlin" after "I live in Berlin": the value is withdrawn.
                return ("update", a.attribute) if a.value == b.value else None
            if _holds(a.value, b.value) or _holds(b.value, a.value):
                return ("agree", a.attribute)
            return ("update", a.attribute)
    return None


_NUMERAL = re.compile(r"[0-9零一二三四五六七八九十两百千万]")
_DAY = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天]$|[0-9一二三四五六七八九十]\s*[号日]$")


def _holds(longer: str, shorter: str) -> bool:
    """Whether value `longer` says `shorter` again ("Google Zurich", "北京海淀").

    A whole word only ("Java" is not in "JavaScript"), and an amount or a time only when equal
    ("一点" is not in "十一点", "1am" not in "11am").
    """
    if longer == shorter:
        return True
    if not shorter or (_NUMERAL.search(shorter) and not _DAY.search(shorter)):
        return False
    if shorter.isascii():
        return re.search(rf"(?<!\w){re.escape(shorter)}(?!\w)", longer) is not None
    if _DAY.search(shorter):
        # A day is said again with more after it ("周四" in "周四以后大家都说好多"), where an
        # amount is not ("一点" in "十一点", "一家" beside another "一家").
        digits = "0-9零一二三四五六七八九十两百千万"
        edge = rf"(?<![{digits}]){re.escape(shorter)}(?![{digits}点])"
        return re.search(edge, longer) is not None
    return shorter in longer


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
# Questions by class rather than by attribute: "who is my manager", "what laptop do I use",
# "how big is my team", "我现在的领导是谁", "用什么笔记本": a question word and a noun that
# names an attribute (the same lexicon the statements' possessives use).
_ASK_EN += (
    (
        "{noun}",
        r"\b(?:what|which|who)(?:'s|\s+is|\s+was|\s+are|\s+were)\s+my\s+"
        r"(?P<noun>(?:[a-z-]{1,24}\s+){0,2}?[a-z-]{1,24})"
        r"(?=\s*[?.!]|\s+(?:now|these days|in \d|before|originally|at first)\b|\s*$)",
    ),
    (
        "{noun}",
        r"\b(?:what|which)\s+(?P<noun>manager|boss|laptop|computer|phone|university|school|"
        r"college|uni|database|db|e-reader|ereader|car|language|note app|notes app)\b",
    ),
    ("manager", r"\b(?:who|whom)\s+(?:do|did|does)\s+i\s+(?:\w+\s+){0,1}?report\s+to\b"),
    ("manager", r"\bwho(?:'s|\s+is|\s+was)\s+my\s+(?:\w+\s+){0,1}?(?:manager|boss|lead)\b"),
    (
        "university",
        r"\bwhere\s+(?:do|did|am|was)\s+i\s+(?:\w+\s+){0,1}?(?:study|studying|enrolled)\b"
        r"|\bwhich\s+(?:university|school|college|uni)\b",
    ),
    ("notes", r"\b(?:take|taking|keep|kept|write|store)\s+(?:my\s+)?notes\b|\bnote[- ]?app\b"),
    (
        "team_size",
        r"\bhow\s+(?:big|large|small)\s+(?:is|was)\s+(?:my|our|the)\s+team\b"
        r"|\bhow\s+many\s+(?:people|engineers|members|devs|developers)\b[^?.!]{0,30}?\bteam\b",
    ),
    (
        "bedtime",
        r"\b(?:what\s+time|when)\s+(?:do|did)\s+i\s+(?:\w+\s+){0,2}?(?:go\s+to\s+(?:bed|sleep)|"
        r"sleep|fall\s+asleep)\b|\bbedtime\b",
    ),
    ("database", r"\b(?:database|db)\b|\bdata\s+(?:stored|kept|live)\b"),
    ("laptop", r"\b(?:laptop|notebook\s+computer)\b"),
    ("programming_language", r"\b(?:code|coding|program|programming)\s+in\b"),
    ("diet", r"\bhow\s+(?:do|did)\s+i\s+eat\b"),
    (
        "schedule:{thing}",
        r"\b(?:when|what\s+time|which\s+day|what\s+day)\b[^?.!]{0,40}?\b(?:my\s+|our\s+|the\s+)?"
        r"(?P<thing>" + _THINGS_WORDS + r")\b",
    ),
)
_ASK_ZH += (
    (
        "manager",
        r"(?:领导|经理|老板|上司|主管)(?:是谁|叫什么)|向谁汇报|谁是我的(?:领导|经理|老板|上司)",
    ),
    ("university", r"哪所(?:学校|大学)|什么(?:学校|大学)|在哪(?:里|儿)?(?:上学|读书|念书)"),
    ("laptop", r"(?:什么|哪[个台款])(?:笔记本|电脑)"),
    ("notes", r"(?:用什么|在哪(?:里|儿)?)记笔记|笔记(?!本)[^，。？?]{0,4}?(?:在哪|用什么)"),
    ("phone", r"(?:什么|哪[个部款])手机"),
    ("team_size", r"(?:组|团队|组里)[^，。？?]{0,4}?(?:多少|几个?)人"),
    ("bedtime", r"几点(?:睡|上床)|什么时候睡"),
    ("database", r"数据库|(?:什么|哪个)库|[\u4e00-\u9fff]库(?:用的是|是|用)什么"),
    ("residence", r"哪个城市|在哪(?:里|儿)?(?:租房|安家)"),
    ("diet", r"怎么吃|(?:爱|喜欢)吃什么"),
    ("relationship", r"感情(?:状态|状况)"),
    (
        "{noun}",
        r"我(?:们)?(?:现在|目前|最早|以前|之前)?的(?P<noun>[\u4e00-\u9fff]{1,6}?)"
        r"(?:是谁|是什么|是哪|叫什么)",
    ),
    (
        "schedule:{thing}",
        r"(?:几点|什么时候|哪天|星期几|周几)[^，。？?]{0,4}?(?P<thing>" + _ZH_THINGS + r")"
        r"|(?P<thing2>" + _ZH_THINGS + r")[^，。？?]{0,4}?(?:几点|什么时候|哪天|星期几|周几)",
    ),
)
_ASK_EN_COMPILED = tuple((name, re.compile(p, re.I)) for name, p in _ASK_EN)
_ASK_ZH_COMPILED = tuple((name, re.compile(p)) for name, p in _ASK_ZH)


# A question about someone else's things ("which school do my kids go to") asks for none of
# the user's attributes.
_ASK_OTHER = re.compile(
    r"\b(?:my\s+(?:mother|mom|mum|father|dad|parents|sister|brother|kids|children|son|daughter|"
    r"friends?|colleagues?|neighbou?rs?)\b|his|her|their|he|she|they)\b"
    r"|(?:妈|爸|父母|孩子|儿子|女儿|哥|姐|弟|妹|朋友|同事|邻居|他|她)的",
    re.I,
)


def asked_attributes(question: str) -> frozenset[str]:
    """The attributes whose value a question asks for (empty for any other text)."""
    if _ASK_OTHER.search(question):
        return frozenset()
    cjk = any("\u4e00" <= ch <= "\u9fff" for ch in question)
    found = set()
    for name, pattern in (*_ASK_EN_COMPILED, *(_ASK_ZH_COMPILED if cjk else ())):
        hit = pattern.search(question.replace("’", "'"))
        if hit is None:
            continue
        groups = hit.groupdict()
        thing = groups.get("thing") or groups.get("thing2")
        if groups.get("noun"):
            found.add(_canon(groups["noun"], cjk))
        else:
            found.add(name.format(thing=_thing(thing, cjk)) if thing else name)
    return frozenset(found)
