"""What a sentence does, whatever its punctuation: asks, requests, introduces, or tells.

The gate must judge meaning, not form. "what's my dog's name" and "明天北京会下雨吗" ask
something with or without a question mark; "do you know where I parked" and "你还记得我上次说
的吗" ask the assistant to recall, they tell it nothing new. A question or a request is never
stored as a fact, even when it mentions the user's dog or trip. "I'm Bob." and "我叫王伟" are
short, but they say who the user is.

Every pattern is anchored or bounded, without nested repetition: matching is linear in the
text's length. `asks` and `introduces` read at most MAX_SENTENCE_CHARS of a clause.
"""

from __future__ import annotations

import re

from memory.gating.rules import lexicon_en as lex
from memory.gating.rules.specifics import without_vocatives
from memory.gating.rules.split import split_candidates, split_clauses

# A question or an introduction is said in its first few hundred characters; a longer
# sentence is a paste, judged on its opening only.
MAX_SENTENCE_CHARS = 400

_F = re.IGNORECASE
# Openers that do not change what the sentence does: "so", "ok", "hey", "quick question:".
_LEAD = re.compile(
    r"^(?:(?:so|and|ok|okay|also|oh|hey|hi|hello|um+|uh+|well|btw|by the way|anyway|actually"
    r"|quick question|one more thing|sorry|and also|but|嗯|哦|那|那么|对了|另外|还有|请问)"
    r"[\s,，:：.。!！]*){1,3}",
    _F,
)
_SUBJECT = r"(?:i|we|you|he|she|it|they|there|this|that|these|those|my|our|your|his|her|their)"
_AUX = (
    r"(?:is|are|am|was|were|do|does|did|can|could|would|will|should|shall|may|might|isn't|aren't"
    r"|wasn't|weren't|don't|doesn't|didn't|can't|couldn't|won't|wouldn't|shouldn't)"
)
# "what's my dog's name", "where did I park", "how long does it take", "who won".
_WH_QUESTION = re.compile(
    r"^(?:what|which|who|whom|whose|where|when|why|how)(?:'s|'re|'d|'ll|'ve|\s+" + _AUX + r"\b"
    r"|\s+(?:have|has|had)\s+" + _SUBJECT + r"\b)"
    r"|^how\s+(?:much|many|long|often|far|old|about|come|do|to)\b"
    r"|^what\s+(?:about|if|else|happened|time|day|date|kind|sort|type|year|month|size|colou?r"
    r"|number|was|were)\b"
    r"|^(?:what|which|who|whose|whom)\s+(?!(?:" + _SUBJECT + r"|a|an|ever)\b)\w",
    _F,
)
# Statements that open with a question word: "which is why I moved", "what matters is…",
# "what happened was my car broke down".
_WH_STATEMENT = re.compile(
    r"^which (?:is|was|means|meant) (?:why|how|what|when|where|that)\b"
    r"|^what (?:really |actually |first |also )?(?:matters|happened|counts|helped|helps|worked"
    r"|works|annoys me|bugs me|worries me|scares me|surprised me|i \w+|we \w+)"
    r"(?: (?:most|me|us|then|next))? (?:is|was)\b",
    _F,
)
# "is it going to rain", "do you know where I parked", "can I bring my dog". "Have" inverts
# only before a pronoun: "have a great day" is a wish.
_INVERTED = re.compile(
    # "Did a 10k this morning" narrates with its subject dropped; "did the parcel come" asks.
    r"^(?!did an? )" + _AUX + r"\s+(?:" + _SUBJECT + r"|the|a|an|any|anyone|anybody"
    r"|someone|somebody|[a-z]+'s)\b"
    r"|^(?:have|has|had|haven't|hasn't)\s+(?:i|we|you|he|she|it|they|there|anyone)\b"
    # A statement hardly opens with "is" or "does": "is Lisbon warmer than Madrid".
    r"|^(?:is|are|isn't|aren't|does|doesn't)\s+\w",
    _F,
)
# Requests to look something up, recall it or explain it, and indirect questions.
_REQUEST = re.compile(
    r"^(?:please\s+|pls\s+|can you\s+|could you\s+|would you\s+)?(?:remind me (?:what|where"
    r"|when|who|how|which|whether|if|of|about)|tell me|let me know|look up|search"
    r"|find out|figure out|help me (?:find|remember|recall|figure|work out|decide|pick|choose)"
    r"|recommend|suggest|explain|describe|check (?:if|whether|what|when|where)"
    r"|any (?:idea|ideas|thoughts|suggestions|recommendations|tips|advice|chance|way)\b)"
    r"|^i(?:\s+|(?='))(?:wonder|was wondering|am wondering|'m wondering|want to know|wanna know"
    r"|need to know|would like to know|'d like to know|forgot (?:what|where|when|who|how|which)"
    r"|can't remember (?:what|where|when|who|how|which))\b"
    r"|^(?:wondering|curious) (?:if|whether|what|where|when|who|how|which)\b"
    r"|^(?:does )?(?:anyone|anybody) (?:know|have|seen|tried)\b",
    _F,
)
# Chinese asks in place: a question word inside the clause, a final particle, or A-not-A. An
# indefinite use ("我什么都吃", "哪儿都行", "几个朋友") tells, it does not ask.
_ZH_WH = re.compile(
    r"(?<![没不])什么(?![都也]|时候[都也])|(?<!随便)啥(?![都也])|(?<!不)怎么(?![都也样]|说呢)|怎么样|怎样|如何"
    r"|哪(?:里|儿|个|些|家|天|年|一)?+(?![都也怕])|几(?:点|号|月|岁|天|时|个人|位)|星期几|周几|礼拜几"
    r"|多少(?![有些])|多久|多长时间|为什么|为啥|谁(?![都也])",
)
# Yes/no questions: a final particle, A-not-A ("能不能", "交了没有"), or an alternative
# ("是住在珠海还是中山").
_ZH_QUESTION = re.compile(
    r"(?:[吗么嘛呢]|[了过]没有?)[\s？?！!。~～]*$|是[^，。！？,.!?]{1,15}还是"
    r"|是否|是不是|能不能|可不可以|要不要|有没有|行不行|好不好|对不对|会不会|用不用|该不该",
)
_ZH_INDIRECT = re.compile(r"(?:不知道|不确定|不清楚|忘了|不记得|记不清|想不起来?)")
_ZH_REQUEST = re.compile(
    r"^(?:请|麻烦(?:你)?|你)?(?:能|可以|能不能|可不可以)?(?:帮我|替我)?(?:查一下|查查|查询|搜一下|搜搜"
    r"|告诉我|提醒我(?:一下)?(?:我|什么|之前|上次)|推荐|介绍一下|解释一下|说说|讲讲|算一下|看看)"
    r"|^你(?:还)?(?:记得|知道|记不记得|知不知道)"
)
# A standing instruction in a request's form ("could you always reply in Spanish") is a rule.
_STANDING_REQUEST = re.compile(
    r"\b(?:always|from now on|going forward|by default|in (?:the )?future|every time|whenever"
    r"|never)\b|以后|今后|每次|默认|一直|始终|总是",
    _F,
)

# "I'm Bob.", "I am Ana Souza, by the way", "Bob here", "call me Liz", "name's Liz".
_INTRO_EN = re.compile(
    r"(?:^|[,;]\s*)(?i:i'm|i am|im)\s+(?P<name>[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)"
    r"(?:\s+[A-Z][a-z]+)?(?=\s*$|\s*[.!,;]|\s+(?i:here|again|speaking|from|by the way|btw)\b)"
    # "It's Python, not Ruby" names no one: "it's" and "this is" need "here" or "again".
    r"|(?:^|[,;]\s*)(?i:it's|it is|this is)\s+(?P<it>[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?"
    r"\s+(?i:here|again|speaking)\b"
    r"|^(?P<here>[A-Z][a-z]+) (?:here|speaking)\b"
    r"|\b(?i:name's|name is|call me|calls me|go by)\s+[\"'“]?[A-Z]",
)
# Capitalised words after "I'm" that are not a name: states, places in a sentence, titles.
_NOT_NAMES = frozenset(
    "ok okay fine good great back here home sorry sure done ready just so not also really in "
    "out off on at tired busy free new still always never very well glad happy excited afraid "
    "allergic vegan vegetarian monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december "
    "same right over up down out me us you everyone nobody somebody stuck almost nearly "
    "thanks hello hi hey".split()
)
# Chinese: "我叫王伟", "叫我小李", "我是王伟" (a surname and a given name, not "我是学生").
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任"
    "沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_INTRO_ZH = re.compile(
    r"我的?(?:英文|中文|大|小|网)?名(?:字)?叫(?!什么|啥)|我叫(?!什么|啥)|我姓(?!什么|啥)"
    # "叫我小陈就行" names; "老板叫我明天早点来" asks the speaker to do something.
    r"|(?:叫|喊)我(?!什么|啥)(?:[\u4e00-\u9fff]{1,3}|[A-Za-z]{2,20})"
    r"(?=就行|就好|就可以|吧|[，,。.！!~～\s]|$)"
    r"|(?:^|[，,])我是(?:小|老)?[" + _SURNAMES + r"][\u4e00-\u9fff]{1,2}"
    r"(?<![员师生者家人长工手迷控粉党族官士])(?=$|[，,。.！!~～\s]|啊|呀|哦)"
)
_INTRO_ZH_NOT = re.compile(r"叫我(?:去|来|做|帮|别|不|一起|吃|回|起|早|过)")


def _head(sentence: str) -> str:
    text = without_vocatives(sentence[:MAX_SENTENCE_CHARS]).strip()
    return _LEAD.sub("", lex_normalise(text)).strip()


def lex_normalise(text: str) -> str:
    """Lower-case with straight quotes (the English cues' form)."""
    return text.replace("’", "'").replace("‘", "'").replace("`", "'").strip().lower()


def asks(clause: str) -> bool:
    """True when `clause` asks a question or requests something, with or without a "?".

    "what's my dog's name", "is it going to rain tomorrow in Paris", "can you remind me what
    I said about the trip", "我的狗叫什么名字", "你还记得我上次说的吗". A standing rule in a
    request's form ("could you always answer in Spanish") does not ask: it is a preference.
    """
    low = _head(clause)
    if not low:
        return False
    if _WH_STATEMENT.match(low):
        return False
    if _WH_QUESTION.match(low) or (_ZH_WH.search(low) and not _indirect(low, _ZH_WH)):
        # "why does my bread always come out flat", "为什么我的面包总是发不起来": a question
        # word asks, whatever "always" says.
        return True
    if _STANDING_REQUEST.search(low) or lex.PERSIST.search(low):
        return False
    if lex.POLITE_REQUEST.search(low):
        # "Could you use British spelling in my documents": a style asked for is a preference.
        rest = lex.POLITE_REQUEST.sub("", low)
        if lex.PREFERENCE.search(rest) or lex.CONSTRAINT.search(rest):
            return False
    if _INVERTED.match(low) or _REQUEST.match(low):
        return True
    if _ZH_REQUEST.match(low) and "的时候" not in low:
        # "推荐餐厅的时候注意一下" sets a rule for every recommendation; it asks for none.
        return True
    return bool(_ZH_QUESTION.search(low) and not _indirect(low, _ZH_QUESTION))


def _indirect(low: str, pattern: re.Pattern[str]) -> bool:
    """True when the question word sits in what the speaker does not know ("我不知道…")."""
    match = pattern.search(low)
    return bool(match and _ZH_INDIRECT.search(low[: match.start()]))


def introduces(clause: str) -> bool:
    """True when `clause` says the speaker's name: "I'm Bob.", "call me Liz", "我叫王伟"."""
    text = clause[:MAX_SENTENCE_CHARS].strip()
    match = _INTRO_EN.search(text)
    if match:
        name = match.group("name") or match.group("it") or match.group("here") or ""
        if re.split(r"[-']", name.lower())[0] not in _NOT_NAMES:
            return True
    return bool(_INTRO_ZH.search(text) and not _INTRO_ZH_NOT.search(text))


# A leading "since", "as", "because" ties the fact to a question that follows it.
_TIE = re.compile(
    r"^(?:so|and|but|since|as|because|given that|considering|now that|因为|既然|由于|所以)"
    r"\s*[,，]?\s*",
    _F,
)


# "I'm allergic to peanuts so what snacks are safe": a question joined on without a comma.
_ASK_BREAK = re.compile(
    r"(?<!\s)\s+(?:so|and|but)\s+(?=(?:what|which|where|when|how|who|why|can|could|should|would|is"
    r"|are|do|does)\b)|(?<=[\u4e00-\u9fff])(?=(?:那|所以)(?:我|有什么|哪|什么|怎么))",
    _F,
)


def clauses(sentence: str) -> list[str]:
    """`sentence` split into clauses, also where a question is joined on by "so" or "and"."""
    parts = split_clauses(sentence) or [sentence]
    return [q.strip() for p in parts for q in _ASK_BREAK.split(p) if q.strip()]


def asking(pieces: list[str]) -> list[bool]:
    """Which clauses of a sentence ask.

    Each is judged on its own, and a subject-less clause after one that asks carries on its
    question ("how come my tests pass locally, but fail in CI").
    """
    flags = [asks(c) for c in pieces]
    for i in range(1, len(pieces)):
        if flags[i - 1] and not flags[i]:
            low = lex_normalise(pieces[i])
            flags[i] = not (lex.SUBJECT_START.match(low) or _ZH_SUBJECT.match(low))
    return flags


_ZH_SUBJECT = re.compile(r"^[我你他她它咱这那]|^[\u4e00-\u9fff]{1,4}(?:是|在|有|要|会)")


_GREETING = re.compile(r"^(?:hey|hi|hello|嗨|你好|您好)\b[\s,，!！]*", _F)
# A place or time named only by the question: "I'll be there", "那时候".
_REFERS_BACK = re.compile(
    r"\b(?:there|then|that day|that week|that place)\b|那里|那儿|那边|那时", _F
)


def told(text: str) -> str:
    """`text` without the sentences and clauses that ask: the part of a mixed turn that tells.

    "I'm allergic to peanuts, what snacks are safe?" → "I'm allergic to peanuts". Returns ""
    when every sentence asks or requests something. The kept part is cut from `text` itself:
    it never holds a word the user did not write.
    """
    parts: list[str] = []
    removed = False
    for sentence in split_candidates(text):
        pieces = clauses(sentence)
        flags = asking(pieces)
        questioned = sentence.rstrip(" \"'”’)~～").endswith(("?", "？")) or asks(sentence)
        polite = lex.POLITE_REQUEST.search(lex_normalise(pieces[-1]))
        if questioned and not any(flags) and not polite:
            # "My sister Ana, remember her?": a question mark with no asking clause asks with
            # the last one, as the rule gate reads it (`turn.clause_cues`).
            flags[-1] = True
        if not any(flags):
            if removed and _REFERS_BACK.search(lex_normalise(sentence)):
                # "Where should I stay in Kyoto? I'll be there in November": without its
                # question the fact loses its place; the turn is kept whole.
                return text.strip()
            parts.append(sentence)
            continue
        removed = True
        kept = [c for c, f in zip(pieces, flags, strict=True) if not f]
        if not kept:
            continue
        start, end = sentence.find(kept[0]), sentence.rfind(kept[-1]) + len(kept[-1])
        piece = sentence[start:end] if 0 <= start < end else kept[0]
        if any(asks(c) for c in clauses(piece)):
            piece = kept[0]  # the kept clauses were not contiguous: the first one alone
        piece = _TIE.sub("", _GREETING.sub("", piece)).strip(" ,，;；:：-–—")
        if piece:
            parts.append(piece)
    if not removed:
        return text.strip()
    # "Our kid starts school in September; what should we pack?": the ";" joined a question.
    return " ".join(parts).rstrip(";；").strip()


def introduction(text: str) -> bool:
    """True when a clause of `text` that does not ask gives the speaker's name."""
    return any(
        introduces(c) for sentence in split_candidates(told(text)) for c in clauses(sentence)
    )
