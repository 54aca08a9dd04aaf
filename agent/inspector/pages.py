"""The inspector's pages, rendered on the server from the same calls the JSON API makes.

Every page starts from `caller_scope(request)` (the token's tenant and user); a memory id from
the URL is looked up inside that scope, so another user's memory answers 404 like a missing one.
Actions on a page are forms the page script sends to the JSON API (`/memory/...`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

from agent.auth_tokens import PERMISSION_ADMIN, auth_secret
from agent.http_auth import caller_scope, has_permission
from agent.http_memory_actions import admin_tenant, diff_digest, own_memory, tenant_run
from agent.inspector.charts import breakdown_bars, histogram, lines, rate_bar
from agent.inspector.render import (
    UI,
    action_form,
    dl,
    e,
    page,
    pre_json,
    seg,
    short,
    table,
    url,
    when,
)
from agent.limits import admit_memory_search
from agent.local_mode import LOCAL_USER_LABEL
from agent.resources import get_store
from memory.longterm import load_profile, profile_rules
from memory.longterm.consolidation import list_runs, run_diff
from memory.observability.metrics import collect_stats
from memory.storage.edits import browse, superseding, unindexed_backlog, versions
from memory.storage.timeline import Step, timeline, window_text
from memory.system import recaller
from memory.types import MemoryKind, MemoryRecord, Scope, Status

PAGE_SIZE = 50
BROWSABLE = ("active", "pending_approval", "superseded", "expired")
MAX_QUERY_CHARS = 500


def _frame(
    request: Request, title: str, body: str, current: str, status: int = 200
) -> HTMLResponse:
    scope = caller_scope(request)
    html = page(
        title,
        body,
        csrf=str(request.scope.get("lma_csrf", "")),
        user=f"{scope.user_id} @ {scope.tenant_id}"
        + (f" · {LOCAL_USER_LABEL}" if auth_secret() is None else ""),
        admin=has_permission(request, PERMISSION_ADMIN),
        current=current,
    )
    return HTMLResponse(html, status)


def _choice(request: Request, name: str, allowed: tuple[str, ...]) -> str:
    value = request.query_params.get(name, "")
    if value and value not in allowed:
        raise HTTPException(400, f"{name} must be one of: {', '.join(allowed)}")
    return value


def _date(request: Request, name: str) -> datetime | None:
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return None
    try:
        return datetime.strptime(raw[:10], "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise HTTPException(400, f"{name} must be a date YYYY-MM-DD") from None


def _select(name: str, label: str, options: tuple[str, ...], chosen: str) -> str:
    opts = '<option value="">any</option>' + "".join(
        f'<option value="{e(o)}"' + (" selected" if o == chosen else "") + f">{e(o)}</option>"
        for o in options
    )
    return (
        f'<label for="{name}">{e(label)}</label><select id="{name}" name="{name}">{opts}</select>'
    )


def _memory_link(record: MemoryRecord) -> str:
    return f'<a href="{UI}/memories/{e(seg(record.id))}">{e(short(record.content))}</a>'


def _badges(record: MemoryRecord) -> str:
    out = f'<span class="badge {e(record.status.value)}">{e(record.status.value)}</span>'
    if record.pinned:
        out += ' <span class="badge pinned">pinned</span>'
    return out


async def browse_page(request: Request) -> HTMLResponse:
    """Memories by kind, status and date, newest first."""
    scope = caller_scope(request)
    kinds = tuple(k.value for k in MemoryKind)
    kind = _choice(request, "kind", kinds)
    status = _choice(request, "status", BROWSABLE)
    since, until = _date(request, "from"), _date(request, "to")
    try:
        page_no = max(0, min(10_000, int(request.query_params.get("page", "0"))))
    except ValueError:
        raise HTTPException(400, "page must be an integer") from None
    store = await get_store()
    records = await browse(
        store,
        scope,
        kinds=[MemoryKind(kind)] if kind else list(MemoryKind),
        statuses=[status] if status else list(BROWSABLE),
        since=since,
        until=until + timedelta(days=1) if until else None,
        limit=PAGE_SIZE,
        offset=page_no * PAGE_SIZE,
    )
    q = request.query_params
    filters = (
        f'<form method="get" action="{UI}" class="filters">'
        + _select("kind", "Kind", kinds, kind)
        + _select("status", "Status", BROWSABLE, status)
        + f'<label for="from">From</label><input type="date" id="from" name="from"'
        f' value="{e(q.get("from", "")[:10])}">'
        f'<label for="to">To</label><input type="date" id="to" name="to"'
        f' value="{e(q.get("to", "")[:10])}">'
        '<button type="submit">Filter</button></form>'
    )
    rows = [[e(when(r.occurred_at)), e(r.kind.value), _badges(r), _memory_link(r)] for r in records]
    listing = (
        table(["When", "Kind", "Status", "Memory"], rows, f"{len(records)} memories")
        if records
        else '<p class="empty">No memories match.</p>'
    )
    nav = ""
    if page_no:
        nav += f'<a href="{url(UI, kind=kind, status=status, page=page_no - 1)}">Newer</a> '
    if len(records) == PAGE_SIZE:
        nav += f'<a href="{url(UI, kind=kind, status=status, page=page_no + 1)}">Older</a>'
    return _frame(request, "Memories", filters + listing + f"<p>{nav}</p>", UI)


async def search_page(request: Request) -> HTMLResponse:
    """Recall as the agent does it, with each result's score breakdown as bars."""
    scope = caller_scope(request)
    query = (request.query_params.get("q") or "").strip()[:MAX_QUERY_CHARS]
    form = (
        f'<form method="get" action="{UI}/search" role="search" class="filters">'
        f'<label for="q">Search my memories</label>'
        f'<input type="search" id="q" name="q" value="{e(query)}" required>'
        '<button type="submit">Search</button></form>'
    )
    if not query:
        return _frame(request, "Search", form, f"{UI}/search")
    await admit_memory_search(scope)  # the memory API's search bucket: ranking is CPU work
    store = await get_store()
    # record_access=False: looking at one's memories is not the agent using them.
    hits = await recaller(store).recall(scope, query, k=10, record_access=False)
    items = []
    for i, hit in enumerate(hits, 1):
        label = f"Score breakdown of result {i}"
        items.append(
            f'<li class="hit"><p>{_memory_link(hit.record)} <span class="score">score'
            f" {hit.score:.3f}</span></p>"
            + breakdown_bars(hit.breakdown.as_dict(), label=label)
            + (
                f'<p class="question">scored as the question “{e(question)}”</p>'
                if (question := hit.breakdown.question) is not None
                else ""
            )
            + "</li>"
        )
    results = (
        f'<ol class="hits">{"".join(items)}</ol>'
        if items
        else '<p class="empty">Nothing recalled.</p>'
    )
    return _frame(request, "Search", form + results, f"{UI}/search")


def _actions(record: MemoryRecord) -> str:
    api = f"/memory/memories/{seg(record.id)}"
    here = f"{UI}/memories/{seg(record.id)}"
    out = []
    if record.status in (Status.ACTIVE, Status.PENDING_APPROVAL):
        out.append(
            action_form(
                api,
                "Save new text",
                method="PATCH",
                css="edit",
                fields='<label for="content">Edit the text</label>'
                f'<textarea id="content" name="content" rows="3" required>{e(record.content)}'
                "</textarea>",
            )
        )
    out.append(action_form(f"{api}/{'unpin' if record.pinned else 'pin'}",
                           "Unpin" if record.pinned else "Pin"))  # fmt: skip
    if record.status is Status.SUPERSEDED and record.valid_to is not None:
        # An update replaced it: the user may say the update was wrong, in one action.
        out.append(action_form(f"{api}/restore", "Restore this value (the update was wrong)"))
    if record.status is Status.PENDING_APPROVAL:
        out.append(action_form(f"{api}/approve", "Approve"))
        out.append(action_form(f"{api}/reject", "Reject", next_url=UI))
    out.append(
        action_form(
            api,
            "Delete",
            method="DELETE",
            next_url=UI,
            css="danger",
            fields='<input type="checkbox" id="really" name="really" required>'
            '<label for="really">Delete this memory everywhere</label>',
        )
    )
    del here
    return '<section aria-label="Actions" class="actions">' + "".join(out) + "</section>"


def _rounded(value: Any) -> Any:
    # Scores are stored at full precision for the audit; three decimals are what a reader uses.
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def detail_text(detail: dict[str, Any] | None) -> str:
    """An audit event's detail as `key: value` pairs, numbers rounded, for a table cell."""
    parts = []
    for key, value in (detail or {}).items():
        shown = _rounded(value)
        if not isinstance(shown, str):
            shown = json.dumps(shown, ensure_ascii=False, default=str)
        parts.append(f"{key}: {shown}")
    return "; ".join(parts)


def _trail(events: list[dict[str, Any]]) -> str:
    rows = [
        [e(when(ev.get("at"))), e(ev.get("event")), e(ev.get("actor")), e(ev.get("reason")),
         e(detail_text(ev.get("detail")))]
        for ev in events
    ]  # fmt: skip
    return table(["When", "Event", "By", "Why", "Detail"], rows, "Audit trail (why)")


def _timeline(steps: list[Step], shown: str) -> str:
    """What replaced what, when and why: the value's chain, oldest first."""
    rows = []
    for step in steps:
        r = step.record
        value = _memory_link(r) if r.id != shown else f"<strong>{e(r.content)}</strong>"
        ended = step.ended_by if r.status is not Status.ACTIVE else None
        rows.append([value, e(window_text(r)), e(r.status.value),
                     e(f"{ended['event']}: {ended['reason']}" if ended else ""),
                     e(when(ended["at"]) if ended else "")])  # fmt: skip
    return "<h2>Timeline</h2>" + table(
        ["Value", "Held", "Status", "Ended by", "When"], rows, "What replaced what, and why"
    )


async def memory_page(request: Request) -> HTMLResponse:
    """One memory: content, origin, scores, versions, audit trail, what it replaced or was."""
    scope, store, record = await own_memory(request)
    memory_id = record.id
    events = await store.events(scope, memory_id)
    history = await versions(store, scope, memory_id)
    replaced = await superseding(store, scope, memory_id)
    steps = await timeline(store, scope, memory_id)
    facts = {
        "Content": f'<p class="content">{e(record.content)}</p>',
        "Status": _badges(record),
        "Kind / category": e(f"{record.kind.value} / {record.category.value}"),
        "Origin / source": e(f"{record.origin.value} / {record.source.value}"),
        "Confidence": e(f"{record.confidence:.2f}"),
        "Importance": e(f"{record.importance:.2f}"),
        "Access count": e(record.access_count),
        "Happened": e(when(record.occurred_at)),
        "Held": e(window_text(record)),
        "Expires": e(when(record.expires_at) or "never"),
        "Version": e(record.version),
        "Tags": e(", ".join(record.tags) or "none"),
    }
    if record.superseded_by:
        facts["Superseded by"] = (
            f'<a href="{UI}/memories/{e(seg(record.superseded_by))}">{e(record.superseded_by)}</a>'
        )
    if replaced:
        facts["Replaced"] = (
            "<ul>" + "".join(f"<li>{_memory_link(r)}</li>" for r in replaced) + "</ul>"
        )
    vrows = [
        [e(v["version"]), e(when(v["changed_at"])),
         e(v["run_id"] or v["snapshot"].get("change", "")),
         e(short(str(v["snapshot"].get("content", "")), 300))]
        for v in history
    ]  # fmt: skip
    body = (
        dl(facts)
        + _actions(record)
        + (_timeline(steps, memory_id) if len(steps) > 1 else "")
        + "<h2>Versions</h2>"
        + (table(["Version", "Changed", "By", "Text then"], vrows) if vrows
           else '<p class="empty">No earlier versions.</p>')
        + "<h2>Why: the audit trail</h2>"
        + _trail(events)
    )  # fmt: skip
    return _frame(request, "Memory", body, "")


async def profile_page(request: Request) -> HTMLResponse:
    """The profile injected as rules, each with the memory it came from."""
    scope = caller_scope(request)
    store = await get_store()
    prof = await load_profile(store, scope)
    rules = profile_rules(prof)
    rows = []
    for (name, field), rule in zip(prof.fields.items(), rules, strict=True):
        source = await store.get(scope, field.memory_id)
        link = _memory_link(source) if source else e(field.memory_id)
        rows.append([e(name), e(rule), e(f"{field.confidence:.2f}"), e(field.origin), link])
    body = (
        "<p>These rules go into every prompt of the agent, above the recalled evidence.</p>"
        + table(["Field", "Rule as injected", "Confidence", "Origin", "From memory"], rows)
        if rows
        else '<p class="empty">No profile yet: no long-term preference was recognised.</p>'
    )
    return _frame(request, "Profile", body, f"{UI}/profile")


async def account_page(request: Request) -> HTMLResponse:
    """Export everything, or forget everything (with a receipt)."""
    caller_scope(request)
    body = (
        '<h2>Export</h2><p><a href="/memory/export" download="my-memory.json">Download everything'
        " kept about me (JSON)</a></p><h2>Forget me</h2>"
        "<p>Deletes every memory, version, audit text, profile and conversation of yours."
        " The receipt lists what was removed.</p>"
        + action_form(
            "/memory/forget",
            "Forget me",
            receipt=True,
            css="danger",
            fields='<input type="checkbox" id="confirm" name="confirm" required>'
            '<label for="confirm">Yes, delete all of my data</label>',
        )
    )
    return _frame(request, "My data", body, f"{UI}/account")


async def _counts_over_time(store: Any, tenant: str) -> dict[str, list[tuple[str, float]]]:
    series: dict[str, list[tuple[str, float]]] = {}
    totals: dict[str, float] = {}
    for day, kind, n in await store.daily_counts(tenant):
        totals[kind] = totals.get(kind, 0) + n
        series.setdefault(kind, []).append((day, totals[kind]))
    return series


async def admin_page(request: Request) -> HTMLResponse:
    """Consolidation runs, metrics charts and the unindexed backlog of the admin's tenant."""
    tenant = admin_tenant(request)
    store = await get_store()
    stats = await collect_stats(store, tenant=tenant)
    run_rows = [
        [f'<a href="{UI}/admin/runs/{e(seg(r["run_id"]))}">{e(r["run_id"])}</a>',
         e(when(r["started_at"])), e(", ".join(r["statuses"])), e(r["users"]),
         e(", ".join(f"{k} {v:g}" for k, v in sorted(r["counts"].items())))]
        for r in await list_runs(store.pool, tenant)
    ]  # fmt: skip
    lag = await unindexed_backlog(store, tenant)
    latency = stats["recall_latency_seconds"]
    recall_cache = stats["cache"].get("recall", {})
    body = (
        "<h2>Consolidation runs</h2>"
        + (table(["Run", "Started", "Status", "Users", "Changes"], run_rows) if run_rows
           else '<p class="empty">No runs yet.</p>')
        + "<h2>Metrics</h2><h3>Memories by kind over time</h3>"
        + lines(await _counts_over_time(store, tenant), label="Memories by kind, cumulative")
        + f"<h3>Recall latency (this process, {int(latency['count'])} recalls)</h3>"
        + histogram(latency["buckets"], label="Recall latency histogram, milliseconds")
        + "<h3>Rates</h3>"
        + rate_bar(recall_cache.get("hit_rate"), label="Recall cache hit rate")
        + rate_bar(stats["usage"]["hit_rate"], label="Memory hit rate (injected and used)")
        + rate_bar(stats["pollution"]["rate"], label="Pollution rate")
        + "<h2>Index backlog</h2>"
        + f'<p id="backlog">{e(lag["unindexed"])} memories wait to be indexed'
        + (f" (oldest {e(when(lag['oldest']))})" if lag["oldest"] else "") + ".</p>"
        + action_form("/memory/admin/reindex", "Reindex now", receipt=True)
    )  # fmt: skip
    return _frame(request, "Admin", body, f"{UI}/admin")


def _diff_cell(before: Any, after: Any) -> str:
    if before == after:
        return e(before)
    return f"<del>{e(before)}</del> → <ins>{e(after)}</ins>"


def _shown(side: dict[str, Any], field: str) -> Any:
    """A diff side's value of `field`; a hidden text (`run_diff(digest=...)`) as its stand-in."""
    if field == "content" and side and side.get("content") is None and "content_digest" in side:
        return f"[text hidden: {side['content_chars']} characters, digest {side['content_digest']}]"
    return side.get(field)


async def run_page(request: Request) -> HTMLResponse:
    """One consolidation run: per user, each memory before → after; a rollback button."""
    tenant, run_id, store, users = await tenant_run(request)
    parts = []
    for row in users:
        digest = diff_digest(request, store, row["user_id"])
        scope = Scope(tenant, row["user_id"])
        changes = await run_diff(store.pool, run_id, scope, digest=digest)
        rows = []
        for c in changes:
            before, after = c["before"] or {}, c["after"] or {}
            what = "created" if not c["before"] else ("removed" if not c["after"] else "changed")
            fields = c["changed"] or ["content"]
            cells = "<br>".join(
                f"<b>{e(f)}</b>: {_diff_cell(_shown(before, f), _shown(after, f))}" for f in fields
            )
            rows.append([e(c["memory_id"]), e(what), cells])
        parts.append(
            f"<h2>User {e(row['user_id'])}: {e(row['status'])}</h2>"
            + pre_json(row["counts"])
            + (table(["Memory", "What", "Diff"], rows, "Changes") if rows
               else '<p class="empty">No memory changes recorded.</p>')
        )  # fmt: skip
    rolled = all(r["status"] == "rolled_back" for r in users)
    button = (
        "<p>This run has been rolled back.</p>"
        if rolled
        else action_form(
            f"/memory/admin/runs/{seg(run_id)}/rollback",
            "Roll back this run",
            receipt=True,
            css="danger",
        )  # fmt: skip
    )
    return _frame(request, f"Run {run_id}", button + "".join(parts), "")
