"""The data and server the inspector's end-to-end tests share.

Memories are seeded from this process into the same Postgres and Chroma server the
`langgraph dev` under test uses (with its own collection prefix), then the server is started
with auth on. Carol's memories are consolidated here, so an admin has a run to roll back.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agent.auth import PERMISSION_ADMIN
from agent.auth_tokens import mint_token
from memory.gating.ingest import ingest_text
from memory.longterm.consolidation import consolidate
from memory.settings import Settings
from memory.storage.store import open_store
from memory.types import Category, NewMemory, Origin, Scope, Status

SECRET = "inspector-e2e-secret-" + uuid.uuid4().hex
ALICE, BOB, CAROL = Scope("acme", "alice"), Scope("acme", "bob"), Scope("acme", "carol")
DAVE = Scope("acme", "dave")
ERIN = Scope("acme", "erin")  # her own user: an update chain beside Alice's seeded memories
ADMIN = Scope("acme", "ops")
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2"> I like "quotes" & tags'
NOW = datetime.now(UTC)


@dataclass
class World:
    """Ids of the seeded memories and the settings to reopen the store."""

    settings: Settings
    ids: dict[str, str] = field(default_factory=dict)
    run_id: str = ""

    def token(self, who: Scope, *, admin: bool = False) -> str:
        """A valid token for `who` (with `memory:admin` when asked)."""
        return mint_token(who, SECRET, permissions=[PERMISSION_ADMIN] if admin else [])


def _at(days_ago: float) -> datetime:
    return NOW - timedelta(days=days_ago)


async def _seed(world: World) -> None:
    async with open_store(world.settings) as store:
        mine = {
            "seat": NewMemory("I prefer window seats on long flights.",
                              category=Category.PREFERENCE, occurred_at=_at(3)),
            "pending": NewMemory("Always pay invoices from account ending 0042 automatically.",
                                 status=Status.PENDING_APPROVAL, category=Category.DECISION,
                                 occurred_at=_at(2)),
            "doomed": NewMemory("My gym membership renews every March.", occurred_at=_at(5)),
            "xss": NewMemory(XSS, occurred_at=_at(1)),
            "old": NewMemory("I used to live in Porto.", occurred_at=_at(40)),
        }  # fmt: skip
        for key, item in mine.items():
            world.ids[key] = (await store.write(ALICE, item, reason="seeded by the test")).id
        # An update through the real write path: the earlier employer is kept, its window closed.
        [then] = await ingest_text(store, ERIN, "I work at Siemens.", occurred_at=_at(400),
                                   require_approval=False)  # fmt: skip
        [now] = await ingest_text(store, ERIN, "These days I work at SAP.", occurred_at=_at(10),
                                  require_approval=False)  # fmt: skip
        assert now.action == "superseded" and then.memory_id and now.memory_id, now
        world.ids["job_then"], world.ids["job_now"] = then.memory_id, now.memory_id
        bob = NewMemory("Bob's secret project is Quintar-" + uuid.uuid4().hex[:6])
        world.ids["bob"] = (await store.write(BOB, bob)).id
        world.ids["bob_text"] = bob.content
        world.ids["dave"] = (await store.write(DAVE, NewMemory("Dave keeps bees in Ghent."))).id
        episodes = [
            "I prefer TypeScript for code examples",
            "Use TypeScript when you show me code",
            "My code samples should be in TypeScript",
            "Please write the examples in TypeScript, not JavaScript",
            "I like TypeScript examples better than Python ones",
        ]
        await store.write_many(
            CAROL,
            [NewMemory(t, category=Category.PREFERENCE, origin=Origin.INFERRED,
                       occurred_at=_at(2 + 3 * i)) for i, t in enumerate(episodes)],
        )  # fmt: skip
        summary = await consolidate(store, scope=CAROL)
        world.run_id = summary.run_id


def build_world(pg_url: str, chroma_url: str, model_dir: Path, data_dir: Path) -> World:
    """Seed the stores and return what the tests need to find the data again."""
    prefix = "insp" + uuid.uuid4().hex[:8]
    settings = Settings(database_url=pg_url, chroma_url=chroma_url, data_dir=data_dir,
                        embedding_model_dir=model_dir, chroma_prefix=prefix)  # fmt: skip
    world = World(settings)
    asyncio.run(_seed(world))
    return world


def server_env(world: World, data_dir: Path) -> dict[str, str]:
    """The env of the `langgraph dev` serving the inspector on the seeded stores."""
    s = world.settings
    return {
        "DATABASE_URL": str(s.database_url), "CHROMA_URL": str(s.chroma_url),
        "MEMORY_CHROMA_PREFIX": s.chroma_prefix, "MEMORY_DATA_DIR": str(data_dir),
        "MEMORY_EMBEDDING_MODEL_DIR": str(s.embedding_model_dir), "MEMORY_AUTH_SECRET": SECRET,
    }  # fmt: skip
