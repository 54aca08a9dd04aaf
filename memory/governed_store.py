"""The memory system as a LangGraph `BaseStore`: the standard interface, every write governed.

Namespaces map onto the isolation key and the memory kind:

| namespace                          | means                                                |
|------------------------------------|------------------------------------------------------|
| `(tenant_id, user_id)`             | search / list prefix: all the user's memories |
| `(tenant_id, user_id, "memories")` | all kinds; a put lets the gate choose the kind |
| `(tenant_id, user_id, kind)`       | one kind: episodic, semantic, procedural, preference |

Anything else (a missing user, a fourth label, an unknown section) is refused with
`InvalidNamespaceError`. The tenant's shared agent memory (`agents:shared` as the user) can be
read by callers of that tenant and is written only through the agent bus, which stamps the
publishing agent.

An item's key is the one the caller chose on `put` (kept in `memory_store_keys`), else the
memory's id. Its value is the stored memory as it really is: the redacted `content`, `kind`,
`category`, `status` (a superseded memory says so, with `superseded_by`), importance and
confidence, origin, source, expiry and the publishing `agent_id` for shared knowledge. Search
results are ranked like any BaseStore's (the top ones, relevant or not, at most `MAX_RANKED`
deep: a page past it comes back short, as the end of the results) and also carry
`score_breakdown` (the terms of the hybrid recall score, which sum to `SearchItem.score`) and
`relevance`: whether the item passes the relevance floor that decides what the agent injects on
its own, and why.

`put` runs the governed write path: consent, the gate (classification, redaction, refusal of
high-risk secrets and instruction-like text), near-duplicate reinforcement, the conflict policy,
versions and the audit log. The value is `{"content": text}`; `"insist": true` says the caller
means it: a statement the gate would drop as unimportant (chit-chat) is kept anyway, but unsafe
content (secrets, instructions to the system in any language the screen reads or encoded in
base64/hex, text that was mostly a redacted secret) is refused even then, and a low-trust
episode never takes a rule kind from its namespace. A dropped or refused put stores nothing
(`get` answers None) and leaves a `gate_drop` audit event with the reason. A put under a key
that already names a memory replaces it: the new memory supersedes the old one.
`put(ns, key, None)` (and `delete`) deletes the memory everywhere, as the one-memory forget
does. `ttl` (minutes, as `BaseStore` defines it) becomes the memory's expiry; without one the
gate's per-category TTL applies. Reads never refresh a TTL: expiry is a retention rule, not a
cache policy.

Who may touch which namespace is decided by `caller`: a function returning the authenticated
scope of the current request or run (None when there is none, for library use). When it names a
scope, any namespace of another user or tenant is refused with `PermissionError`, whatever the
namespace says.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memory.gating.gate import GateDecision, GatePolicy, Role, gate
from memory.gating.ingest import to_new_memory
from memory.gating.ingest.apply import ConflictStrategy, apply_resolution
from memory.gating.ingest.pastes import paste_decision
from memory.gating.machine_text import split_pastes
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules.decide import drop, screen
from memory.recall.recaller import recaller_for
from memory.sharing.events import SHARED_USER
from memory.storage import store_keys
from memory.storage.forget_one import delete_memory
from memory.storage.store import MemoryStore
from memory.storage.tombstones import UserForgottenError, is_forgotten, writer
from memory.types import (
    Category,
    MemoryKind,
    MemoryRecord,
    Origin,
    Scope,
    ScopeError,
    Source,
    Status,
)

log = logging.getLogger(__name__)

ALL_KINDS = "memories"
"""The namespace section that stands for every kind of memory."""
MAX_KEY_CHARS = 256
MAX_LIMIT = 100
MAX_OFFSET = 10_000
MAX_RANKED = 200
"""How deep a search with a `query` ranks: the top 200 of the user's memories, a filter applied
among them. A page past that depth comes back short or empty, which BaseStore clients read as
the end of the results (they page until a page is short); an error there would break a client
paging through a large user's results, and the ranking's tail is noise anyway. Listing without
a query pages on to `MAX_OFFSET` by recency, an indexed read."""
_SCAN_PAGE = 500
"""Rows read per step while a filtered listing looks for matches (each step yields the loop)."""
# Insisted-on statements rank like an ordinary explicit fact, not like the noise they were
# classified as: the caller's word is the evidence that it matters.
INSISTED_IMPORTANCE = 0.5
# A put whose new memory lost its conflict, or waits for approval, leaves the key's current
# memory in force; the key then shows the new one as it stands (superseded, or pending).
_KEEPS_PREVIOUS = frozenset({"rejected", "pending_approval"})
_FILTER_OPS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"})

CallerScope = Callable[[], Scope | None]
_SYNC_CALLER: ContextVar[tuple[Scope | None] | None] = ContextVar("store_sync_caller", default=None)


class ScopeDeniedError(PermissionError):
    """A namespace outside the caller's own memory (or a write to the agents' shared one)."""


@dataclass(frozen=True, slots=True)
class Target:
    """A namespace resolved to whose memories and which kinds."""

    scope: Scope
    kinds: tuple[MemoryKind, ...] | None
    section: str

    def namespace(self) -> tuple[str, ...]:
        """The namespace items of this target are reported under."""
        return (self.scope.tenant_id, self.scope.user_id, self.section)


@dataclass(frozen=True, slots=True)
class PutOutcome:
    """What a governed put did: the gate's action and the memory the key now names."""

    action: str
    memory_id: str | None
    reason: str


def _no_caller() -> Scope | None:
    return None


def parse_namespace(namespace: Sequence[str], *, prefix: bool = False) -> Target:
    """Resolve a namespace to a scope and kinds; InvalidNamespaceError for anything else."""
    labels = tuple(namespace)
    if len(labels) < 2 or (not prefix and len(labels) < 3) or len(labels) > 3:
        raise InvalidNamespaceError(
            "namespace must be (tenant_id, user_id, 'memories' | kind)"
            + (" or a (tenant_id, user_id) prefix" if prefix else "")
            + f"; got {len(labels)} labels"
        )
    try:
        scope = Scope(labels[0], labels[1])
    except ScopeError as exc:
        raise InvalidNamespaceError(str(exc)) from None
    section = labels[2] if len(labels) == 3 else ALL_KINDS
    if section == ALL_KINDS:
        return Target(scope, None, section)
    try:
        return Target(scope, (MemoryKind(section),), section)
    except ValueError:
        allowed = ", ".join([ALL_KINDS, *(k.value for k in MemoryKind)])
        raise InvalidNamespaceError(
            f"namespace section must be one of {allowed}; got {section!r}"
        ) from None


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise ValueError(f"item key must be 1-{MAX_KEY_CHARS} characters of text without NUL")


def _value_text(value: Mapping[str, Any]) -> str:
    if not isinstance(value, Mapping):
        raise ValueError("item value must be an object such as {'content': 'text'}")
    content = value.get("content")
    if isinstance(content, Mapping | list):
        # Structured memories (LangMem with a schema) are kept as their compact JSON text.
        content = json.dumps(content, ensure_ascii=False, sort_keys=True)
    if not isinstance(content, str) or not content.strip():
        raise ValueError("item value needs 'content': the memory as non-empty text")
    return content


def _insist(value: Mapping[str, Any]) -> bool:
    flag = value.get("insist", False)
    if not isinstance(flag, bool):
        raise ValueError("'insist' must be true or false")
    return flag


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def item_value(record: MemoryRecord) -> dict[str, Any]:
    """An item's value: the memory as stored (redacted content, status, provenance)."""
    return {
        "content": record.content,
        "memory_id": record.id,
        "kind": record.kind.value,
        "category": record.category.value,
        "status": record.status.value,
        "superseded_by": record.superseded_by,
        "importance": record.importance,
        "confidence": record.confidence,
        "origin": record.origin.value,
        "source": record.source.value,
        "trust": record.provenance.get("trust", "normal"),
        "agent_id": record.provenance.get("agent_id"),
        "tags": list(record.tags),
        "expires_at": _iso(record.expires_at),
        "version": record.version,
    }


def _compare(actual: Any, operator: str, expected: Any) -> bool:
    if operator == "$eq":
        return bool(actual == expected)
    if operator == "$ne":
        return bool(actual != expected)
    if operator in ("$in", "$nin"):
        inside = isinstance(expected, list) and actual in expected
        return inside if operator == "$in" else not inside
    try:
        if operator == "$gt":
            return bool(actual > expected)
        if operator == "$gte":
            return bool(actual >= expected)
        if operator == "$lt":
            return bool(actual < expected)
        return bool(actual <= expected)
    except TypeError:
        return False


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """BaseStore filter semantics: each key equals, or satisfies its `$op` conditions."""
    for key, expected in (conditions or {}).items():
        actual = value.get(key)
        if isinstance(expected, Mapping) and expected and all(k in _FILTER_OPS for k in expected):
            if not all(_compare(actual, op, arg) for op, arg in expected.items()):
                return False
        elif isinstance(expected, Mapping) and any(str(k).startswith("$") for k in expected):
            raise ValueError(f"unsupported filter operator in {key!r}; use {sorted(_FILTER_OPS)}")
        elif actual != expected:
            return False
    return True


def _matching(
    records: Sequence[MemoryRecord], conditions: Mapping[str, Any]
) -> list[tuple[MemoryRecord, dict[str, Any], float | None]]:
    """The records whose item value passes `conditions`, with that value (no score)."""
    values = ((record, item_value(record)) for record in records)
    return [(record, value, None) for record, value in values if matches(value, conditions)]


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


class GovernedStore(BaseStore):
    """A LangGraph `BaseStore` whose writes go through the memory gate and conflict policy."""

    supports_ttl = True

    def __init__(
        self,
        memory: MemoryStore,
        *,
        caller: CallerScope = _no_caller,
        role: Role = "user",
        policy: GatePolicy | None = None,
        privacy: PrivacyFilter | None = None,
        conflict_strategy: ConflictStrategy = "policy",
        require_approval: bool = True,
    ) -> None:
        """Wrap `memory`; `caller` names the authenticated scope of the current call, if any."""
        self.memory = memory
        self.caller = caller
        self.role: Role = role
        self.policy = policy or GatePolicy()
        self.privacy = privacy or PrivacyFilter()
        self.conflict_strategy: ConflictStrategy = conflict_strategy
        self.require_approval = require_approval
        self._loop = asyncio.get_running_loop()

    def on_current_loop(self) -> bool:
        """True when called on the event loop the store's connections belong to."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    # -- BaseStore ---------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Synchronous batch for code on another thread; runs on the store's event loop."""
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            raise asyncio.InvalidStateError(
                "synchronous store calls inside the store's event loop would deadlock; "
                "use the async methods (aget, aput, asearch, adelete, alist_namespaces)"
            )
        if not self._loop.is_running():
            raise asyncio.InvalidStateError(
                "the store's event loop is not running: open the store where it is used"
            )
        # The caller is whoever called here, on this thread: the coroutine runs as a task of
        # the store's loop, which does not see this thread's context (the run's auth user).
        caller = self.caller()
        work = self._batch_as(list(ops), caller)
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    async def _batch_as(self, ops: list[Op], caller: Scope | None) -> list[Result]:
        token = _SYNC_CALLER.set((caller,))
        try:
            return await self.abatch(ops)
        finally:
            _SYNC_CALLER.reset(token)

    def _caller(self) -> Scope | None:
        passed = _SYNC_CALLER.get()
        return passed[0] if passed is not None else self.caller()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each operation in order (puts see the effect of earlier ones)."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, PutOp):
                await self.put_governed(op.namespace, op.key, op.value, ttl=op.ttl)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            else:
                raise ValueError(f"unknown store operation {type(op).__name__}")
        return results

    # -- scope -------------------------------------------------------------------------------

    def _target(self, namespace: Sequence[str], *, prefix: bool = False, write: bool) -> Target:
        target = parse_namespace(namespace, prefix=prefix)
        shared = target.scope.user_id == SHARED_USER
        if shared and write:
            raise ScopeDeniedError(
                "the shared agent namespace is written only by agents, through the agent bus"
            )
        caller = self._caller()
        same_tenant_shared = (
            shared and caller is not None and target.scope.tenant_id == caller.tenant_id
        )
        if caller is not None and target.scope != caller and not same_tenant_shared:
            raise ScopeDeniedError("namespace outside the caller's own memory")
        return target

    async def _memory_id(self, scope: Scope, key: str) -> str | None:
        return await store_keys.memory_id_for(self.memory.pool, scope, key)

    async def _keys(self, scope: Scope, memory_ids: list[str]) -> dict[str, str]:
        return await store_keys.keys_for(self.memory.pool, scope, memory_ids)

    async def _bind_key(self, scope: Scope, key: str, memory_id: str) -> None:
        await store_keys.bind_key(self.memory.pool, scope, key, memory_id)

    # -- reads -------------------------------------------------------------------------------

    async def _record(self, target: Target, key: str) -> MemoryRecord | None:
        bound = await self._memory_id(target.scope, key)
        record = await self.memory.get(target.scope, bound or key)
        if record is None or record.status is Status.DELETED:
            return None
        if bound is None and record.status is Status.SUPERSEDED:
            # A bare memory id names that memory while it is current. Once replaced, the id
            # is either bound to its successor or (the successor deleted) names nothing: the
            # superseded version is history, not the item.
            return None
        if target.kinds is not None and record.kind not in target.kinds:
            return None
        return record

    async def _get(self, op: GetOp) -> Item | None:
        _check_key(op.key)
        target = self._target(op.namespace, write=False)
        record = await self._record(target, op.key)
        if record is None:
            return None
        return Item(
            value=item_value(record),
            key=op.key,
            namespace=target.namespace(),
            created_at=record.created_at,
            updated_at=record.created_at,
        )

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        target = self._target(op.namespace_prefix, prefix=True, write=False)
        if not 0 <= op.offset <= MAX_OFFSET or not 1 <= op.limit <= MAX_LIMIT:
            raise ValueError(f"limit must be 1-{MAX_LIMIT} and offset 0-{MAX_OFFSET}")
        matches({}, op.filter)  # an unsupported operator fails before any query runs
        want = op.offset + op.limit
        query = (op.query or "").strip()
        if query and op.offset >= MAX_RANKED:
            page = []  # past the ranked depth: the end of the results, nothing to rank
        elif query:
            # Ranking costs CPU in proportion to its depth: no caller makes the server rank
            # thousands of memories for one page (`MAX_RANKED`).
            pairs = await self._ranked(target, query, min(want, MAX_RANKED), op.filter)
            page = pairs[op.offset : want]
        else:
            page = await self._recent(target, op.offset, op.limit, op.filter)
        keys = await self._keys(target.scope, [r.id for r, _, _ in page])
        return [
            SearchItem(
                namespace=target.namespace(),
                key=keys.get(record.id, record.id),
                value=value,
                created_at=record.created_at,
                updated_at=record.created_at,
                score=score,
            )
            for record, value, score in page
        ]

    async def _ranked(
        self, target: Target, query: str, want: int, conditions: Mapping[str, Any] | None
    ) -> list[tuple[MemoryRecord, dict[str, Any], float | None]]:
        # A filter is applied after ranking, so ask for more than the page: 4x covers filters
        # that keep a quarter of the hits, within `MAX_RANKED`; beyond that the page may come
        # back short.
        k = want if not conditions else min(want * 4, MAX_RANKED)
        # Ranked like any BaseStore's search (a caller asked, and LangMem's search tool expects
        # the top results); each item says whether it passes the relevance floor that decides
        # what the agent injects on its own.
        hits = await recaller_for(self.memory).recall(
            target.scope, query, k=k, kinds=target.kinds, record_access=False, relevant_only=False
        )
        out: list[tuple[MemoryRecord, dict[str, Any], float | None]] = []
        for hit in hits:
            rel = hit.breakdown.relevance
            value = {
                **item_value(hit.record),
                "score_breakdown": hit.breakdown.as_dict(),
                "relevance": rel.as_dict() if rel is not None else None,
            }
            if matches(value, conditions):
                out.append((hit.record, value, hit.score))
        return out

    async def _recent(
        self, target: Target, offset: int, limit: int, conditions: Mapping[str, Any] | None
    ) -> list[tuple[MemoryRecord, dict[str, Any], float | None]]:
        if not conditions:  # the page itself, read at its offset
            records = await self.memory.list_memories(
                target.scope, kinds=target.kinds, limit=limit, offset=offset
            )
            return [(r, item_value(r), None) for r in records]
        out: list[tuple[MemoryRecord, dict[str, Any], float | None]] = []
        scanned = 0
        while len(out) < offset + limit:
            records = await self.memory.list_memories(
                target.scope, kinds=target.kinds, limit=_SCAN_PAGE, offset=scanned
            )
            # Matching thousands of rows is CPU work: in a worker thread, a page at a time.
            out.extend(await asyncio.to_thread(_matching, records, conditions))
            if len(records) < _SCAN_PAGE or scanned >= MAX_OFFSET:
                break
            scanned += _SCAN_PAGE
        return out[offset : offset + limit]

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        caller = self._caller()
        conditions = op.match_conditions or ()
        prefix = next((tuple(c.path) for c in conditions if c.match_type == "prefix"), ())
        fixed = [p if p != "*" else None for p in prefix[:2]]
        if caller is not None and fixed != [caller.tenant_id, caller.user_id]:
            raise ScopeDeniedError("list_namespaces is confined to the caller's own prefix")
        tenant = fixed[0] if fixed else None
        user = fixed[1] if len(fixed) > 1 else None
        owners = await self.memory.owners(tenant=tenant, user=user)
        found: list[tuple[str, ...]] = [(o.tenant_id, o.user_id, ALL_KINDS) for o in owners]
        found = [ns for ns in found if all(_namespace_matches(ns, c) for c in conditions)]
        if op.max_depth is not None:
            found = sorted(set(ns[: op.max_depth] for ns in found))
        return found[op.offset : op.offset + op.limit]

    # -- writes ------------------------------------------------------------------------------

    async def put_governed(
        self,
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any] | None,
        *,
        ttl: Any = None,
    ) -> PutOutcome:
        """`put` with its outcome: stored, reinforced, superseded, dropped, refused, deleted."""
        _check_key(key)
        target = self._target(namespace, write=True)
        if value is None:
            return await self._delete(target, key)
        # One writer from its first read to its last write: a forget of the user while the
        # put runs refuses what it would still write (`storage.tombstones`).
        try:
            async with writer(self.memory.pool, target.scope):
                return await self._put(target, key, value, ttl)
        except Exception as exc:
            if not is_forgotten(exc) or isinstance(exc, UserForgottenError):
                raise
            log.warning("a store put was refused: its user was forgotten while it ran")
            raise UserForgottenError(
                "put refused: the user was forgotten while it ran; put again to start anew"
            ) from exc

    async def _put(
        self, target: Target, key: str, value: Mapping[str, Any], ttl: Any
    ) -> PutOutcome:
        text, insist = _value_text(value), _insist(value)
        scope = target.scope
        if not await self.memory.consent(scope):
            await self._log_drop(scope, "no consent to store memories", text)
            return PutOutcome("no_consent", None, "the user has not consented to memories")
        # Redaction and the poisoning screen over up to 20,000 characters: off the event loop.
        decision = await asyncio.to_thread(self._decide, text, insist)
        if not decision.keep:
            await self._log_drop(scope, decision.reason, text)
            return PutOutcome("dropped", None, decision.reason)
        item = to_new_memory(
            decision,
            source=Source.CHAT if self.role == "user" else Source.TOOL,
            provenance={"via": "store"},
            occurred_at=None,
            require_approval=self.require_approval,
        )
        if target.kinds is not None and decision.trust != "low":
            # The namespace chooses the kind of a trusted memory only: a low-trust episode (text
            # the screen flagged, kept for audit) put under "preference" stays an episode.
            item = replace(item, kind=target.kinds[0])
        if isinstance(ttl, int | float) and not isinstance(ttl, bool):
            if ttl <= 0:
                raise ValueError("ttl must be a positive number of minutes")
            item = replace(item, ttl_days=float(ttl) / 1440.0)
        current = await self._record(target, key)
        previous = current.id if current is not None else None
        outcome = await apply_resolution(
            self.memory,
            scope,
            item,
            self.conflict_strategy,
            reason=decision.reason,
            lifetime_asked=ttl is not None,
        )
        if outcome.memory_id is not None:
            replaced = outcome.action not in _KEEPS_PREVIOUS
            if replaced and previous is not None and previous != outcome.memory_id:
                # The caller replaced what this key named: the old memory stays, superseded.
                await self.memory.set_status(
                    scope,
                    previous,
                    Status.SUPERSEDED,
                    reason="replaced by a store put under the same key",
                    superseded_by=outcome.memory_id,
                    event="supersede",
                )
            await self._bind_key(scope, key, outcome.memory_id)
        return PutOutcome(outcome.action, outcome.memory_id, outcome.reason)

    def _decide(self, text: str, insist: bool) -> GateDecision:
        parts = split_pastes(text)
        if parts.pastes:
            return self._decide_paste(text, parts.prose, paste_decision(
                parts, role=self.role, policy=self.policy, privacy=self.privacy, explicit=insist
            ))  # fmt: skip
        _, _, verdict = screen(text, self.role, self.policy, self.privacy)
        decision = gate(text, role=self.role, policy=self.policy, privacy=self.privacy)
        if decision.keep or not insist or verdict is not None or decision.findings:
            # Unsafe content (a high-risk secret, an instruction to the system) was decided by
            # the screen, and a dropped text that held a secret was mostly that secret:
            # insisting overrides neither.
            return decision
        category = Category.FACT if decision.category is Category.NOISE else decision.category
        return replace(
            decision,
            keep=True,
            category=category,
            importance=max(decision.importance, INSISTED_IMPORTANCE),
            origin=Origin.EXPLICIT if self.role == "user" else decision.origin,
            reason=f"kept because the caller insisted (gate: {decision.reason})",
            ttl_days=self.policy.ttl_for(category, low_trust=decision.trust == "low"),
        )

    def _decide_paste(
        self, text: str, prose: str, pasted: tuple[str, GateDecision] | None
    ) -> GateDecision:
        """One put holding a paste (a log, code, a dump) makes one memory, never a rule.

        A put is one item, so it is the statement around the paste when the gate keeps that
        (the lesson the user drew), else the paste's low-trust account (`paste_decision`),
        which neither insisting nor the namespace turns into a preference.
        """
        if prose:
            decision = gate(prose, role=self.role, policy=self.policy, privacy=self.privacy)
            if decision.keep:
                return decision
        if pasted is not None:
            return pasted[1]
        content, findings, _ = screen(text[:200], self.role, self.policy, self.privacy)
        return drop(content, findings, "pasted machine text from the assistant", self.role)

    async def _delete(self, target: Target, key: str) -> PutOutcome:
        record = await self._record(target, key)
        if record is None:
            return PutOutcome("absent", None, "no such item")
        await delete_memory(self.memory, target.scope, record.id, reason="deleted via the store")
        return PutOutcome("deleted", record.id, "deleted via the store")

    async def _log_drop(self, scope: Scope, reason: str, raw: str) -> None:
        # A keyed digest, never the text: what was refused may be what the user wanted kept out.
        detail = {"via": "store", "digest": self.memory.index.text_digest(raw)}
        await self.memory.record_event(scope, None, "gate_drop", reason, detail)


__all__ = [
    "ALL_KINDS",
    "CallerScope",
    "GovernedStore",
    "PutOutcome",
    "ScopeDeniedError",
    "Target",
    "item_value",
    "matches",
    "parse_namespace",
]
