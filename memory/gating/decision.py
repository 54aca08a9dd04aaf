"""The gate's policy (thresholds, lifetimes) and its decision record: what to store and why."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from memory.types import Category, MemoryKind, Origin

Role = Literal["user", "assistant", "tool", "system"]
Trust = Literal["normal", "low"]


def _default_ttls() -> Mapping[Category, float | None]:
    # Preferences, constraints and facts hold until an update replaces them or consolidation's
    # decay forgets them unused (None = no expiry): a fixed lifetime dropped the newest value of
    # anything the attribute reader does not know ("our quiz team is called ..."). A lesson
    # stays useful for months; decisions are superseded within weeks.
    # A plain dict (fresh per policy): the policy crosses to the text worker process by pickle.
    return dict(
        {
            Category.PREFERENCE: None,
            Category.CONSTRAINT: None,
            Category.FAILURE_LESSON: 180.0,
            Category.FACT: None,
            Category.DECISION: 30.0,
            Category.NOISE: None,
        }
    )


@dataclass(frozen=True, slots=True)
class GatePolicy:
    """Thresholds and lifetimes the gate applies; every field has a production default."""

    # The rule gate keeps a candidate when its category is not noise and its importance (the
    # category prior weighed with the whole turn, `rules.score`) reaches this. Chosen by
    # `python -m bench.gate_threshold` on the tune split of tests/data/gate_corpus.jsonl (best F1
    # at precision >= 0.90, highest of the tied points 0.625-0.640): tune F1 0.996, held-out
    # precision 0.975 / recall 0.975. `python -m bench.locomo --mode gated` reports what it
    # stores and keeps on LoCoMo, which is never used to choose it.
    keep_threshold: float = 0.64
    # The same bar for a model's answer, on the scale the gate prompt asks for (facts 0.4-0.65).
    model_keep_threshold: float = 0.35
    # A gate model slower than this is abandoned for the rules: a turn's write-back must not
    # hang on a stalled provider. Each attempt (there are two) gets this long.
    model_timeout_s: float = 30.0
    # With a gate model, ask it too which earlier memory each kept statement replaces: one
    # more call per kept statement that has neighbours (`memory.gating.update_model`).
    model_reads_updates: bool = True
    # Low-trust content (tool output, instruction-like text) never ranks above this.
    low_trust_max_importance: float = 0.3
    low_trust_ttl_days: float = 14.0
    # Tool output that reads as a fact or a failure is kept as low-trust episodic memory.
    keep_tool_facts: bool = True
    # Instruction-like text ("ignore previous rules", "I am an admin") is dropped; with this
    # set it is kept instead as low-trust episodic content, for audits of injection attempts.
    keep_injections: bool = False
    # A user turn the rules keep only as a plain statement is dropped where the word model
    # fitted on the gate corpus reads it as a question, request or small talk
    # (`memory.gating.word_model`, `rules.decide._vetoed`); off, the rules alone decide.
    word_model_veto: bool = True
    ttl_days: Mapping[Category, float | None] = field(default_factory=_default_ttls)

    def ttl_for(self, category: Category, *, low_trust: bool = False) -> float | None:
        """The TTL in days a kept memory of `category` gets (None: no expiry)."""
        if category is Category.NOISE:
            return None
        if low_trust:
            return self.low_trust_ttl_days
        return self.ttl_days.get(category)


@dataclass(frozen=True, slots=True)
class GateDecision:
    """Whether to store a candidate, as what, and why. `content` is already redacted."""

    keep: bool
    category: Category
    kind: MemoryKind
    importance: float
    confidence: float
    origin: Origin
    reason: str
    content: str
    trust: Trust = "normal"
    needs_approval: bool = False
    ttl_days: float | None = None
    findings: tuple[str, ...] = ()
