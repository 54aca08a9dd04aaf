"""What the gate keeps of LoCoMo: the share of turns stored and of evidence turns kept.

One operating point says little on its own, so the gated run also prints the curve: the same
two shares at thresholds around the policy's, each from a full gate pass (a few seconds each).
"""

from __future__ import annotations

from typing import Any

from bench._locomo_data import Conversation
from bench._locomo_memories import Gate, load_gate, memories_for

CURVE_OFFSETS = (-0.03, -0.015, 0.0, 0.005, 0.025)


def evidence_kept(convs: list[Conversation], gate: Gate | None) -> tuple[float, float, float]:
    """(stored share, evidence kept of distinct turns, of question references), cats 1-4.

    The first evidence share counts each evidence turn once; the second once per question
    citing it.
    """
    turns = sum(len(c.turns) for c in convs)
    if gate is None:
        return 1.0, 1.0, 1.0
    # Turn ids repeat across conversations ("D1:3" is in every one): key them by sample.
    kept = {
        (c.sample_id, d)
        for c in convs
        for m in memories_for(c, gate)
        for d in m.provenance["dia_ids"]
    }
    real = {(c.sample_id, t.dia_id) for c in convs for t in c.turns}
    refs = [
        (c.sample_id, e)
        for c in convs
        for q in c.questions
        for e in q.evidence
        if q.category != 5 and (c.sample_id, e) in real
    ]
    distinct = set(refs)
    by_turn = sum(e in kept for e in distinct) / max(len(distinct), 1)
    by_ref = sum(e in kept for e in refs) / max(len(refs), 1)
    return len(kept) / max(turns, 1), by_turn, by_ref


def gate_curve(convs: list[Conversation]) -> list[dict[str, Any]]:
    """Stored and kept shares at thresholds around the default policy's."""
    from memory.gating.gate import GatePolicy

    base = GatePolicy().keep_threshold
    curve: list[dict[str, Any]] = []
    for offset in CURVE_OFFSETS:
        threshold = round(base + offset, 3)
        stored, by_turn, by_ref = evidence_kept(convs, load_gate(threshold))
        curve.append(
            {
                "keep_threshold": threshold,
                "stored_share": round(stored, 4),
                "evidence_kept_share": round(by_turn, 4),
                "evidence_refs_kept_share": round(by_ref, 4),
            }
        )
    return curve
