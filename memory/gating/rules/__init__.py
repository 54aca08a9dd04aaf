"""The rule gate: English and Chinese lexicons, clause signals, turn scoring, and the decision.

Deterministic and model-free: `gate` splits a turn into candidate statements, classifies each
clause by grammatical cues (not topic words), weighs the whole turn, refuses high-risk secrets
and instruction-like text (`poisoning`), and decides whether to keep the rest, as what, and why.
"""

from memory.gating.rules.chatter import clause_kind
from memory.gating.rules.decide import (
    DEFAULT_PRIVACY,
    gate,
    instruction_decision,
    kind_for,
    screen,
)
from memory.gating.rules.explicit import asks_to_remember, is_closing, without_request
from memory.gating.rules.poisoning import PoisoningVerdict, judge, skeleton
from memory.gating.rules.specifics import names, numbers, times
from memory.gating.rules.split import split_candidates, split_clauses, split_media
from memory.gating.rules.turn import (
    is_instruction_like,
    needs_approval,
    took_interest,
    trim_small_talk,
)

__all__ = [
    "DEFAULT_PRIVACY",
    "PoisoningVerdict",
    "asks_to_remember",
    "clause_kind",
    "gate",
    "instruction_decision",
    "is_closing",
    "is_instruction_like",
    "judge",
    "kind_for",
    "names",
    "needs_approval",
    "numbers",
    "screen",
    "skeleton",
    "split_candidates",
    "split_clauses",
    "split_media",
    "times",
    "took_interest",
    "trim_small_talk",
    "without_request",
]
