"""Evidence recall@k and MRR for LoCoMo questions, with the slot rule for multi-turn memories."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bench._locomo_backends import Hit

KS = (1, 5, 10)
MAIN_CATEGORIES = (1, 2, 3, 4)
METRICS_KEYS = (*(f"recall@{k}" for k in KS), "mrr")
# Also reported: recall@10 counting only hits above the relevance floor (what would be
# injected), and session-level recall (any gold session among the top-k hits' sessions), the
# figure published LongMemEval results use.
EXTRA_KEYS = ("recall@10_above_floor", "session_recall@5", "session_recall@10")


def session_of(dia_id: str) -> str:
    """The session part of a turn id ("D3:5" -> "D3"); ids without one are their own session."""
    return dia_id.split(":", 1)[0]


def question_scores(hits: Sequence[Hit], evidence: Sequence[str]) -> dict[str, float]:
    """recall@1/5/10 and MRR@10 of one question.

    A hit covering n turns uses n of the k slots (a hit that does not fit is not counted), so
    grouping turns into bigger memories cannot inflate recall. Evidence ids that match no turn
    (malformed or missing) stay in the denominator: they count as misses.
    """
    gold = list(dict.fromkeys(evidence))
    gold_sessions = {session_of(d) for d in gold}
    found_at: dict[str, int] = {}
    above: set[str] = set()
    session_at: int | None = None
    used = 0
    for hit in hits:
        used += max(1, len(hit.dia_ids))
        if used > max(KS):
            break
        for dia in hit.dia_ids:
            if dia in gold and dia not in found_at:
                found_at[dia] = used
            if dia in gold and hit.passed:
                above.add(dia)
            if session_at is None and session_of(dia) in gold_sessions:
                session_at = used
    out = {f"recall@{k}": sum(1 for s in found_at.values() if s <= k) / len(gold) for k in KS}
    out["mrr"] = 1.0 / min(found_at.values()) if found_at else 0.0
    out["recall@10_above_floor"] = len(above) / len(gold)
    for k in (5, 10):
        out[f"session_recall@{k}"] = float(session_at is not None and session_at <= k)
    return out


@dataclass
class Tally:
    """Per-category accumulation of question scores."""

    by_category: dict[int, list[dict[str, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    unscored: int = 0

    def add(self, category: int, hits: Sequence[Hit], evidence: Sequence[str]) -> None:
        """Score one question (questions without evidence cannot be scored and are counted)."""
        if not evidence:
            self.unscored += 1
            return
        self.by_category[category].append(question_scores(hits, evidence))

    def summary(self) -> dict[str, object]:
        """{"cat_1_4": means, "by_category": {"1": means, ...}, "questions": counts}."""
        main = [s for c in MAIN_CATEGORIES for s in self.by_category.get(c, [])]
        return {
            "cat_1_4": _means(main),
            "by_category": {str(c): _means(v) for c, v in sorted(self.by_category.items())},
            "questions": {str(c): len(v) for c, v in sorted(self.by_category.items())},
            "unscored_questions": self.unscored,
        }


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = (*METRICS_KEYS, *EXTRA_KEYS)
    if not rows:
        return dict.fromkeys(keys, 0.0)
    return {key: round(float(np.mean([r[key] for r in rows])), 4) for key in keys}


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds."""
    if not samples_ms:
        return {"p50": 0.0, "p95": 0.0}
    values = np.asarray(samples_ms, dtype=np.float64)
    return {
        "p50": round(float(np.percentile(values, 50)), 3),
        "p95": round(float(np.percentile(values, 95)), 3),
    }
