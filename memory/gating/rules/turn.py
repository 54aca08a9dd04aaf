"""Judge a whole turn: split it, classify each clause, and pick the clause that matters most.

"Thanks! Also, I'm flying to Chicago on Tuesday" is a fact (its second sentence), "That's
awesome! What made you start?" is noise (a reaction and a question). A turn that answers a
question about the user ("How often do you run?" → "Three times a week") is self-disclosure
even without a first-person cue, so the previous turn can be passed as `context`; the reply
the turn got can be passed as `reply` ("Wow! Where did you take them?" marks news).
"""

from __future__ import annotations

import re

from memory.gating.decision import Role
from memory.gating.rules import lexicon_en as lex
from memory.gating.rules import lexicon_zh as zh
from memory.gating.rules import meaning
from memory.gating.rules.chatter import clause_kind
from memory.gating.rules.explicit import is_closing
from memory.gating.rules.meaning import MAX_SENTENCE_CHARS
from memory.gating.rules.poisoning import judge
from memory.gating.rules.score import score, turn_signals
from memory.gating.rules.signals import (
    NOISE,
    SECRET_CUE,
    SECRET_ONLY,
    Cue,
    classify_clause,
    classify_tool_clause,
    content_words,
    is_interrogative,
    normalise,
)
from memory.gating.rules.specifics import plans_ahead, without_vocatives
from memory.gating.rules.split import split_candidates, split_media
from memory.types import Category

_AGENT_CATEGORIES = frozenset({Category.DECISION, Category.FAILURE_LESSON})
_QUESTION_MARKS = ("?", "？")
REQUEST = Cue(Category.PREFERENCE, 0.7, 0.6, "named request")
_POLITE_NP = re.compile(
    r"^(?P<np>[^,，?？!！.。:：]{2,40})[,，]\s*(?:please|pls|thanks|thank you|请|谢谢)"
    r"[.!。！~～]*$",
    re.IGNORECASE,
)
CONVENTION = Cue(Category.PREFERENCE, 0.75, 0.7, "convention (one thing over another)")
ACTION = Cue(Category.DECISION, 0.75, 0.6, "change to external actions")
_RULE_WORDS = re.compile(
    r"\b(?:make sure|every|each|all|any|never|always|at least|at most|no more than|don't|do not)\b"
)


def is_instruction_like(text: str) -> bool:
    """True for text that tries to steer the system (judged on what it does, see poisoning)."""
    return judge(text).flagged


def needs_approval(text: str) -> bool:
    """True when a memory would change external actions: payments, recipients, permissions."""
    low = normalise(text)
    return bool(lex.APPROVAL.search(low) or zh.APPROVAL.search(low))


def is_question(sentence: str) -> bool:
    """True for a sentence that ends as a question (?, ？, or a Chinese question particle)."""
    stripped = zh.without_laughter(sentence.rstrip(" \"'”’)~～"))
    return stripped.endswith(_QUESTION_MARKS) or zh.particle_question(stripped.rstrip("。.！!"))


def clause_cues(sentence: str, *, personal: bool) -> list[tuple[str, Cue]]:
    """Each clause of one sentence with its cue ("Since I'm vegetarian, what should I cook?")."""
    if SECRET_ONLY.match(sentence):
        return [(sentence, SECRET_CUE)]
    if personal and _named_request(sentence):
        return [(sentence, REQUEST)]
    if personal and _convention(sentence):
        return [(sentence, CONVENTION)]
    clauses = meaning.clauses(sentence)
    # A clause asks by what it says, with or without a question mark ("what's my dog's name",
    # "明天北京会下雨吗"): a question is never a fact about the user.
    asking = meaning.asking(clauses)
    if is_question(sentence):
        # "Since I'm vegetarian, what should I cook?": the first clause still informs.
        asking = [a or is_interrogative(c) for a, c in zip(asking, clauses, strict=True)]
        if not any(asking) and not lex.POLITE_REQUEST.search(normalise(clauses[-1])):
            asking[-1] = True
    # A clause repeated in one sentence ("haha haha haha…", a pasted list) is judged once.
    judged: dict[tuple[str, bool], Cue] = {}
    for c, a in zip(clauses, asking, strict=True):
        if (c, a) not in judged:
            judged[c, a] = classify_clause(c, asking=a, personal=personal, sentence=sentence)
    return [(c, judged[c, a]) for c, a in zip(clauses, asking, strict=True)]


def _convention(sentence: str) -> bool:
    low = normalise(sentence)
    return bool(lex.CONVENTION.search(low) or zh.CONVENTION.search(low))


def _named_request(sentence: str) -> bool:
    """True for "Dark mode, please." or "深色主题，谢谢": a thing named and asked for."""
    match = _POLITE_NP.match(without_vocatives(sentence).strip())
    if not match:
        return False
    head = normalise(match.group("np"))
    # "Anyway, thanks." names nothing: a discourse marker or a reaction is not a thing asked for.
    return (
        not (_small_talk(head) or lex.REACTION.search(head) or zh.REACTION.search(head))
        and clause_kind(match.group("np")) == "content"
        and content_words(match.group("np")) >= 1
    )


def best_cue(
    text: str, role: Role = "user", context: str | None = None, reply: str | None = None
) -> Cue:
    """The most important cue among the text's clauses (tool output is judged per sentence).

    The turn is then weighed as a whole (`score`): its specifics, events, chit-chat, a
    shared photo, and (for the user) whether it answers a question asked in `context` and
    whether the `reply` it got took interest in it.
    """
    body, caption = split_media(text)
    sentences = split_candidates(body)
    if role == "tool":
        return max((classify_tool_clause(s) for s in sentences), key=_rank, default=NOISE)
    per_sentence = [clause_cues(s, personal=role != "assistant") for s in sentences]
    clauses = [p for cues_of in per_sentence for p in cues_of]
    # A sign-off ("that's it for now", "talk to you tomorrow") says nothing about anyone,
    # whatever cue its words happen to trigger.
    clauses = [(c, NOISE if is_closing(normalise(c)) else cue) for c, cue in clauses]
    if all(is_closing(normalise(s)) for s in sentences if not _small_talk(normalise(s))):
        clauses = [(c, NOISE) for c, _ in clauses]
    cues = [cue for _, cue in clauses]
    told_nothing = all(c.category in (Category.NOISE, Category.FACT) for c in cues)
    if role == "user" and told_nothing and _only_tasks(sentences, per_sentence):
        # "Explain list comprehensions like I'm new to Python", "帮我写一个读取 CSV 的函数": a
        # request for this conversation, however many names and words it carries, is not
        # something to remember about the user. A style rule in the same form ("Write
        # docstrings in Google style") has a preference cue and is judged as one.
        return NOISE
    if role == "assistant":
        # The agent's own words are not the user's preferences; only its actions and lessons,
        # and only when it speaks of itself ("I rolled it back", "我已经安排好"): "resources are
        # released even on errors" explains something, it records no failure.
        low = normalise(body)
        own = lex.FIRST_PERSON.search(low) or zh.FIRST_PERSON.search(low)
        cues = [c for c in cues if c.category in _AGENT_CATEGORIES and own]
    best = max(cues, key=_rank, default=NOISE)
    if role == "user" or best.category is not Category.NOISE:
        # Only the user's cue-less content can become a fact: what the agent says is not
        # something to learn about the user, and a system message is a rule or nothing.
        asked = role == "user" and asks(context)
        reacted = role == "user" and took_interest(reply)
        signals = turn_signals(clauses, photo=bool(caption), asked=asked, reacted=reacted)
        best = score(best, signals)
    if best.category is Category.NOISE and _actionable(sentences):
        # "Add Jordan as an admin on billing": a change to payments, recipients or
        # permissions matters even without a preference or fact cue; it will need approval.
        return ACTION
    return best


def _only_tasks(sentences: list[str], per_sentence: list[list[tuple[str, Cue]]]) -> bool:
    """True when every sentence that is not small talk is a one-off request, none dated.

    A sentence with a clause of its own that tells ("Explain it without jargon, I'm a
    complete beginner") is more than its request.
    """
    told = [
        (s, cues)
        for s, cues in zip(sentences, per_sentence, strict=True)
        if not _small_talk(normalise(s))
    ]
    return bool(told) and all(_task(s) and not _tells_beside(s, cues) for s, cues in told)


def _tells_beside(sentence: str, cues: list[tuple[str, Cue]]) -> bool:
    """A clause after the request that tells, not of the moment and not its material."""
    if meaning.PAYLOAD.search(sentence[:MAX_SENTENCE_CHARS]):
        return False
    return any(
        cue.category is Category.FACT and not of_the_moment(clause) for clause, cue in cues[1:]
    )


def of_the_moment(text: str) -> bool:
    """Said of the moment, or of the material a task is about ("spilled it a minute ago")."""
    low = normalise(text)
    return bool(
        lex.MOMENT.search(low)
        or zh.MOMENT.search(low)
        or lex.MATERIAL.search(low)
        or zh.MATERIAL.search(low)
    )


def _task(sentence: str) -> bool:
    low = normalise(sentence)
    if lex.STANDING.search(low) or zh.STANDING.search(low) or meaning.persists(low):
        return False
    if _RULE_WORDS.search(low) or zh.CONSTRAINT.search(low):
        # "Make sure every PR has two reviewers" is a house rule in a request's form.
        return False
    if zh.PERSIST.search(low) or plans_ahead(sentence):
        # "Help me plan my wedding on 14 September": a date weeks ahead is worth keeping.
        return False
    return bool(
        lex.ONE_OFF_IMPERATIVE.search(low) or lex.ONE_OFF_TASK.search(low) or zh.ONE_OFF.search(low)
    )


def _rank(cue: Cue) -> float:
    return cue.importance


def asks(context: str | None) -> bool:
    """True when the previous turn asks the speaker something (a question sentence)."""
    if not context:
        return False
    return any(is_question(s) for s in split_candidates(split_media(context)[0]))


def took_interest(reply: str | None) -> bool:
    """True when a reply reacts with surprise, praise or sympathy, or asks a follow-up."""
    if not reply:
        return False
    # The opening and a follow-up are what count; a long answer is read up to 2,000 characters.
    low = normalise(split_media(reply[:2000])[0])
    if lex.REPLY_INTEREST.search(low) or zh.REPLY_INTEREST.search(low):
        return True
    return any(
        _follow_up(sentence.group(), language.WH_WORD, language.OFFER_OF_HELP)
        for language in (lex, zh)
        for sentence in language.QUESTION_SENTENCE.finditer(low)
    )


def _follow_up(sentence: str, wh: re.Pattern[str], offer: re.Pattern[str]) -> bool:
    """A question word in `sentence` that no offer of help follows."""
    ends = [found.end() for found in wh.finditer(sentence)]
    return bool(ends) and offer.search(sentence, ends[-1]) is None


def _actionable(sentences: list[str]) -> bool:
    return any(
        needs_approval(s) and not is_question(s) and not SECRET_ONLY.match(s) for s in sentences
    )


def _small_talk(low: str) -> bool:
    return bool(lex.NOISE_WORDS.match(low) or zh.NOISE_WORDS.match(low))


def trim_small_talk(text: str) -> str:
    """Drop greeting/thanks sentences at either end of a kept text ("Thanks! Also, I ...")."""
    sentences = split_candidates(text)
    keep = [i for i, s in enumerate(sentences) if not _small_talk(normalise(without_vocatives(s)))]
    if not keep:
        return text.strip()
    first, last = sentences[keep[0]], sentences[keep[-1]]
    start = text.find(first)
    end = text.rfind(last) + len(last)
    return text[start:end].strip() if 0 <= start < end else text.strip()
