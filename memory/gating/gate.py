"""The memory gate: what is worth remembering, redacted, and why.

The entry point callers use: the rule gate (`rules.gate`), the model gate with the rules as its
fallback (`gate_with_model`), and the decision record both return.
"""

from __future__ import annotations

from memory.gating.decision import GateDecision, GatePolicy, Role, Trust
from memory.gating.gate_model import (
    MALFORMED,
    MAX_MODEL_MEMORIES,
    GateAnswer,
    gate_all_with_model,
    gate_with_model,
    parse_answer,
)
from memory.gating.rules.decide import gate
from memory.gating.rules.split import split_candidates
from memory.gating.rules.turn import is_instruction_like, needs_approval

__all__ = [
    "MALFORMED",
    "MAX_MODEL_MEMORIES",
    "GateAnswer",
    "GateDecision",
    "GatePolicy",
    "Role",
    "Trust",
    "gate",
    "gate_all_with_model",
    "gate_with_model",
    "is_instruction_like",
    "needs_approval",
    "parse_answer",
    "split_candidates",
]
