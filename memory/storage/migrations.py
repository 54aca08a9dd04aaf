"""The schema, as an append-only list of migrations applied by one idempotent `setup()`.

Never edit a migration that has shipped: append a new one. All pending migrations run in one
transaction under an advisory lock, so several processes starting at once (server workers, the
CLI) apply each migration exactly once, and a failing migration leaves the schema as it was.
"""

from __future__ import annotations

import logging

from memory.storage.db import Connection
from memory.storage.tombstones import ATTACH_SQL
from memory.storage.tombstones import MIGRATION as TOMBSTONES

log = logging.getLogger(__name__)

_LOCK_KEY = 0x6C6D61  # "lma": serialises concurrent setup() calls across processes
# One migration may index every memory: on a million rows that takes minutes, and the pool's
# per-command timeout (a minute) would fail it half-way, on every start, for ever.
MIGRATION_TIMEOUT_S = 6 * 3600.0

MIGRATIONS: list[str] = [
    # 1: the system of record: episodic records and long-term entries in one table, by kind.
    """
    CREATE TABLE memories (
        id              text PRIMARY KEY,
        tenant_id       text NOT NULL,
        user_id         text NOT NULL,
        kind            text NOT NULL
            CHECK (kind IN ('episodic', 'semantic', 'procedural', 'preference')),
        category        text NOT NULL DEFAULT 'fact',
        content         text NOT NULL,
        context         text NOT NULL DEFAULT '',
        outcome         text NOT NULL DEFAULT '',
        source          text NOT NULL CHECK (source IN ('chat', 'tool', 'system', 'consolidation')),
        origin          text NOT NULL CHECK (origin IN ('explicit', 'inferred', 'learned')),
        importance      real NOT NULL CHECK (importance BETWEEN 0 AND 1),
        confidence      real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        trust           text NOT NULL DEFAULT 'normal',
        pinned          boolean NOT NULL DEFAULT false,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        occurred_at     timestamptz NOT NULL DEFAULT now(),
        expires_at      timestamptz,
        access_count    integer NOT NULL DEFAULT 0,
        last_accessed   timestamptz,
        status          text NOT NULL DEFAULT 'active' CHECK (status IN
            ('active', 'superseded', 'expired', 'deleted', 'pending_approval')),
        superseded_by   text REFERENCES memories(id) ON DELETE SET NULL,
        provenance      jsonb NOT NULL DEFAULT '{}'::jsonb,
        tags            text[] NOT NULL DEFAULT '{}',
        content_hash    text NOT NULL,
        version         integer NOT NULL DEFAULT 1,
        embedding       bytea,
        embedding_model text,
        indexed_at      timestamptz,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content || ' ' || context)) STORED
    );
    CREATE INDEX memories_scope_kind ON memories (tenant_id, user_id, kind, status);
    CREATE INDEX memories_last_accessed ON memories (tenant_id, user_id, last_accessed);
    CREATE INDEX memories_hash ON memories (tenant_id, user_id, content_hash);
    CREATE INDEX memories_unindexed ON memories (created_at) WHERE indexed_at IS NULL;
    CREATE INDEX memories_expiry ON memories (expires_at) WHERE status = 'active';
    CREATE INDEX memories_tsv ON memories USING gin (tsv);

    -- The audit log: why every memory exists, changed, or went away.
    CREATE TABLE memory_events (
        id          bigserial PRIMARY KEY,
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        memory_id   text,
        event       text NOT NULL,
        reason      text NOT NULL DEFAULT '',
        detail      jsonb NOT NULL DEFAULT '{}'::jsonb,
        actor       text NOT NULL DEFAULT 'agent',
        at          timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX memory_events_scope ON memory_events (tenant_id, user_id, at);
    CREATE INDEX memory_events_memory ON memory_events (memory_id);

    -- A per-user counter bumped by every content change: a cheap cross-process staleness check
    -- for in-process caches (one indexed lookup instead of reloading a user's memories).
    CREATE TABLE scope_versions (
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        version     bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, user_id)
    );

    -- Per-user settings: consent, the structured profile.
    CREATE TABLE user_settings (
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        consent     boolean NOT NULL DEFAULT true,
        profile     jsonb NOT NULL DEFAULT '{}'::jsonb,
        updated_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, user_id)
    );

    -- Every prior state of a memory, so changes can be inspected and rolled back.
    CREATE TABLE memory_versions (
        memory_id   text NOT NULL,
        version     integer NOT NULL,
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        snapshot    jsonb NOT NULL,
        run_id      text,
        changed_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (memory_id, version)
    );
    CREATE INDEX memory_versions_run ON memory_versions (run_id);
    CREATE INDEX memory_versions_scope ON memory_versions (tenant_id, user_id);
    """,
    # 2: which threads belong to which user, so "forget me" can delete their checkpoints.
    """
    CREATE TABLE user_threads (
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        thread_id   text NOT NULL,
        first_seen  timestamptz NOT NULL DEFAULT now(),
        last_seen   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, user_id, thread_id)
    );
    CREATE INDEX user_threads_thread ON user_threads (thread_id);
    """,
    # 3: consolidation runs: one row per user a run touched; its changes are the
    # memory_versions rows with its run_id, so it can be inspected and rolled back.
    """
    CREATE TABLE consolidation_runs (
        run_id          text NOT NULL,
        tenant_id       text NOT NULL,
        user_id         text NOT NULL,
        status          text NOT NULL
            CHECK (status IN ('running', 'completed', 'failed', 'rolled_back')),
        started_at      timestamptz NOT NULL DEFAULT now(),
        finished_at     timestamptz,
        counts          jsonb NOT NULL DEFAULT '{}'::jsonb,
        decisions       jsonb NOT NULL DEFAULT '[]'::jsonb,
        error           text NOT NULL DEFAULT '',
        rolled_back_at  timestamptz,
        rollback_reason text NOT NULL DEFAULT '',
        PRIMARY KEY (run_id, tenant_id, user_id)
    );
    CREATE INDEX consolidation_runs_scope ON consolidation_runs (tenant_id, user_id, status);
    CREATE INDEX memory_versions_run_scope ON memory_versions (run_id, tenant_id, user_id);
    """,
    # 4: shared memory between the agents of a tenant, and cross-process cache invalidation.
    # agent_events is the durable log behind LISTEN/NOTIFY: a NOTIFY carries only an event id
    # (payloads are capped at 8,000 bytes, and a listener that was offline misses them), so a
    # subscriber reads rows after its cursor. user_id names the user an event is about, so
    # "forget me" can delete it.
    """
    CREATE TABLE agent_events (
        id          bigserial PRIMARY KEY,
        tenant_id   text NOT NULL,
        agent_id    text NOT NULL,
        event_type  text NOT NULL,
        user_id     text,
        data        jsonb NOT NULL DEFAULT '{}'::jsonb,
        memory_id   text,
        created_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX agent_events_tenant ON agent_events (tenant_id, id);
    CREATE INDEX agent_events_user ON agent_events (tenant_id, user_id)
        WHERE user_id IS NOT NULL;

    -- Where each agent of a tenant stopped reading, so it catches up after being offline.
    CREATE TABLE agent_cursors (
        tenant_id   text NOT NULL,
        agent_id    text NOT NULL,
        last_id     bigint NOT NULL DEFAULT 0,
        updated_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, agent_id)
    );

    -- Every change of a user's memories bumps scope_versions and every profile or consent
    -- change writes user_settings; these triggers announce it on channel lma_cache as
    -- "tenant/user/<version>", "tenant/user/settings", or "tenant/user/-" (deleted) so other
    -- processes drop their cached copies at once. NOTIFY is sent at commit, deduplicated
    -- within a transaction.
    CREATE FUNCTION lma_notify_scope_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM pg_notify('lma_cache', OLD.tenant_id || '/' || OLD.user_id || '/-');
            RETURN OLD;
        END IF;
        PERFORM pg_notify('lma_cache', NEW.tenant_id || '/' || NEW.user_id || '/' || NEW.version);
        RETURN NEW;
    END
    $$;
    CREATE TRIGGER scope_versions_notify AFTER INSERT OR UPDATE OR DELETE ON scope_versions
        FOR EACH ROW EXECUTE FUNCTION lma_notify_scope_version();

    CREATE FUNCTION lma_notify_user_settings() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM pg_notify('lma_cache', OLD.tenant_id || '/' || OLD.user_id || '/-');
            RETURN OLD;
        END IF;
        PERFORM pg_notify('lma_cache', NEW.tenant_id || '/' || NEW.user_id || '/settings');
        RETURN NEW;
    END
    $$;
    CREATE TRIGGER user_settings_notify AFTER INSERT OR UPDATE OR DELETE ON user_settings
        FOR EACH ROW EXECUTE FUNCTION lma_notify_user_settings();
    """,
    # 5: a user's version counter starts from a fresh epoch each time its row is created, so a
    # user forgotten and re-created never reuses a version another process still has cached.
    """
    CREATE SEQUENCE scope_epoch_seq;
    """,
    # 6: the keys a LangGraph BaseStore caller chose for its items (LangMem, Studio, the
    # /store API). A key names one memory of one user; deleting the memory drops its keys.
    """
    CREATE TABLE memory_store_keys (
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        key         text NOT NULL,
        memory_id   text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        updated_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, user_id, key)
    );
    CREATE INDEX memory_store_keys_memory ON memory_store_keys (memory_id);
    """,
    # 7: deletions that could not be completed yet (Chroma down; a LangGraph server's thread
    # registry, which only the server itself can change), retried until they succeed. The owner
    # columns are not named tenant_id/user_id on purpose: forgetting a user must not drop the
    # deletions still owed to them. Server rows keep only a digest of the owner.
    """
    CREATE TABLE IF NOT EXISTS deletion_outbox (
        id              bigserial PRIMARY KEY,
        target          text NOT NULL
                        CHECK (target IN ('chroma_ids', 'chroma_scope', 'server_thread')),
        item            text NOT NULL,
        owner_tenant    text NOT NULL,
        owner_user      text NOT NULL,
        requested_at    timestamptz NOT NULL DEFAULT now(),
        attempts        integer NOT NULL DEFAULT 0,
        last_error      text,
        UNIQUE (target, item, owner_tenant, owner_user)
    );
    """,
    # 8: images remembered as memories. The memory row holds the description (its content) and
    # the image's features (provenance.image); this table holds what recall cannot do without
    # (the perceptual hash, for "same image sent again") and the bytes a setting allows keeping
    # (a metadata-free thumbnail), so forget and export cover them. The row goes with its
    # memory (ON DELETE CASCADE); tenant_id + user_id make "forget me" find it directly.
    """
    CREATE TABLE memory_images (
        memory_id       text PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
        tenant_id       text NOT NULL,
        user_id         text NOT NULL,
        phash           text NOT NULL,
        features        jsonb NOT NULL DEFAULT '{}'::jsonb,
        thumbnail       bytea,
        thumbnail_mime  text,
        created_at      timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX memory_images_scope ON memory_images (tenant_id, user_id);
    """,
    # 9: recall at any size without a scan of the user's rows.
    # - `cjk_grams`: the characters and character bigrams of every CJK run of a memory's text
    #   and context, each prefixed with a digest of its owner, in a GIN index. Chinese has no
    #   spaces, so the `tsv` column holds a whole sentence as one token; without this a Chinese
    #   query could only `LIKE`-scan the user's rows. The owner prefix makes a lookup touch that
    #   user's entries only, however many other users share a common bigram. Computed by
    #   Postgres itself (a generated column), so every write path fills it and adding the column
    #   fills it for rows written before; no extension is needed.
    # - `recall_features`: what ranking derives from a memory's text (tokens, the times it
    #   names), written by the recall layer so a query never re-parses its candidates; it names
    #   the text it was computed from and is recomputed when that text changes.
    # - `index_layouts`: the Chroma layout (shard count) last migrated to per prefix, so opening
    #   the store checks Chroma's collections only when the configured layout differs.
    r"""
    CREATE FUNCTION lma_cjk_grams(owner text, body text) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(DISTINCT owner || g), '{}') FROM (
            SELECT substr(run[1], i, n) AS g
            FROM regexp_matches(body, '[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]+',
                                'g') AS run,
                 generate_series(1, length(run[1])) AS i,
                 (VALUES (1), (2)) AS sizes (n)
            WHERE i + n - 1 <= length(run[1])
        ) grams
    $$;
    ALTER TABLE memories ADD COLUMN cjk_grams text[] GENERATED ALWAYS AS
        (lma_cjk_grams(left(md5(tenant_id || ' ' || user_id), 8), content || ' ' || context))
        STORED;
    CREATE INDEX memories_cjk_grams ON memories USING gin (cjk_grams);
    ALTER TABLE memories ADD COLUMN recall_features jsonb;
    CREATE TABLE index_layouts (
        prefix      text PRIMARY KEY,
        shards      integer NOT NULL,
        checked_at  timestamptz NOT NULL DEFAULT now()
    );
    """,
    # 10: the same grams in linear time. `substr(run, i, n)` finds character i by walking the
    # text from its start, so migration 9's function was quadratic in a run's length: 3.7 s of
    # Postgres CPU for a 20,000-character Chinese memory, paid again on every UPDATE of the row
    # (a stored generated column is recomputed). Splitting each run into characters once and
    # pairing each with the next (`lead`) gives the identical array in ~25 ms. Rows computed
    # by the old function need nothing: the values are the same.
    r"""
    CREATE OR REPLACE FUNCTION lma_cjk_grams(owner text, body text) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        WITH chars AS (
            SELECT u.c, lead(u.c) OVER (PARTITION BY m.r ORDER BY u.i) AS after
            FROM regexp_matches(body, '[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]+',
                                'g') WITH ORDINALITY AS m (run, r),
                 unnest(regexp_split_to_array(m.run[1], '')) WITH ORDINALITY AS u (c, i)
        )
        SELECT coalesce(array_agg(DISTINCT owner || g), '{}') FROM (
            SELECT c AS g FROM chars
            UNION ALL
            SELECT c || after FROM chars WHERE after IS NOT NULL
        ) grams
    $$;
    """,
    # 11: bounded GIN pending lists. A GIN index puts new entries in an unsorted pending list
    # (4 MB by default) that every search reads whole until a vacuum or an overflow merges it:
    # measured on a user with 200,000 memories, each lexical term's lookup took ~10-18 ms with
    # a full list and 0.1-1.4 ms with an empty one, and recall looks up each query term on its
    # own. At 64 kB (the smallest allowed, ~370 rows) a search reads at most 8 pages, and a
    # write that overflows the list merges those few rows (milliseconds) instead of 4 MB.
    """
    ALTER INDEX memories_tsv SET (gin_pending_list_limit = 64);
    ALTER INDEX memories_cjk_grams SET (gin_pending_list_limit = 64);
    SELECT gin_clean_pending_list('memories_tsv'::regclass);
    SELECT gin_clean_pending_list('memories_cjk_grams'::regclass);
    """,
    # 12: a memory's own-text vector beside its context-bearing `embedding` (same encoding:
    # float32 bytes). Only a memory embedded with context has one; NULL means the memory's
    # `embedding` is its own text's vector. Adding a nullable column rewrites no rows.
    """
    ALTER TABLE memories ADD COLUMN IF NOT EXISTS own_embedding bytea;
    """,
    # 13: the lexical leg's words keyed by owner, as migration 9 keys `cjk_grams`. The `tsv`
    # index is shared by every user, so a word's posting list holds all users' rows with it:
    # one lookup for a user read the matches of everyone (a million rows' worth for a common
    # word at 1M memories) before the owner filter threw nearly all of them away. This index
    # holds the same words as `tsv`, each prefixed with the digest of its owner, so a lookup of
    # one user's word reads that user's matches only, however many users there are, and a
    # prefix query (`stem:*`) still works. An index on an expression, not a stored column: it
    # rewrites no rows (a table of a million memories is indexed, not copied) and costs no
    # space in the table. It keeps no positions: `tsv` stays for ranking the matches, and its
    # index, which no query needs any more, goes.
    """
    CREATE FUNCTION lma_owner_tsv(owner text, body text) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT array_to_tsvector(coalesce(array_agg(owner || w.lexeme), '{}'))
        FROM unnest(to_tsvector('simple', body)) AS w
    $$;
    CREATE INDEX memories_own_tsv ON memories USING gin
        (lma_owner_tsv(left(md5(tenant_id || ' ' || user_id), 8), content || ' ' || context))
        WITH (gin_pending_list_limit = 64);
    DROP INDEX memories_tsv;
    """,
    # 14: Chroma entries name their owner by a keyed hash (see `storage.vector.owner_tag`). The
    # key is random per installation and lives here, beside the data it pseudonymises; the
    # store creates it on first open. `owner_tags` records that a prefix's entries written
    # before this migration (which name tenant and user) were rewritten, so that runs once.
    """
    CREATE TABLE index_keys (
        name        text PRIMARY KEY,
        key         bytea NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
    );
    ALTER TABLE index_layouts ADD COLUMN owner_tags boolean NOT NULL DEFAULT false;
    """,
    # 15: the word lookups must go through `memories_own_tsv`, whatever the planner believes
    # about the table. Computing the owner-keyed vector of a row (parsing its text and context)
    # costs ~70 us, but at the default function cost the planner takes it for cheap, and when
    # its statistics are stale (a freshly loaded table; a user who has grown far past the
    # average) it scans the user's rows and computes it for every one of them: for a cold
    # recall of a 900-memory user with long assistant replies, the lexical query took 335 ms at
    # p95 (23-35 ms at this cost). At this cost the index is the cheaper plan for any estimate.
    """
    ALTER FUNCTION lma_owner_tsv(text, text) COST 10000;
    """,
    # 16: per-user rate limits and revocable inspector sessions, shared by every worker.
    # - `rate_limits`: one row per (tenant, user, action) holding the GCRA "theoretical arrival
    #   time" in epoch seconds (`memory.storage.rate_limits`): a token bucket in one number.
    # - `inspector_sessions`: the SHA-256 of each signed-in browser's session id; logout deletes
    #   it, so a replayed cookie names nothing (`memory.storage.sessions`).
    # - `thread_creations`: threads a user created through the API, for the thread quota. Apart
    #   from `user_threads` on purpose: that table decides whose checkpoints a forget deletes,
    #   and a creation request naming someone else's thread id must never land there.
    """
    CREATE TABLE rate_limits (
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        action      text NOT NULL,
        tat         double precision NOT NULL,
        PRIMARY KEY (tenant_id, user_id, action)
    );
    CREATE TABLE inspector_sessions (
        id_sha256   text PRIMARY KEY,
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        expires_at  timestamptz NOT NULL
    );
    CREATE INDEX inspector_sessions_scope ON inspector_sessions (tenant_id, user_id);
    CREATE TABLE thread_creations (
        tenant_id   text NOT NULL,
        user_id     text NOT NULL,
        thread_id   text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, user_id, thread_id)
    );
    """,
    # 17: forget-me is final: the per-user epochs and tombstones, dead threads, and the guard
    # triggers every writer's transaction passes through (see `storage.tombstones`).
    TOMBSTONES,
    # 18: each embedding model's measured cosine scale (`storage.calibration`), by model id and
    # reference-set version: measured once, then read by every process that opens the store.
    """
    CREATE TABLE IF NOT EXISTS embedding_calibrations (
        model text NOT NULL,
        version text NOT NULL,
        model_quantiles double precision[] NOT NULL,
        reference_quantiles double precision[] NOT NULL,
        separation jsonb NOT NULL DEFAULT '{}',
        measured_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (model, version)
    );
    """,
    # 19: writes accepted by the MCP server
    # and not finished yet (`storage.pending_writes`): the text, already redacted, waits here
    # until the governed write path has judged it, so a restart loses no accepted write.
    """
    CREATE TABLE IF NOT EXISTS pending_writes (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        user_id text NOT NULL,
        text text,
        via text NOT NULL,
        epoch bigint NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        result jsonb,
        claimed_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
    );
    CREATE INDEX IF NOT EXISTS pending_writes_waiting
        ON pending_writes (created_at) WHERE status = 'pending';
    """,
    # 20: when a fact was true (`memory.storage.timeline`): an update sets the replaced memory's
    # `valid_to` and its successor's `valid_from`; NULL means "since it was said" / "still true".
    """
    ALTER TABLE memories ADD COLUMN IF NOT EXISTS valid_from timestamptz;
    ALTER TABLE memories ADD COLUMN IF NOT EXISTS valid_to timestamptz;
    CREATE INDEX IF NOT EXISTS memories_replaced_by
        ON memories (tenant_id, user_id, superseded_by) WHERE superseded_by IS NOT NULL;
    """,
    # 21: each language's background cosine (`storage.calibration`), measured with the scale
    # from reference-set version 2 on.
    """
    ALTER TABLE embedding_calibrations ADD COLUMN IF NOT EXISTS background jsonb NOT NULL
        DEFAULT '{}';
    """,
    # 22: each language's background cosines at the set's levels (reference-set version 3 on).
    """
    ALTER TABLE embedding_calibrations ADD COLUMN IF NOT EXISTS background_quantiles jsonb
        NOT NULL DEFAULT '{}';
    """,
]


async def apply_migrations(conn: Connection) -> int:
    """Apply every migration not yet applied; return how many ran. Safe to call repeatedly."""
    applied = 0
    async with conn.transaction():
        # Lock first: two processes creating the bookkeeping table at once would collide.
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _LOCK_KEY)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        for number, sql in enumerate(MIGRATIONS, start=1):
            if number in done:
                continue
            log.info("applying schema migration %d", number)
            await conn.execute(sql, timeout=MIGRATION_TIMEOUT_S)
            await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", number)
            applied += 1
        if applied and await conn.fetchval("SELECT to_regproc('lma_attach_guards')"):
            # A table a migration added with `tenant_id` + `user_id` gets its forget guard.
            await conn.execute(ATTACH_SQL)
    return applied
