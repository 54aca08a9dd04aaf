"""LoCoMo turns as memories: one memory per turn, with provenance, speaker, session and context."""

from __future__ import annotations

from collections.abc import Callable

from bench._locomo_data import Conversation, Turn
from memory.gating.ingest.history import speaker_role
from memory.types import Category, MemoryKind, NewMemory, Scope, Source

# Turns on each side of a memory that form its context (measured: ±1 turn of the same session
# gives +10 recall@10 when fused with BM25; ±2 adds little and costs embedding time).
CONTEXT_TURNS = 1

# A gate sees a turn with the turn before it and the reply it got (None at either end).
Gate = Callable[[Turn, str | None, str | None], NewMemory | None]


def scope_for(conv: Conversation) -> Scope:
    """One user per conversation: the benchmark searches each conversation on its own."""
    return Scope(tenant_id="locomo", user_id=conv.sample_id)


def turn_content(turn: Turn) -> str:
    """What the turn said, with the caption of a shared image (what a multimodal agent sees)."""
    text = " ".join(turn.text.split())
    return f"{text} [image: {turn.caption}]" if turn.caption else text


def _labelled(turn: Turn) -> str:
    return f"{turn.speaker}: {turn_content(turn)}"


def context_for(turns: list[Turn], i: int) -> str:
    """The neighbouring turns of the same session, in order, one per line."""
    lo, hi = max(0, i - CONTEXT_TURNS), min(len(turns), i + CONTEXT_TURNS + 1)
    same = [turns[j] for j in range(lo, hi) if j != i and turns[j].session == turns[i].session]
    return "\n".join(_labelled(t) for t in same)


def memory_for(conv: Conversation, i: int) -> NewMemory:
    """The raw (ungated) memory for turn i."""
    turn = conv.turns[i]
    return NewMemory(
        content=turn_content(turn),
        kind=MemoryKind.EPISODIC,
        category=Category.FACT,
        importance=0.5,
        ttl_days=None,
        occurred_at=turn.date,
        context=context_for(conv.turns, i),
        provenance={
            "dia_ids": [turn.dia_id],
            "speaker": turn.speaker,
            "role": speaker_role(turn.speaker),  # as `memory-agent import` records it
            "session": f"{conv.sample_id}:{turn.session}",
        },
    )


def memories_for(conv: Conversation, gate: Gate | None = None) -> list[NewMemory]:
    """All turns as memories; with a gate, only the turns it keeps (as it rewrote them)."""
    out: list[NewMemory] = []
    for i, turn in enumerate(conv.turns):
        memory = memory_for(conv, i)
        if gate is not None:
            same = i > 0 and conv.turns[i - 1].session == turn.session
            previous = turn_content(conv.turns[i - 1]) if same else None
            decided = gate(turn, previous, _reply_to(conv.turns, i))
            if decided is None:
                continue
            decided.occurred_at, decided.context = memory.occurred_at, memory.context
            decided.provenance = memory.provenance
            memory = decided
        out.append(memory)
    return out


def _reply_to(turns: list[Turn], i: int) -> str | None:
    """The next turn of the same session: the reply turn i got, as an agent's gate sees it."""
    if i + 1 < len(turns) and turns[i + 1].session == turns[i].session:
        return turn_content(turns[i + 1])
    return None


def load_gate(keep_threshold: float | None = None) -> Gate | None:
    """The project's memory gate as a turn filter, or None when `memory.gating.gate` is missing.

    `keep_threshold` overrides the default policy's (for the stored/kept curve).
    """
    try:
        from memory.gating.gate import GatePolicy, gate
        from memory.gating.ingest import to_new_memory
    except ImportError:
        return None
    policy = GatePolicy() if keep_threshold is None else GatePolicy(keep_threshold=keep_threshold)

    def apply(turn: Turn, previous: str | None, reply: str | None) -> NewMemory | None:
        # The previous turn is the gate's context: "Max and Daisy." answers "Your dogs' names?";
        # the reply is what the agent's gate sees after its answer ("Wow! Where was that?").
        decision = gate(
            turn_content(turn), role="user", policy=policy, context=previous, reply=reply
        )
        if not decision.keep:
            return None
        # The agent's own conversion, minus expiry: a past conversation where nothing expires.
        item = to_new_memory(
            decision, source=Source.CHAT, provenance={}, occurred_at=None, require_approval=False
        )
        item.ttl_days = None
        return item

    return apply
