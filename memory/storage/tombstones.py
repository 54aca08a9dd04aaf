"""Forget-me is final: a per-user tombstone, and writers that started before it are refused.

A forget (`memory.storage.forget`) first takes the user's *forget lock* (a transaction-level
advisory lock, exclusive) and bumps the user's **epoch** in `user_epochs` (keyed by a keyed
digest of tenant and user, never the ids in clear), then deletes. Every
insert or update of a row keyed by `tenant_id` + `user_id` fires a trigger (`lma_user_guard`,
attached to every such table by `lma_attach_guards`, so a writer cannot forget to check) that
takes the same lock *shared*, in the writer's own transaction, and compares the user's epoch:

- a write transaction that got there first holds the lock until it commits, so the forget waits
  for it and then deletes what it wrote (in-flight work drains);
- a writer that *declared* the epoch it started at (`writer`, `writing_as`: a turn, an import, a
  consolidation run, a store put) is refused once the user's epoch has moved past it, however
  long after the forget it writes;
- an undeclared writer is refused when its transaction began before the forget finished.

The refusal is SQLSTATE `LMF01` ("the user was forgotten after this writer started"), with no
user text in it; `is_forgotten` recognises it. A new start after a forget is a writer that
captures the new epoch: a new session, a new import, a new thread. The threads the forget found
stay dead: `forgotten_threads` lists them and a second trigger (`lma_thread_guard`, on the
checkpoint tables) refuses any checkpoint write for them, under a per-thread lock the forget
holds exclusively, so a turn still running on another worker cannot write the user's text back
after the receipt (SQLSTATE `LMF02`).

Writers declare through a context variable, which the connection pool sends to Postgres when a
connection is acquired (`declare_on_acquire`, as the session setting `lma.writer_epochs`; the
pool's reset on release clears it).
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from memory.storage.db import Connection, Database
from memory.storage.deletion_outbox import owner_digest
from memory.types import Scope

log = logging.getLogger(__name__)

USER_LOCK_CLASS = 0x6C6D66  # "lmf": the per-user forget lock (key: hashtext(tenant/user))
THREAD_LOCK_CLASS = 0x6C6D74  # "lmt": the per-thread forget lock (key: hashtext(thread id))
FORGOTTEN_SQLSTATE = "LMF01"
DEAD_THREAD_SQLSTATE = "LMF02"
SETTING = "lma.writer_epochs"
DERIVED_FROM = "source_owner"
"""Provenance (and event data) key of a copy kept in another scope of the tenant (the agents'
shared memory): the `owner_digest` of the user it came from, so forgetting that user finds it
without the copy naming the user."""
# The key of the declared epochs of users whose copies a writer makes (by `owner_digest`);
# not a tenant id (`#` is not allowed in one).
DERIVED_CLAIMS = "#"

# The migration's SQL (appended to `migrations.MIGRATIONS`). The trigger functions are the
# check; `lma_attach_guards` attaches them to every table that needs one and is run after
# every migration set (and by the checkpointer, whose tables LangGraph creates), so a table a
# later migration adds is guarded without anyone remembering to.
MIGRATION = f"""
INSERT INTO index_keys (name, key) VALUES ('forget_owner',
    decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))
    ON CONFLICT (name) DO NOTHING;
CREATE FUNCTION lma_owner_digest(tenant text, usr text) RETURNS bytea
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sha256(k.key || convert_to(length(tenant) || ':' || tenant || usr, 'UTF8'))
    FROM index_keys k WHERE k.name = 'forget_owner'
$$;
CREATE FUNCTION lma_derived_digest(source text) RETURNS bytea
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sha256(k.key || convert_to('derived:' || source, 'UTF8'))
    FROM index_keys k WHERE k.name = 'forget_owner'
$$;
CREATE TABLE user_epochs (
    owner         bytea PRIMARY KEY,
    epoch         bigint NOT NULL,
    forgotten_at  timestamptz NOT NULL
);
CREATE TABLE forgotten_threads (
    thread_id     text PRIMARY KEY,
    forgotten_at  timestamptz NOT NULL DEFAULT now()
);
CREATE FUNCTION lma_check_epoch(who bytea, lock_key integer, claim_path text[]) RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    claimed bigint;
    now_epoch bigint;
    forgotten timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock_shared({USER_LOCK_CLASS}, lock_key);
    SELECT epoch, forgotten_at INTO now_epoch, forgotten FROM user_epochs WHERE owner = who;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    claimed := (nullif(current_setting('{SETTING}', true), '')::jsonb #>> claim_path)::bigint;
    IF claimed >= now_epoch OR (claimed IS NULL AND forgotten < transaction_timestamp()) THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'refused: the user was forgotten after this writer started (writer epoch %, '
        'user epoch %); start again as a new session', coalesce(claimed::text, 'undeclared'),
        now_epoch USING ERRCODE = '{FORGOTTEN_SQLSTATE}';
END $$;
CREATE FUNCTION lma_user_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    source text;
BEGIN
    IF NEW.tenant_id IS NOT NULL AND NEW.user_id IS NOT NULL THEN
        PERFORM lma_check_epoch(lma_owner_digest(NEW.tenant_id, NEW.user_id),
                                hashtext(NEW.tenant_id || '/' || NEW.user_id),
                                ARRAY[NEW.tenant_id, NEW.user_id]);
    END IF;
    -- A copy another scope keeps of a user (the agents' shared memory, the bus's log) names
    -- that user by digest: it is refused like the user's own rows.
    IF TG_TABLE_NAME = 'memories' THEN
        source := NEW.provenance ->> '{DERIVED_FROM}';
    ELSIF TG_TABLE_NAME = 'agent_events' THEN
        source := NEW.data ->> '{DERIVED_FROM}';
    END IF;
    IF source IS NOT NULL THEN
        PERFORM lma_check_epoch(lma_derived_digest(source), hashtext(source),
                                ARRAY['{DERIVED_CLAIMS}', source]);
    END IF;
    RETURN NEW;
END $$;
CREATE FUNCTION lma_thread_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared({THREAD_LOCK_CLASS}, hashtext(NEW.thread_id));
    IF EXISTS (SELECT 1 FROM forgotten_threads WHERE thread_id = NEW.thread_id) THEN
        RAISE EXCEPTION 'refused: this thread belonged to a forgotten user; start a new thread'
            USING ERRCODE = '{DEAD_THREAD_SQLSTATE}';
    END IF;
    RETURN NEW;
END $$;
CREATE FUNCTION lma_attach_guards() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    t text;
    guard text;
    attached integer := 0;
BEGIN
    FOR t, guard IN
        SELECT c.table_name, 'lma_user_guard' FROM information_schema.columns c
        JOIN information_schema.tables tb
          ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND tb.table_type = 'BASE TABLE'
          AND c.column_name IN ('tenant_id', 'user_id')
        GROUP BY c.table_name HAVING count(*) = 2
        UNION ALL
        SELECT n, 'lma_thread_guard'
        FROM unnest(ARRAY['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) AS n
        WHERE to_regclass(format('%I.%I', current_schema(), n)) IS NOT NULL
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE NOT tgisinternal
                       AND tgname = 'lma_forget_guard'
                       AND tgrelid = format('%I.%I', current_schema(), t)::regclass) THEN
            EXECUTE format('CREATE TRIGGER lma_forget_guard BEFORE INSERT OR UPDATE ON %I.%I'
                           ' FOR EACH ROW EXECUTE FUNCTION %I()', current_schema(), t, guard);
            attached := attached + 1;
        END IF;
    END LOOP;
    RETURN attached;
END $$;
SELECT lma_attach_guards();
"""

ATTACH_SQL = "SELECT lma_attach_guards()"
MIGRATIONS_LOCK_KEY = 0x6C6D61  # `migrations._LOCK_KEY`: attaching must not race them
# For the checkpointer, whose tables LangGraph creates after the migrations may have run: one
# statement (its own transaction), a no-op while the memory schema is not there yet.
ATTACH_CHECKPOINT_GUARDS_SQL = f"""
DO $$ BEGIN
    PERFORM pg_advisory_xact_lock({MIGRATIONS_LOCK_KEY});
    IF to_regproc('lma_attach_guards') IS NOT NULL THEN
        PERFORM lma_attach_guards();
    END IF;
END $$
"""
# A tombstone names its user by a keyed digest (the key is random per installation): after
# "forget me" no table holds the user's id in clear, and a guessed id cannot be confirmed
# without the database's key.
_OWNER = "lma_owner_digest($1, $2)"

# {tenant: {user: epoch}}: the epochs the writers running in this context started at.
_DECLARED: contextvars.ContextVar[dict[str, dict[str, int]] | None] = contextvars.ContextVar(
    "lma_writer_epochs", default=None
)


class UserForgottenError(RuntimeError):
    """A write was refused: the user was forgotten after the writer started."""


def is_forgotten(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) is a guard's refusal (a forgotten user or thread)."""
    seen = 0
    while exc is not None and seen < 8:  # a bounded walk: chains are short, never cyclic here
        if isinstance(exc, UserForgottenError):
            return True
        if getattr(exc, "sqlstate", None) in (FORGOTTEN_SQLSTATE, DEAD_THREAD_SQLSTATE):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


async def current_epoch(pool: Database, scope: Scope) -> int:
    """The user's epoch now: 0 until they are first forgotten, then one more per forget."""
    value = await pool.fetchval(
        f"SELECT epoch FROM user_epochs WHERE owner = {_OWNER}",
        scope.tenant_id,
        scope.user_id,
    )
    return int(value or 0)


def declared_epoch(scope: Scope) -> int | None:
    """The epoch a writer running in this context declared for `scope`, if any."""
    held = _DECLARED.get() or {}
    return held.get(scope.tenant_id, {}).get(scope.user_id)


@contextmanager
def writing_as(scope: Scope, epoch: int) -> Iterator[None]:
    """Writes of `scope` made in this context (and tasks it starts) belong to `epoch`."""
    held = {tenant: dict(users) for tenant, users in (_DECLARED.get() or {}).items()}
    held.setdefault(scope.tenant_id, {})[scope.user_id] = int(epoch)
    held.setdefault(DERIVED_CLAIMS, {})[owner_digest(scope)] = int(epoch)
    token = _DECLARED.set(held)
    try:
        yield
    finally:
        _DECLARED.reset(token)


@asynccontextmanager
async def writer(pool: Database, scope: Scope) -> AsyncIterator[int]:
    """Start a writer of `scope` at the user's current epoch (kept if one is already declared).

    Everything the block writes for the user is refused once the user is forgotten.
    """
    epoch = declared_epoch(scope)
    if epoch is None:
        epoch = await current_epoch(pool, scope)
    with writing_as(scope, epoch):
        yield epoch


async def declare_on_acquire(conn: Any) -> None:
    """The pool's `setup`: tell Postgres the epochs this context's writers started at."""
    held = _DECLARED.get()
    if held:
        await conn.execute("SELECT set_config($1, $2, false)", SETTING, json.dumps(held))


async def tombstone(conn: Connection, scope: Scope) -> int:
    """Inside the forget's transaction, first: take the user's forget lock and bump the epoch.

    Waits for write transactions of the user in progress (they hold the lock shared) and keeps
    new ones waiting until the forget commits. Returns the new epoch.
    """
    await conn.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext($2 || '/' || $3)),"
        " pg_advisory_xact_lock($1, hashtext($4))",
        USER_LOCK_CLASS,
        scope.tenant_id,
        scope.user_id,
        owner_digest(scope),
    )
    epoch = await conn.fetchval(
        "INSERT INTO user_epochs (owner, epoch, forgotten_at)"
        f" VALUES ({_OWNER}, 1, clock_timestamp()) ON CONFLICT (owner)"
        " DO UPDATE SET epoch = user_epochs.epoch + 1, forgotten_at = clock_timestamp()"
        " RETURNING epoch",
        scope.tenant_id,
        scope.user_id,
    )
    # The user's copies in other scopes: refused from the same epoch on.
    await conn.execute(
        "INSERT INTO user_epochs (owner, epoch, forgotten_at)"
        " VALUES (lma_derived_digest($1), $2, clock_timestamp()) ON CONFLICT (owner)"
        " DO UPDATE SET epoch = $2, forgotten_at = clock_timestamp()",
        owner_digest(scope),
        epoch,
    )
    return int(epoch)


async def bury_threads(conn: Connection, threads: Iterable[str]) -> None:
    """Inside the forget's transaction: lock the threads and mark them dead for good.

    In id order, so two forgets never wait on each other in a cycle.
    """
    ids = sorted(set(threads))
    for thread_id in ids:
        await conn.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))", THREAD_LOCK_CLASS, thread_id
        )
    await conn.execute(
        "INSERT INTO forgotten_threads (thread_id) SELECT unnest($1::text[])"
        " ON CONFLICT (thread_id) DO NOTHING",
        ids,
    )


async def seal(conn: Connection, scope: Scope) -> None:
    """Inside the forget's transaction, last: refuse undeclared writers that began before.

    An undeclared writer's transaction that began before the forget finished is refused.
    """
    await conn.execute(
        "UPDATE user_epochs SET forgotten_at = clock_timestamp()"
        f" WHERE owner IN ({_OWNER}, lma_derived_digest($3))",
        scope.tenant_id,
        scope.user_id,
        owner_digest(scope),
    )


async def lock_users_shared(conn: Connection, scopes: Iterable[Scope]) -> None:
    """Inside a transaction: hold the forget locks of `scopes` shared until it ends.

    For work outside Postgres that must not outlive a forget (the Chroma upsert of rows): a
    forget waits for it, and it sees the forget's deletions if it comes after. In key order.
    """
    for scope in sorted(set(scopes), key=lambda s: (s.tenant_id, s.user_id)):
        await conn.execute(
            "SELECT pg_advisory_xact_lock_shared($1, hashtext($2 || '/' || $3))",
            USER_LOCK_CLASS,
            scope.tenant_id,
            scope.user_id,
        )


__all__ = [
    "ATTACH_CHECKPOINT_GUARDS_SQL",
    "ATTACH_SQL",
    "DEAD_THREAD_SQLSTATE",
    "DERIVED_FROM",
    "FORGOTTEN_SQLSTATE",
    "MIGRATION",
    "MIGRATIONS_LOCK_KEY",
    "UserForgottenError",
    "bury_threads",
    "current_epoch",
    "declare_on_acquire",
    "declared_epoch",
    "is_forgotten",
    "lock_users_shared",
    "seal",
    "tombstone",
    "writer",
    "writing_as",
]
