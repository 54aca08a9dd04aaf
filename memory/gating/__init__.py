"""The write path's judgement: the memory gate, privacy filter, conflict policy, and ingest.

Subpackages: `rules` (the rule gate and its lexicons), `conflicts` (detection and policy),
`privacy` (redaction), `ingest` (writing under the conflict policy, edits, history import);
`gate` is the entry point (rule or model gate), `decision` the gate's policy and verdict,
`machine_text` sets pasted logs, code and data apart from the prose around them.

Names are loaded on first use: `ingest` needs the storage layer (asyncpg, numpy), and importing
`memory.gating.privacy` alone must stay cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.gating.conflicts import Candidate, Existing, Resolution, resolve
    from memory.gating.decision import GateDecision, GatePolicy, Role, Trust
    from memory.gating.gate import gate, gate_with_model, is_instruction_like, split_candidates
    from memory.gating.ingest import (
        ConflictStrategy,
        EditRefused,
        IngestResult,
        Outcome,
        apply_resolution,
        edit_memory,
        ingest_text,
        to_new_memory,
        write_with_policy,
    )
    from memory.gating.privacy import PrivacyFilter, StructureRedactor
    from memory.gating.rules import screen

_EXPORTS = {
    "Candidate": "memory.gating.conflicts",
    "Existing": "memory.gating.conflicts",
    "Resolution": "memory.gating.conflicts",
    "resolve": "memory.gating.conflicts",
    "GateDecision": "memory.gating.decision",
    "GatePolicy": "memory.gating.decision",
    "Role": "memory.gating.decision",
    "Trust": "memory.gating.decision",
    "gate": "memory.gating.gate",
    "gate_with_model": "memory.gating.gate",
    "is_instruction_like": "memory.gating.gate",
    "split_candidates": "memory.gating.gate",
    "ConflictStrategy": "memory.gating.ingest",
    "EditRefused": "memory.gating.ingest",
    "IngestResult": "memory.gating.ingest",
    "Outcome": "memory.gating.ingest",
    "apply_resolution": "memory.gating.ingest",
    "edit_memory": "memory.gating.ingest",
    "ingest_text": "memory.gating.ingest",
    "to_new_memory": "memory.gating.ingest",
    "write_with_policy": "memory.gating.ingest",
    "PrivacyFilter": "memory.gating.privacy",
    "StructureRedactor": "memory.gating.privacy",
    "screen": "memory.gating.rules",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "Candidate",
    "ConflictStrategy",
    "EditRefused",
    "Existing",
    "GateDecision",
    "GatePolicy",
    "IngestResult",
    "Outcome",
    "PrivacyFilter",
    "Resolution",
    "Role",
    "StructureRedactor",
    "Trust",
    "apply_resolution",
    "edit_memory",
    "gate",
    "gate_with_model",
    "ingest_text",
    "is_instruction_like",
    "resolve",
    "screen",
    "split_candidates",
    "to_new_memory",
    "write_with_policy",
]
