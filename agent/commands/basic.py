"""remember / recall / gate / why / reindex.

Each command imports what it needs: `recall` does not load the gate's ~200 compiled patterns,
`gate` opens no store (start-up time is most of a CLI command's time).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from agent.commands.output import image_line, print_json, say, scored_to_dict

if TYPE_CHECKING:
    from memory.storage.timeline import Step
    from memory.types import Scope


def _scope(args: argparse.Namespace) -> Scope:
    from memory.types import Scope

    return Scope(args.tenant, args.user)


async def remember(args: argparse.Namespace) -> int:
    """Store text through the same gate, redaction, dedupe and conflict path as the agent."""
    if getattr(args, "image", None):
        from agent.commands.images import remember_image_file  # Pillow only when needed

        return await remember_image_file(args)
    from memory.gating.ingest import ingest_text
    from memory.storage.store import open_store
    from memory.types import Source
    from memory.working.sensory import InputError

    if not args.text:
        raise InputError("empty", "give the text to remember, or --image PATH")
    async with open_store() as store:
        results = await ingest_text(
            store,
            _scope(args),
            args.text,
            role="user",
            source=Source.CHAT,
            provenance={"via": "cli"},
            require_approval=False,
            explicit=True,  # `remember` is the user asking for exactly this to be kept
        )
    if args.json:
        print_json(
            [
                {
                    "action": r.action,
                    "memory_id": r.memory_id,
                    "reason": r.reason,
                    "category": r.decision.category.value,
                    "kind": r.decision.kind.value,
                    "importance": r.decision.importance,
                    "content": r.decision.content,
                }
                for r in results
            ]
        )
        return 0
    for r in results:
        target = f" {r.memory_id}" if r.memory_id else ""
        say(f"{r.action}{target} [{r.decision.category.value}] {r.decision.content!r}: {r.reason}")
    return 0


async def recall(args: argparse.Namespace) -> int:
    """Print the ranked memories of a user for a query."""
    from memory.storage.store import open_store
    from memory.system import recaller

    async with open_store() as store:
        recall = recaller(store)
        recall.preload_on_miss = False  # a one-shot command would only pay for the load
        # --explain shows the ranked top k with each relevance verdict, passed or not.
        found = await recall.recall_traced(
            _scope(args), args.query, k=args.k, relevant_only=not args.explain
        )
    hits = found.hits
    if args.json:
        print_json([scored_to_dict(h) for h in hits])
        return 0
    if args.explain:
        # Which tier answered: l1 (this process's cache), l2 (Chroma + Postgres), or
        # l2-fallback (Chroma down: Postgres only).
        say(f"recall path: {found.path}")
        if found.questions:
            # A message asking several things: each question also ranked on its own.
            say("ranked as separate questions too: " + " | ".join(found.questions))
    if not hits:
        say("(no relevant memories)")
    for i, hit in enumerate(hits, 1):
        r = hit.record
        say(f"{i}. [{r.id[:8]} · {r.occurred_at.date()} · {r.kind.value}] {r.content}")
        if (line := image_line(r)) is not None:
            say(f"   {line}")
        if args.explain:
            parts = " + ".join(
                f"{k} {v:.3f}" for k, v in hit.breakdown.as_dict().items() if k != "total"
            )
            say(f"   score {hit.score:.3f} = {parts}")
            if hit.breakdown.question is not None:
                say(f"   scored as the question {hit.breakdown.question!r}")
            rel = hit.breakdown.relevance
            if rel is not None:
                say(f"   {'PASS' if rel.passed else 'FAIL'} relevance floor: {rel.reason}")
    return 0


async def gate(args: argparse.Namespace) -> int:
    """Print the gate's decision for one utterance, storing nothing."""
    from memory.gating.gate import gate as run_gate

    decision = run_gate(args.text, role=args.role, context=args.context, reply=args.reply)
    data = {k: (v.value if hasattr(v, "value") else v) for k, v in asdict(decision).items()}
    if args.json:
        print_json(data)
    else:
        verdict = "KEEP" if decision.keep else "DROP"
        say(
            f"{verdict} {decision.category.value} → {decision.kind.value} "
            f"(importance {decision.importance:.2f}, trust {decision.trust}): {decision.reason}"
        )
        say(f"stored text: {decision.content!r}")
    return 0


async def why(args: argparse.Namespace) -> int:
    """Show a memory and every audit event about it."""
    from memory.storage.store import open_store
    from memory.storage.timeline import timeline

    async with open_store() as store:
        args.memory_id = await store.resolve_id(_scope(args), args.memory_id)
        record = await store.get(_scope(args), args.memory_id)
        events = await store.events(_scope(args), args.memory_id)
        steps = await timeline(store, _scope(args), args.memory_id) if record else []
    if record is None and not events:
        say(f"no memory {args.memory_id} for {args.tenant}/{args.user}")
        return 1
    if args.json:
        print_json(
            {
                "memory": asdict(record) if record else None,
                "events": events,
                "timeline": [_step_json(s) for s in steps],
            }
        )
        return 0
    if record is not None:
        say(
            f"{record.id} [{record.status.value}] {record.kind.value}/{record.category.value}: "
            f"{record.content}"
        )
        say(
            f"  origin {record.origin.value}, source {record.source.value}, "
            f"importance {record.importance:.2f}, confidence {record.confidence:.2f}, "
            f"version {record.version}, superseded_by {record.superseded_by}"
        )
        if (line := image_line(record)) is not None:
            say(f"  {line}")
    for e in events:
        say(f"  {e['at']:%Y-%m-%d %H:%M:%S} {e['event']}: {e['reason']}")
    if len(steps) > 1:
        say("timeline (oldest first):")
        for step in steps:
            say("  " + _step_line(step, args.memory_id))
    return 0


def _step_line(step: Step, shown: str) -> str:
    from memory.storage.timeline import window_text

    r = step.record
    mark = "→" if r.id == shown else " "
    ended = ""
    if step.ended_by is not None and r.status.value != "active":
        ended = f"; {step.ended_by['event']}: {step.ended_by['reason']}"
    return f"{mark} {r.id[:8]} [{r.status.value}] {window_text(r)}: {r.content}{ended}"


def _step_json(step: Step) -> dict[str, Any]:
    r = step.record
    return {
        "id": r.id,
        "status": r.status.value,
        "content": r.content,
        "valid_from": (r.valid_from or r.occurred_at).isoformat(),
        "valid_to": r.valid_to.isoformat() if r.valid_to else None,
        "superseded_by": r.superseded_by,
        "ended_by": step.ended_by,
    }


async def restore(args: argparse.Namespace) -> int:
    """Make a value an update replaced current again; the values after it are marked wrong."""
    from memory.storage.store import open_store
    from memory.storage.timeline import NotRestorable
    from memory.storage.timeline import restore as restore_value

    async with open_store() as store:
        scope = _scope(args)
        memory_id = await store.resolve_id(scope, args.memory_id)
        try:
            record = await restore_value(store, scope, memory_id, actor="cli")
        except NotRestorable as exc:
            say(f"error: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print_json({"restored": record.id, "content": record.content})
    else:
        say(f"restored {record.id}: {record.content}")
        say(f"  the values after it are marked wrong; see `memory-agent why {record.id[:8]}`")
    return 0


async def reindex(args: argparse.Namespace) -> int:
    """Index every memory that is in Postgres but not yet in Chroma, and check Chroma has them.

    Exit code 1 when Chroma did not keep some memories or stopped answering: they stay pending.
    """
    from memory.storage.index_check import reindex_checked
    from memory.storage.store import open_store
    from memory.storage.vector import VectorIndexError

    async with open_store(reindex_on_start=False) as store:
        if getattr(args, "rebuild", False):
            done, dropped = await store.rebuild_index()
            say(f"indexed {done} memories; dropped {len(dropped)} old collections")
            return 0
        try:
            report = await reindex_checked(store)
        except VectorIndexError as exc:
            say(f"error: Chroma did not answer; nothing was checked: {exc}", file=sys.stderr)
            return 1
        # Rows written before recall features were stored, by a process without a recall
        # layer, or whose features an older tokeniser computed: computed now, so no recall has to.
        from memory.system import recaller

        filled = await recaller(store).backfill_features()
        # Rows written with context before own-text vectors were stored rank by their
        # context-bearing vector alone until they have one.
        owned = await store.backfill_own_vectors()
    if getattr(args, "json", False):
        print_json({**report.to_dict(), "recall_features": filled, "own_vectors": owned})
    else:
        say(
            f"indexed {report.verified + report.missing} memories, verified {report.verified} in"
            f" Chroma, {report.missing} missing → left pending; checked {report.checked} already"
            f" indexed, {report.lost} of them missing from Chroma (indexed again);"
            f" computed recall features of {filled}; own-text vectors of {owned}"
        )
        if report.chroma_down:
            say(f"Chroma stopped answering: {report.pending} memories left pending")
    return 0 if report.ok else 1
