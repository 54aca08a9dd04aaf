"""The rule-based memory gate: redact, refuse high-risk content, classify, score, decide.

Works without any model (a deployment without an LLM still gates what it stores). A turn is split
into sentences and clauses; the most important clause decides the category, so "Thanks! Also, I'm
flying to Chicago on Tuesday" is kept as a fact and "That's awesome! What made you start?" is
dropped as noise.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memory.citations import neutralise
from memory.gating.decision import GateDecision, GatePolicy, Role
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules import lexicon_en as lex
from memory.gating.rules import lexicon_zh as zh
from memory.gating.rules.chatter import clause_kind
from memory.gating.rules.explicit import asks_to_remember, without_request
from memory.gating.rules.meaning import clauses as meaning_clauses
from memory.gating.rules.meaning import introduction, told
from memory.gating.rules.signals import Cue, content_words, normalise
from memory.gating.rules.specifics import names_beyond_dates, plans_ahead, times
from memory.gating.rules.split import split_candidates
from memory.gating.rules.turn import (
    asks,
    best_cue,
    is_instruction_like,
    needs_approval,
    of_the_moment,
    trim_small_talk,
)
from memory.gating.word_model import WordModel, load_model
from memory.types import Category, MemoryKind, Origin

DEFAULT_PRIVACY = PrivacyFilter()
# The reason recorded when the word model overrules the rules' keep.
VETOED = "worded as a question, request or small talk"


def kind_for(category: Category, role: Role) -> MemoryKind:
    """Explicit user preferences and constraints are PREFERENCE; lessons are PROCEDURAL.

    Failure lessons are "how (not) to do it next time": procedural knowledge, so consolidation
    can distil them into rules. Tool text never leaves EPISODIC.
    """
    if role == "tool":
        return MemoryKind.EPISODIC
    if category in (Category.PREFERENCE, Category.CONSTRAINT) and role in ("user", "system"):
        return MemoryKind.PREFERENCE
    if category is Category.FAILURE_LESSON:
        return MemoryKind.PROCEDURAL
    return MemoryKind.EPISODIC


def gate(
    text: str,
    *,
    role: Role = "user",
    policy: GatePolicy | None = None,
    privacy: PrivacyFilter | None = None,
    context: str | None = None,
    reply: str | None = None,
    explicit: bool = False,
    word_model: WordModel | None = None,
) -> GateDecision:
    """Decide whether `text` becomes a memory; the decision's content is the redacted text.

    `explicit` marks a request to remember (`memory-agent remember`, an explicit store put);
    a user turn that opens with one ("remember that ...") counts as explicit too. Explicit
    requests are kept whatever their importance score, unless the screen (secrets,
    instruction-like text) rejects them or nothing is left to remember.

    `context` is the turn `text` answers (usually the agent's previous message), if any: an
    answer to a question about the user is kept even when it has no first-person cue.
    `reply` is the response `text` got, if any: interest in it ("Congratulations! When do you
    start?") raises its importance. Neither is stored; both only inform the decision.
    `word_model` replaces the shipped word model (`python -m bench.gate_word_model` passes the
    ones it cross-validates); `policy.word_model_veto` off, no model is read.
    """
    policy = policy or GatePolicy()
    content, findings, verdict = screen(text, role, policy, privacy or DEFAULT_PRIVACY)
    if verdict is not None:
        return verdict
    if context:
        context = (privacy or DEFAULT_PRIVACY).clean(context)
    cue = best_cue(content, role, context, reply)
    decision = decide(cue, content, findings, role, policy)
    if role in ("user", "system") and (explicit or asks_to_remember(content)):
        return explicit_decision(decision, content, role, policy)
    if decision.keep and role == "user" and not told(content):
        # Whatever its score, a turn that only asks or requests tells nothing about the user.
        return drop(content, findings, "a question or request, not a fact", role)
    if decision.keep and role == "user" and sets_the_scene(content, role, context, reply):
        return drop(content, findings, "said only to set up a question or request", role)
    if decision.keep and role == "user" and passing_remark(content, role):
        return drop(content, findings, "a remark on the moment, nothing lasting", role)
    if decision.keep and role == "user" and _vetoed(cue, content, context, policy, word_model):
        return drop(content, findings, VETOED, role)
    if not decision.keep and role == "user" and introduction(content):
        # "Hey! Marcus here.": the user's name is kept however short and chatty the turn.
        return replace(
            decision,
            keep=True,
            category=Category.FACT,
            kind=kind_for(Category.FACT, role),
            importance=round(max(decision.importance, policy.keep_threshold), 3),
            reason="self-introduction (fact)",
            content=kept_text(content, role),
            ttl_days=policy.ttl_for(Category.FACT),
        )
    return decision


# Cues that say who the user is whatever else the turn does.
_WHO = frozenset({"core personal fact", "self-introduction", "routine", "decision"})
# Cues of a statement with nothing lasting in its form.
_PLAIN = frozenset({"informative statement", "first-person statement"})


def _vetoed(
    cue: Cue, content: str, context: str | None, policy: GatePolicy, model: WordModel | None
) -> bool:
    """Whether the word model overrules the rules' keep of this user turn.

    Only a keep that rests on a plain statement, the rules' default, with no sign of anything
    lasting in it: a cue the lexicons read (who the user is, a limit, a lesson, a preference)
    is the rules' call, and a model fitted on chat turns would drop a team's rule ("生产数据库不能
    用来跑测试"). Not an answer to the agent's question either: the model never saw one.
    """
    if not policy.word_model_veto or cue.reason not in _PLAIN:
        return False
    model = model or load_model()
    if model is None or not model.judges(content):
        return False
    return not tells_lasting(content) and not asks(context) and model.vetoes(content)


# A question about the other speaker's life ("have you ever been?", "你去过吗"): in a
# conversation the news around it is what the other will ask about, so it stays.
_ABOUT_YOU = re.compile(
    r"\b(?:have|did|do|are|were|will|would|had) you\b(?!\s+(?:know|think|recommend|suggest|help"
    r"|mind|explain|tell|have any|got any))|\b(?:how|what) about you\b"
    r"|\byour\s+(?!(?:honest |own |personal |quick |best |expert )?(?:help|advice|thoughts|take"
    r"|opinion|recommendation|view|guess|pick|verdict|input)s?\b)\w+|你(?:呢|去过|喜欢|也|最近|家)",
    re.IGNORECASE,
)


def sets_the_scene(content: str, role: Role, context: str | None, reply: str | None) -> bool:
    """True when what a turn tells beside its question or task is only that one answer's scene.

    "What's the best way to get red wine out of a carpet? Spilled a glass ten minutes ago.",
    "Summarise the text below. It's from a meeting I missed.": the moment and the material
    are not the user's life. Who the user is (health, home, routine, a decision) stays.
    """
    rest = told(content)
    if not rest or rest == content.strip() or _ABOUT_YOU.search(content[:2000]):
        return False
    # Words in quotes are someone else's ('the doctor said "take it twice daily"'): what they
    # say of routines or health is not the user's.
    own = without_quoted(rest)
    low = normalise(own)
    if lex.PERSIST.search(low) or _zh_schedule(low) or lex.ROUTINE.search(low):
        # "Every Wednesday I have pottery class, and today I glazed a mug": a habit is the
        # user's life, whatever moment it is told in. Others' habits ("楼上天天半夜拖椅子",
        # "they always do the guilt trip") are the question's world.
        return _habits_of_others(own)
    if lex.HEALTH.search(low) or zh.HEALTH.search(low) or _life_event(low):
        # "我吃素，今晚朋友要来家里吃饭": health and diet are who the user is; so is a change
        # that lasts, told with the moment ("上个月刚分手，现在老是…").
        return False
    if (_NAMED_OWN.search(content[:2000]) or _ZH_NAMED.search(rest)) and not (
        lex.MATERIAL.search(low) or zh.MATERIAL.search(low)
    ):
        # "The vet said today that my beagle Rufus is getting chubby": someone of theirs named,
        # in what it tells or in what it asks ("a note for my daughter Zoe? She turns 16…");
        # "my Python script below" is the material, not a thing of theirs.
        return False
    # The new checks read the opening of what is told, so their cost stays bounded.
    head = own[:_HEAD_CHARS]
    if _only_relayed(head, role):
        return True
    head_cue = best_cue(head, role, context, reply)
    if _ABOUT_IT.search(content[:_HEAD_CHARS]) and head_cue.reason not in _WHO:
        # "快递显示已签收但我根本没收到，这种情况找谁", "…, is that even legal": the question is
        # about the situation just told, which is its scene.
        return True
    if head_cue.reason == "informative statement" and not _subject_left_out(head):
        # Nothing of the user's in it ("存款利率都降到1.5%了，大额存单还有必要买吗"): the world
        # the question is about.
        return True
    sentences = split_candidates(rest)
    moments = [of_the_moment(s) or _passing(s) for s in sentences]
    marked = [m or _dated(s) for s, m in zip(sentences, moments, strict=True)]
    if not any(marked):
        return False
    if any(_own_news(s, role) for s, m in zip(sentences, marked, strict=True) if not m):
        # "Just hit 20,000 miles today. I drive a Tesla Model 3, so…": a sentence that tells
        # something of the user's without the moment's marks is kept with the rest.
        return False
    cue = head_cue if head == own else best_cue(own, role, context, reply)
    # A plain statement only dated near or past ("The flight was yesterday", "公司周五搞义卖") is
    # the task's occasion; with a mark of the moment or the material any cue but who the user
    # is sets the scene.
    return cue.reason not in _WHO and (any(moments) or cue.reason in _PLAIN)


_HEAD_CHARS = 2000


# A question about the situation told beside it.
_ABOUT_IT = re.compile(
    r"\b(?:is (?:this|that|it) (?:even )?(?:normal|legal|allowed|ok|okay|reasonable|fair|common"
    r"|a scam)|in this (?:case|situation)|what are my (?:rights|options)|can they (?:even )?do that"
    r"|what (?:do|should|can) i do(?: now| here| about it)?\W*$)"
    r"|这种情况|这(?:样|个)?(?:到底)?(?:合理|合法|正常|算不算|靠谱)|这(?:能|可以)(?:投诉|维权|退)",
    re.IGNORECASE,
)


def _habits_of_others(own: str) -> bool:
    """Every clause of `own` opens with someone who is not the user's: "楼上…", "they…"."""
    pieces = [c for s in split_candidates(own[:_HEAD_CHARS]) for c in meaning_clauses(s)]
    return bool(pieces) and all(
        _OTHERS.match(c.strip()) and not (lex.FIRST_PERSON.search(normalise(c)) or "我" in c)
        for c in pieces
    )


# Who a complaint is about, never the user or theirs: neighbours, a school, a company.
_OTHERS = re.compile(
    r"^(?:they|the (?:neighbou?rs?|school|landlord|company|shop|store|airline|bank|council"
    r"|builders?|staff|app))\b|^(?:现在的|这些|那些)?(?:楼上|楼下|隔壁|邻居|学校|小学|中学|幼儿园|客服|物业"
    r"|商家|卖家|快递|外卖|他们|她们|大家|别人|有人|人家)",
    re.IGNORECASE,
)


def _subject_left_out(text: str) -> bool:
    """The user or theirs as the unsaid subject: "Starting a new job in…", "女儿九月上幼儿园了"."""
    stripped = text.strip()
    return bool(_ING_FIRST.match(stripped) or zh.PERSON_FIRST.match(stripped))


_ING_FIRST = re.compile(r"^\W*[A-Za-z]+ing\b")


def _only_relayed(own: str, role: Role) -> bool:
    """Words relayed ('my boss emailed "…"', "我爸非说…") and nothing of the user's beside them.

    They are the question's material, whoever relayed them; "I live in Osaka and my coworker
    says '…'" still tells where the user lives.
    """
    pieces = [c for s in split_candidates(own) for c in meaning_clauses(s)]
    relayed = [_relay_start(c) for c in pieces]
    if all(r is None for r in relayed):
        return False
    # What a clause says before the one who relays ("I live in Osaka and my coworker says")
    # is the user's own.
    left = " ".join(
        c if r is None else _before_relayer(c[:r]) for c, r in zip(pieces, relayed, strict=True)
    ).strip()
    # A word or two ("sign", "HR") names the one relaying, not something of the user's.
    cue = best_cue(left, role) if content_words(left) > 1 else None
    return cue is None or cue.category is Category.NOISE or cue.reason in _PLAIN


def _relay_start(clause: str) -> int | None:
    """Where the words relaying something start in `clause`, if they do."""
    found = lex.RELAYED.search(clause) or zh.RELAYED.search(clause)
    return None if found is None else found.start()


def _before_relayer(prefix: str) -> str:
    """`prefix` without the one who relays, said last: "I live in Osaka [and my coworker]"."""
    cut = -1
    for found in _JOINS.finditer(prefix):
        cut = found.start()
    if cut >= 0:
        return prefix[:cut]
    # No join: the one who relays is the last few words ("my boss just", "sign at the pool").
    return " ".join(prefix.split()[:-3])


_JOINS = re.compile(r"\b(?:and|but|so|because)\b|[,，;；—–]", re.IGNORECASE)


_QUOTES = {'"': '"', "“": "”", "「": "」", "『": "』"}


def without_quoted(text: str) -> str:
    """`text` with what it quotes emptied ('said "…"' -> 'said ""'), read in one pass."""
    out: list[str] = []
    unclosed: set[str] = set()  # a closer not found once is not looked for again
    i = 0
    while i < len(text):
        closer = _QUOTES.get(text[i])
        end = -1
        if closer is not None and closer not in unclosed:
            end = text.find(closer, i + 1)
            if end < 0:
                unclosed.add(closer)
        if closer is None or end < 0:
            out.append(text[i])
            i += 1
            continue
        out.append(text[i] + closer)
        i = end + 1
    return "".join(out)


def _life_event(low: str) -> bool:
    return bool(lex.LIFE_EVENT.search(low) or zh.LASTING_CHANGE.search(low))


def passing_remark(content: str, role: Role) -> bool:
    """True for a remark on the moment that tells nothing lasting.

    "Phew, finally done with that report for today", "刚散步回来，今天天气真好", "Oh no, I just
    burned the toast again lol". Every sentence is marked as of the moment, the turn carries
    a reaction, and its cue is a plain statement; a habit, health, a decision, a named person
    or thing, or a first keeps it.
    """
    if told(content) != content.strip() or not _REACTS.search(content[:2000]):
        return False
    if tells_lasting(content):
        return False
    if not all(of_the_moment(s) or _passing(s) for s in split_candidates(content)):
        return False
    cue = best_cue(content, role)
    return cue.reason in _PLAIN or cue.reason == "personal fact"


def tells_lasting(content: str) -> bool:
    """A sign of something lasting: a habit, health, a decision, a change, a name, a first.

    "Phew, finally passed my driving test today!" is news told with relief, not a remark.
    """
    low = normalise(content)
    return bool(
        lex.PERSIST.search(low)
        or _zh_schedule(low)
        or lex.ROUTINE.search(low)
        or lex.HEALTH.search(low)
        or zh.HEALTH.search(low)
        or lex.DECIDED.search(low)
        or lex.LASTING_CHANGE.search(low)
        or lex.MY_OWN.search(low)
        or zh.LASTING_CHANGE.search(low)
        # "开学第一周终于熬过去了，我九月开始在浙大读研": who the user is, told with relief.
        or lex.CORE_FACT.search(low)
        or zh.CORE_FACT.search(low)
        or names_beyond_dates(content) > 0
        or _MILESTONE.search(low)
        or _ZH_NAMED.search(content)
    )


# A reaction, relief or passing state said with the moment: "ugh", "phew", "lol", "受不了".
_REACTS = re.compile(
    r"^(?:phew|ugh+|argh+|brr+|oh no|oops|yay|woo+|whew|geez|jeez|omg|sorry|welp|ahh+|man)\b"
    r"|\b(?:lol|lmao|haha+|ugh+|phew|yay|what a day|finally|exhausted|gorgeous|so tired|long day)\b"
    r"|\b(?:has been|was|been) (?:a lot|rough|hectic|brutal|insane|a day|exhausting)\b"
    r"|\b(?:i'm screaming|classic|typical|go figure|smh|brutal day|pouring|snowing|freezing"
    r"|boiling|scorching|sweltering|so (?:hot|cold|humid|quiet|loud|windy)"
    r"|just got (?:home|back|in))\b"
    r"|^(?:night|nite|gn|good ?night)\b"
    r"|哈哈|^呼|呼[—~～…！!]|爽[！!~～。]|[好真太]爽|[累热冷困饿]死|受不了|真好|倒霉|无语|唉|终于"
    r"|好[累热冷困饿]|救命|累瘫|瘫了|嗡嗡|崩溃|啊啊啊|[练累]废了|又是[^，。！？]{1,8}的一天"
    r"|服了|心累|感动哭|哭死|气死|烦死|醉了|太[^，。！？]{1,6}了吧|下(?:大|暴)?[雨雪]|这[雨雪天]|等下回来|一会儿?回来"
    r"|^晚安|^等(?:我)?一下|刚(?:到家|回家|考完|下班)|一片空白",
    re.IGNORECASE,
)
# A first is news however it is told: "finally sent my first V4", "第一次自己换轮胎".
_MILESTONE = re.compile(r"\b(?:my|our) first\b|第一次|头一回")


def _passing(sentence: str) -> bool:
    """An event narrated in the past that changes nothing lasting ("Saw a double rainbow")."""
    low = normalise(sentence)
    narrated = lex.NARRATED.search(low) or lex.I_NARRATE.search(low)
    return (
        narrated is not None
        and not lex.LASTING_CHANGE.search(low)
        and not _long_ago(sentence)
        and not lex.NAMED_TOOL.search(sentence)
        and not _BOUGHT_NAMED.search(sentence)
        and not lex.MY_OWN.search(low)
        and names_beyond_dates(sentence) == 0
    )


# "领回一只小柯基叫旺财", "取名叫豆豆": an animal or a person of theirs named.
_ZH_NAMED = re.compile(
    r"一(?:只|条|个|头|匹)[\u4e00-\u9fff]{1,5}?(?:叫|名叫)[\u4e00-\u9fff]|[取起]名(?:叫)?"
)


# "I just bought a Samsung Galaxy Tab": a thing of the user's from now on, named.
_BOUGHT_NAMED = re.compile(
    r"\b(?:bought|got|ordered|upgraded to|switched to)\s+(?:an?\s+|the\s+|my\s+|our\s+)?"
    r"(?:new\s+|used\s+)?[A-Z][\w-]*\s+[A-Z0-9]"
)


def _own_news(sentence: str, role: Role) -> bool:
    """A sentence with a cue of its own beyond a plain statement ("I drive a Tesla Model 3")."""
    cue = best_cue(sentence, role)
    return cue.category is not Category.NOISE and cue.reason not in _PLAIN


def _zh_schedule(low: str) -> bool:
    """每 or 天天 (a schedule), not 一直 ("一直在流血" is what the cut keeps doing)."""
    found = zh.PERSIST.search(low)
    return found is not None and not zh.keeps_doing(found)


def _dated(sentence: str) -> bool:
    """Dated near or past; a plan weeks ahead, or history years back, is the user's life."""
    return times(sentence) > 0 and not plans_ahead(sentence) and not _long_ago(sentence)


def _long_ago(sentence: str) -> bool:
    low = normalise(sentence)
    return bool(lex.LONG_AGO.search(low) or zh.LONG_AGO.search(low))


# Someone or something of the user's with a name: "my beagle Rufus", "our son Leo".
_NAMED_OWN = re.compile(
    r"\b(?:[Mm]y|[Oo]ur)\s+(?:[a-z]+\s+){0,2}[A-Z][a-z]+|\b(?:named|called)\s+[A-Z][a-z]+"
)


def explicit_decision(
    decision: GateDecision, content: str, role: Role, policy: GatePolicy
) -> GateDecision:
    """Keep what the user asked to be remembered, unless it is only small talk."""
    told = without_request(content).strip()
    # Asked outright, one content word is enough ("I like cats"): only small talk, nothing
    # beyond the request, or a redacted secret with a word or two around it is dropped.
    kind = clause_kind(told) if told else "social"
    if kind == "social" or (kind == "thin" and (content_words(told) < 1 or decision.findings)):
        reason = "asked to remember, but nothing is left beyond the request and small talk"
        return drop(content, decision.findings, reason, role)
    category = Category.FACT if decision.category is Category.NOISE else decision.category
    return replace(
        decision,
        keep=True,
        category=category,
        kind=kind_for(category, role),
        importance=round(max(decision.importance, policy.keep_threshold), 3),
        reason=f"explicit request to remember ({category.value})",
        content=kept_text(content, role),
        ttl_days=policy.ttl_for(category),
    )


def screen(
    text: str, role: Role, policy: GatePolicy, privacy: PrivacyFilter
) -> tuple[str, tuple[str, ...], GateDecision | None]:
    """Redact `text`; decide at once when it holds a high-risk secret or tries to instruct.

    Returns the redacted content, the kinds of secret found, and the decision if one is
    already made. Both gates (rules and model) screen first, so no model sees such text.
    Citation-marker look-alikes are neutralised here: only the composer makes citations.
    """
    redaction = privacy.redact(text)
    content, findings = neutralise(redaction.text.strip()), redaction.kinds
    if redaction.high_risk:
        reason = f"high-risk secret ({', '.join(findings)}): not stored, even redacted"
        return content, findings, drop(content, findings, reason, role)
    if role != "system" and is_instruction_like(content):
        return content, findings, instruction_decision(content, findings, role, policy)
    return content, findings, None


def decide(
    cue: Cue, content: str, findings: tuple[str, ...], role: Role, policy: GatePolicy
) -> GateDecision:
    """Turn a classified cue into a decision under `policy` and the role's trust rules."""
    low_trust = role == "tool"
    keep = cue.category is not Category.NOISE and cue.importance >= policy.keep_threshold
    if low_trust:
        # Tool output has its own switch; its importance is capped below any keep bar anyway.
        keep = cue.category is not Category.NOISE and policy.keep_tool_facts
    importance = (
        min(cue.importance, policy.low_trust_max_importance) if low_trust else cue.importance
    )
    return GateDecision(
        keep=keep,
        category=cue.category,
        kind=kind_for(cue.category, role),
        importance=round(importance, 3),
        confidence=round(cue.confidence, 3),
        origin=Origin.EXPLICIT if role in ("user", "system") else Origin.INFERRED,
        reason=f"{cue.reason} ({cue.category.value})" + ("" if keep else "; dropped"),
        content=kept_text(content, role) if keep else content,
        trust="low" if low_trust else "normal",
        needs_approval=keep and not low_trust and needs_approval(content),
        ttl_days=policy.ttl_for(cue.category, low_trust=low_trust) if keep else None,
        findings=findings,
    )


def kept_text(content: str, role: Role) -> str:
    """What a kept user turn stores: what it tells, without its questions and small talk.

    "I'm allergic to peanuts, what snacks are safe?" keeps "I'm allergic to peanuts".
    """
    if role == "user":
        content = told(content) or content
    return trim_small_talk(content)


def instruction_decision(
    content: str, findings: tuple[str, ...], role: Role, policy: GatePolicy
) -> GateDecision:
    """Instruction-like text is never a rule: dropped, or kept as a low-trust episode."""
    if not policy.keep_injections:
        return drop(content, findings, "instruction-like text; never stored as a rule", role)
    return GateDecision(
        keep=True,
        category=Category.FACT,
        kind=MemoryKind.EPISODIC,
        importance=min(0.1, policy.low_trust_max_importance),
        confidence=0.3,
        origin=Origin.INFERRED,
        reason="instruction-like text; kept only as a low-trust episode",
        content=content,
        trust="low",
        ttl_days=policy.low_trust_ttl_days,
        findings=findings,
    )


def drop(content: str, findings: tuple[str, ...], reason: str, role: Role) -> GateDecision:
    """A decision not to store `content`, with the reason recorded for the audit log."""
    return GateDecision(
        keep=False,
        category=Category.NOISE,
        kind=MemoryKind.EPISODIC,
        importance=0.0,
        confidence=0.9,
        origin=Origin.EXPLICIT if role in ("user", "system") else Origin.INFERRED,
        reason=reason,
        content=content,
        trust="low" if role == "tool" else "normal",
        findings=findings,
    )
