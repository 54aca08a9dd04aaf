"""What consolidation runs did, for people: the runs of a tenant and each run's changes as a diff.

A run's `memory_versions` rows hold the state of every memory it touched before each change;
the earliest one is "before". "After" is the state the run left: the next version's snapshot
when the memory changed again since (a later run, an edit), else the row as it is now. A memory
the run created has no "before"; one deleted since has no "after".

A diff shown to someone who may not read the user's memories (a tenant's admin looking at
another user's) carries no text: `content` is None beside its length and a keyed digest
(`run_diff(digest=...)`), enough to see that and how much a text changed, not what it says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memory.storage.consolidation_runs import run_user_rows, tenant_runs
from memory.storage.rows import record_from_row, record_snapshot
from memory.storage.versions import load_snapshot, memory_rows, run_snapshots, version_snapshots
from memory.types import Scope

DIFF_FIELDS = (
    "content", "status", "kind", "category", "importance", "confidence", "pinned",
    "superseded_by", "expires_at",
)  # fmt: skip
"""The fields a diff shows (the rest, such as vectors and hashes, follow from these)."""


def _jsonb(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


async def list_runs(pool: Any, tenant: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """The tenant's latest runs, one row per run, newest first, with summed counts."""
    rows = await tenant_runs(pool, tenant, limit=limit)
    out = []
    for r in rows:
        totals: dict[str, float] = {}
        for counts in _jsonb(r["counts"]) or []:
            for key, value in (_jsonb(counts) or {}).items():
                if isinstance(value, int | float):
                    totals[key] = totals.get(key, 0) + value
        out.append(
            {
                "run_id": r["run_id"],
                "started_at": r["started_at"],
                "finished_at": r["finished_at"],
                "users": int(r["users"]),
                "statuses": sorted(r["statuses"]),
                "counts": totals,
            }
        )
    return out


async def run_users(pool: Any, run_id: str, tenant: str) -> list[dict[str, Any]]:
    """The run's per-user rows within one tenant (status, counts, rollback)."""
    rows = await run_user_rows(pool, run_id, tenant)
    return [{**dict(r), "counts": _jsonb(r["counts"])} for r in rows]


def _fields(snapshot: dict[str, Any] | None) -> dict[str, Any] | None:
    if snapshot is None or snapshot.get("created"):
        return None
    return {name: snapshot.get(name) for name in DIFF_FIELDS}


def _without_text(
    fields: dict[str, Any] | None, memory_id: str, digest: Callable[[str], str]
) -> dict[str, Any] | None:
    """`fields` with `content` replaced by its length and a digest bound to the memory.

    The memory id is digested with the text, so a digest matches only the same memory's other
    side of the diff: equal texts of two memories, or a digest from another record (an audit
    event's), cannot be compared.
    """
    if fields is None:
        return None
    text = str(fields.get("content") or "")
    return {
        **fields,
        "content": None,
        "content_chars": len(text),
        "content_digest": digest(f"run-diff\x00{memory_id}\x00{text}"),
    }


async def run_diff(
    pool: Any, run_id: str, scope: Scope, *, digest: Callable[[str], str] | None = None
) -> list[dict[str, Any]]:
    """Per memory the run touched for one user: {memory_id, before, after, changed}.

    With `digest` (a keyed text digest: `VectorIndex.text_digest`) the diff carries no text:
    each side's `content` is None, with `content_chars` and `content_digest` instead, and the
    entry says `content_hidden`. `changed` still names `content` when the text changed.
    """
    async with pool.acquire() as conn:
        first, last = await run_snapshots(conn, run_id, scope)
        ids = list(first)
        later = await version_snapshots(conn, scope, ids)
        rows = await memory_rows(conn, scope, ids)
    after_snap = {
        r["memory_id"]: load_snapshot(r["snapshot"])
        for r in later
        if int(r["version"]) == last.get(r["memory_id"], -2) + 1
    }
    now = {r["id"]: record_snapshot(record_from_row(r)) for r in rows}
    out: list[dict[str, Any]] = []
    for mid in ids:
        before = _fields(first[mid])
        after = _fields(after_snap.get(mid) or now.get(mid))
        changed = sorted(k for k in DIFF_FIELDS if (before or {}).get(k) != (after or {}).get(k))
        if digest is None:
            out.append({"memory_id": mid, "before": before, "after": after, "changed": changed})
            continue
        before, after = _without_text(before, mid, digest), _without_text(after, mid, digest)
        out.append({"memory_id": mid, "before": before, "after": after, "changed": changed,
                    "content_hidden": True})  # fmt: skip
    return out


__all__ = ["DIFF_FIELDS", "list_runs", "run_diff", "run_users"]
