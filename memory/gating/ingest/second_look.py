"""A statement the rules gate dropped, kept when by meaning it states or updates a value.

"Mornings are green tea now." or "These days it's a parrot that keeps me company." names no
first person, so the rules gate reads it as small talk; said after "I drink coffee every
morning" or "I have a golden retriever", it is the newest value of an attribute the user
stated. Such a statement gets a second look: when it says that something changed, reads as
setting an attribute (`memory.attribute_meaning`), and the conflict policy finds that it
replaces one of the user's memories, it is kept as a fact. Alone, with nothing it updates, it
stays dropped, so chat that only sounds like news is not stored.

A short statement that opens in the first person and names a value of an attribute of the
user's ("I support Arsenal.", "I'm red-green colour-blind.", "我平时主要写 C++。") says too
little for the gate's score; it is kept when it tells (asks and requests nothing), is no
reaction or thanks, names a value and reads as setting an attribute. The reader alone is no
gate ("I see." reads as an attribute too), hence the other tests. So is one that leaves its
subject out, as chat does, and says that something changed ("Left the NHS and took a job at
Bupa", "跳到米哈游了，还是做策划。"): said to the assistant, it is the user's own news.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, replace

from memory.attribute_meaning import MAX_CHARS, marks_change, names_a_value, sets_attribute
from memory.gating.decision import GateDecision, GatePolicy
from memory.gating.gate import Role
from memory.gating.ingest.apply import ConflictStrategy, decide
from memory.gating.rules.chatter import clause_kind
from memory.gating.rules.decide import kept_text, kind_for
from memory.gating.rules.meaning import asks, told
from memory.gating.rules.signals import NOISE
from memory.storage.store import MemoryStore
from memory.types import Category, NewMemory, Scope, Source

REASON = "updates a value the user stated before, read by meaning (fact)"
STATES = "states a value of the user's, read by meaning (fact)"
# The statement opens with the user as its subject or owner.
_FIRST_PERSON = re.compile(r"^\W{0,3}(?:i|i'm|i've|i'd|my|we|we're|our)\b|^\W{0,3}我", re.I)
# A chat message that drops its subject is the speaker's own news ("Left the NHS and took a job
# at Bupa", "跳到米哈游了"): it opens with a verb in the past or -ing, or, in Chinese (where
# the subject is routinely left out), with no pronoun or demonstrative naming someone else.
_NO_SUBJECT = re.compile(
    r"^\W{0,3}(?:(?!(?:need|based|red|bed|seed|speed|feed|used)\b)[a-z]{2,}(?:ed|ing)|left|got|"
    r"took|went|made|began|became|sold|bought|quit|switched|moved|started|joined|finally|"
    r"just|still|now|these days|nowadays|lately|recently|since)\b"
    r"|^\W{0,3}(?![你您他她它咱这那谁哪])[\u4e00-\u9fff]",
    re.I,
)
# Drops the first look may reconsider: read as small talk, or a fact that scored too low.
_LOW = (NOISE.reason, "first-person statement")


def _candidate(decision: GateDecision, role: Role) -> bool:
    content = decision.content
    return (
        role == "user"
        and not decision.keep
        and decision.reason.startswith(NOISE.reason)
        and not decision.findings
        and 0 < len(content) <= MAX_CHARS
        and marks_change(content)
        and not asks(content)
    )


def states_own_value(decision: GateDecision, role: Role) -> bool:
    """A dropped short statement of the user's own (first person, or news with no subject)."""
    content = decision.content
    return (
        role == "user"
        and not decision.keep
        and decision.reason.startswith(_LOW)
        and not decision.findings
        and 0 < len(content) <= MAX_CHARS
        and (
            _FIRST_PERSON.search(content) is not None
            or (_NO_SUBJECT.search(content) is not None and marks_change(content))
        )
        and bool(told(content))
        and not asks(content)
        and clause_kind(content) == "content"
        and names_a_value(content)
    )


@dataclass(frozen=True, slots=True)
class Look:
    """Which second look a dropped statement gets (from cheap tests, no embedding)."""

    update: bool  # it says that something changed: kept if it replaces a value
    states: bool  # a short first-person statement naming a value: kept as it is


def worth_a_look(decision: GateDecision, role: Role) -> Look | None:
    """The second look a dropped statement may get, or None (pattern work: off the loop)."""
    look = Look(_candidate(decision, role), states_own_value(decision, role))
    return look if look.update or look.states else None


async def kept_as_update(
    store: MemoryStore,
    scope: Scope,
    decision: GateDecision,
    look: Look,
    *,
    policy: GatePolicy,
    strategy: ConflictStrategy,
) -> GateDecision | None:
    """The decision to keep `decision`'s statement as a fact, or None to leave it dropped.

    `look` is `worth_a_look`'s answer for `decision`.
    """
    content = decision.content
    if not await asyncio.to_thread(sets_attribute, content, store.embedder.embed):
        return None
    kept = replace(
        decision,
        keep=True,
        category=Category.FACT,
        kind=kind_for(Category.FACT, "user"),
        importance=round(max(decision.importance, policy.keep_threshold), 3),
        reason=STATES,
        content=kept_text(content, "user"),
        ttl_days=None,  # it sets an attribute: it holds until an update replaces it
    )
    if look.update:
        item = NewMemory(content=kept.content, kind=kept.kind, source=Source.CHAT,
                         origin=kept.origin, category=kept.category)  # fmt: skip
        verdict = await decide(store, scope, item, strategy)
        if verdict.action == "supersede" and verdict.conflict:
            return replace(kept, reason=REASON)
    return kept if look.states else None
