"""The memory gate (seed 002 §三.3): what is worth remembering, redacted, and why."""

from __future__ import annotations

from memory.gating.gate_model import MALFORMED, GateAnswer, gate_with_model, parse_answer
from memory.gating.gate_rules import gate
from memory.gating.gate_split import split_candidates
from memory.gating.gate_text import is_instruction_like, needs_approval
from memory.gating.gate_types import GateDecision, GatePolicy, Role, Trust

__all__ = [
    "MALFORMED",
    "GateAnswer",
    "GateDecision",
    "GatePolicy",
    "Role",
    "Trust",
    "gate",
    "gate_with_model",
    "is_instruction_like",
    "needs_approval",
    "parse_answer",
    "split_candidates",
]
