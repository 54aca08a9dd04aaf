"""Classify one clause of a turn: which memory category it carries, if any, and how strongly.

Both lexicons run on every clause (English cues do not fire on Chinese text and vice versa),
so mixed-language turns ("代码示例请用 TypeScript") need no language detection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory.attributes import settings
from memory.gating.rules import lexicon_en as lex
from memory.gating.rules import lexicon_zh as zh
from memory.gating.rules import meaning
from memory.types import Category

# Base importance per category: preferences, constraints and failure lessons rank above facts
# (they change how the agent should act; a fact only informs it). Specific facts (a date, a
# number, a name) get +0.1.
IMPORTANCE = {
    Category.CONSTRAINT: 0.85,
    Category.FAILURE_LESSON: 0.8,
    Category.PREFERENCE: 0.75,
    Category.DECISION: 0.7,
    Category.FACT: 0.55,
    Category.NOISE: 0.05,
}
_GENERIC_FACT = 0.4
# Who the speaker is (name, home, work, health, family): as important as a decision.
_CORE_FACT = 0.75
# "Always"/"every week" without a subject reads as a standing instruction, but conversation
# uses it descriptively too ("always a treat"); a guess, so it ranks below explicit rules.
_STANDING_RULE = 0.6
SECRET_ONLY = re.compile(
    r"^[^\[\]]{0,60}?(?:\bis\b|\bare\b|\bwas\b|[:=：]|是|为)\s*\[REDACTED:[a-z_]+\]"
    r"(?:\s+(?:if|in case|for|so|when|just in case)\b[^\[\]]*)?[\s.。!！]*$",
    re.I,
)
_TOOL_RECORD = re.compile(
    r"\b(?:shipped|delivered|created|scheduled|appointment|booked|due|expires?|assigned|renew"
    r"|account|plan|order|invoice|subscription|meeting|ticket|opened|closed|signed)\b"
    r"|发出|发货|创建|预约|到期|续费|订单|账户|会议|工单|签收",
    re.I,
)
_TRANSIENT = re.compile(
    r"\b(?:weather|temperature|forecast|returned \d+ results?|\d+ results|status|http \d{3}"
    r"|ok|success|loading)\b|天气|气温|查询成功|返回 ?\d+ ?条|度，",
    re.I,
)
_PLACEHOLDER = re.compile(r"\[redacted:[a-z_]+\]")
_WORD = re.compile(r"[a-z][a-z']+|[\u4e00-\u9fff]")
_STOP = frozenset(
    "the a an and or but so to of in on at for with is are was were be been it this that i me my "
    "we our you your he she they them his her its just really very too also then there here "
    "what how do does did have has had not no yes oh well like get got go so much more some".split()
)


@dataclass(frozen=True, slots=True)
class Cue:
    """What a clause carries: a category, its importance, the rule's confidence, and why."""

    category: Category
    importance: float
    confidence: float
    reason: str


INTRODUCTION = Cue(Category.FACT, _CORE_FACT, 0.85, "self-introduction")
NOISE = Cue(Category.NOISE, IMPORTANCE[Category.NOISE], 0.8, "small talk or no self-information")
SECRET_CUE = Cue(Category.NOISE, 0.05, 0.9, "only a redacted secret")
QUESTION_CUE = Cue(Category.NOISE, 0.05, 0.7, "a question with no self-information")


normalise = lex.normalise


def is_interrogative(clause: str) -> bool:
    """True when the clause itself asks something (a question word or a question particle)."""
    low = normalise(clause)
    asked = lex.QUESTION_START.search(low) or zh.QUESTION.search(low) or zh.particle_question(low)
    return bool(asked) and not (
        lex.POLITE_REQUEST.search(low) and (_standing(low) or lex.PERSIST.search(low))
    )


def content_words(clause: str) -> int:
    """How many non-stopword words (or CJK characters / 2) the clause has."""
    words = _WORD.findall(_PLACEHOLDER.sub(" ", normalise(clause)))
    latin = sum(1 for w in words if len(w) > 1 and w not in _STOP)
    cjk = sum(1 for w in words if len(w) == 1)
    return latin + cjk // 2


def _strong(low: str, specific: bool) -> Cue | None:
    """The first strong category cue the clause matches, in priority order."""
    if lex.FAILURE.search(low) or zh.FAILURE.search(low):
        return Cue(Category.FAILURE_LESSON, IMPORTANCE[Category.FAILURE_LESSON], 0.75, "failure")
    if lex.CONSTRAINT.search(low) or zh.CONSTRAINT.search(low):
        return Cue(Category.CONSTRAINT, IMPORTANCE[Category.CONSTRAINT], 0.8, "constraint")
    if lex.PREFERENCE.search(low) or zh.PREFERENCE.search(low):
        return Cue(Category.PREFERENCE, IMPORTANCE[Category.PREFERENCE], 0.8, "preference")
    if (
        zh.DECISION.search(low)
        or lex.DECIDED.search(low)
        or (lex.DECISION.search(low) and specific)
    ):
        return Cue(Category.DECISION, IMPORTANCE[Category.DECISION], 0.75, "decision")
    if _standing(low):
        return Cue(Category.CONSTRAINT, _STANDING_RULE, 0.6, "standing rule")
    return None


def _standing(low: str) -> bool:
    """A standing instruction: "from now on", or "always"/"every Monday" in an imperative."""
    if lex.STANDING.search(low) or zh.STANDING.search(low):
        return True
    generic = lex.SUBJECT_START.search(low) or lex.GENERIC_ALWAYS.search(low)
    # "洗衣机一直响": after a noun, 一直/总是 says what a thing keeps doing, not a rule; a
    # schedule stays one wherever it is said ("店里每周二休息").
    zh_persist = zh.PERSIST.search(low)
    keeps = zh_persist is not None and zh.keeps_doing(zh_persist)
    return bool(
        (lex.PERSIST.search(low) and not generic)
        or (
            zh_persist
            and not zh.SUBJECT_START.search(low)
            and (not keeps or zh.PERSIST_LEAD.fullmatch(low[: zh_persist.start()]) is not None)
        )
    )


# Every clause of a sentence asks about the whole sentence: without the cache a sentence of n
# clauses (a 64,000-character "f(f(f(...") is scanned n times, quadratic in its length.
@lru_cache(maxsize=256)
def is_specific(raw: str) -> bool:
    """True when the text names a time, a number, a name or a standing schedule."""
    low = normalise(raw)
    return bool(
        lex.SPECIFIC.search(low)
        or zh.SPECIFIC.search(low)
        or lex.PROPER_NOUN.search(raw)
        or lex.NAMED.search(raw)
        or lex.PERSIST.search(low)
    )


def _fact(low: str, raw: str, specific: bool) -> Cue | None:
    """A first-person statement about the speaker's life, work or plans."""
    strong = lex.FACT.search(low) or zh.FACT.search(low)
    personal = lex.FIRST_PERSON.search(low) or zh.FIRST_PERSON.search(low)
    core = lex.CORE_FACT.search(low) or zh.CORE_FACT.search(low)
    health = lex.HEALTH.search(low) or zh.HEALTH.search(low)
    core = core or lex.ROLE_HERE.search(low)
    if (core or health) and (strong or personal or not _OTHER_START.match(low)):
        # Chat leaves the subject out ("type 1 diabetic", "老家湖南的"): unless someone else
        # is named first, who the speaker is needs no "I".
        return Cue(Category.FACT, _CORE_FACT, 0.8, "core personal fact")
    if strong:
        bonus = 0.1 if specific else 0.0
        return Cue(Category.FACT, IMPORTANCE[Category.FACT] + bonus, 0.7, "personal fact")
    routine = lex.ROUTINE.search(low)
    if routine and routine.start() > 0 and not _OTHER_START.match(low):
        # "cycle in mon and fri", "teach 4 days a week": a habit says who the speaker is.
        # Opening with the frequency ("Three times a week.") it needs the question it answers.
        return Cue(Category.FACT, IMPORTANCE[Category.FACT], 0.6, "routine")
    # A statement that sets one of the user's attributes ("My phone is a Galaxy", "现在笔记全放在
    # 飞书文档里了") is the fact a later update replaces; dropping it leaves nothing to replace.
    if any(not found.negative for found in settings(raw)):
        return Cue(Category.FACT, IMPORTANCE[Category.FACT], 0.7, "sets an attribute of the user")
    if lex.NAMED_TOOL.search(raw) or (personal and lex.DEVICE.search(low)):
        # "I record on a Zoom H5", "We deploy with Kamal": a named thing the speaker uses.
        return Cue(Category.FACT, IMPORTANCE[Category.FACT], 0.6, "uses a named tool")
    if personal and (lex.I_PAST.search(low) or specific) and content_words(raw) >= 2:
        return Cue(Category.FACT, _GENERIC_FACT, 0.5, "first-person statement")
    # Chinese drops inflection, so a first-person clause of some length is the signal.
    if zh.FIRST_PERSON.search(low) and content_words(raw) >= 3:
        return Cue(Category.FACT, _GENERIC_FACT, 0.5, "first-person statement")
    return None


_OTHER_START = re.compile(lex.OTHER_START.pattern + r"|^[他她你您]", re.I)


def _vetoed(low: str) -> bool:
    return bool(lex.REACTION.search(low) or zh.REACTION.search(low))


def classify_clause(clause: str, *, asking: bool, personal: bool = True, sentence: str = "") -> Cue:
    """Classify one clause of `sentence`.

    `asking`: the clause is a question; `personal`: first person means the user (not the
    agent). Specificity (a date, a name) is judged on the whole sentence: in "Starting
    tomorrow, I will go to the gym" the date sits in another clause than the plan.
    """
    low = normalise(clause)
    if not low or lex.NOISE_WORDS.match(low) or zh.NOISE_WORDS.match(low):
        return NOISE
    if SECRET_ONLY.match(clause):
        return SECRET_CUE
    if asking:
        return QUESTION_CUE
    if lex.MOOD.match(low) or zh.MOOD.match(low) or lex.ACTING_UP.match(low):
        # "so thirsty rn", "好冷啊": how the speaker feels right now is not who they are.
        return NOISE
    if lex.CHAT_REMARK.search(low) or zh.CHAT_REMARK.search(low):
        # "打错字了 别管那句": about this chat, whatever rule its words seem to set.
        return NOISE
    if lex.POLITE_REQUEST.search(low):
        low = lex.POLITE_REQUEST.sub("", low)
    if personal and lex.ONE_OFF_TASK.search(low):
        return NOISE
    if personal and meaning.introduces(clause):
        # "I'm Bob.", "you can call me Sam": who the user is, however short the sentence.
        return INTRODUCTION
    specific = is_specific(sentence or clause)
    cue = _strong(low, specific)
    if lex.ADVICE.search(low) or zh.ADVICE.search(low):
        return Cue(Category.NOISE, 0.05, 0.7, "advice or support for the other speaker")
    vetoed = _vetoed(low)
    if cue and not (vetoed and cue.reason not in _UNVETOED):
        return cue
    if vetoed or lex.ONE_OFF_IMPERATIVE.search(low) or zh.ONE_OFF.search(low):
        return NOISE
    return (_fact(low, clause, specific) if personal else None) or NOISE


# An explicit rule or a failure survives a reaction around it ("Wow, that's bad: the deploy
# failed"); a standing-rule guess or a preference does not ("Thanks for always being there").
_UNVETOED = frozenset({"failure", "constraint"})


def classify_tool_clause(clause: str) -> Cue:
    """Tool output: a failure or a dated record is worth an episode; readings are not."""
    low = normalise(clause)
    if lex.FAILURE.search(low) or zh.FAILURE.search(low):
        return Cue(Category.FAILURE_LESSON, IMPORTANCE[Category.FAILURE_LESSON], 0.6, "tool error")
    if _TOOL_RECORD.search(low) and is_specific(clause) and not _TRANSIENT.search(low):
        return Cue(Category.FACT, IMPORTANCE[Category.FACT], 0.6, "tool record")
    return Cue(Category.NOISE, 0.05, 0.6, "transient tool output")
