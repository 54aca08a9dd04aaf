"""The limiter and the quotas on a real PostgreSQL: what the server's 429s stand on.

Two pools stand for two server workers: a limit that held only within one process would let a
deployment of N workers serve N times the limit.
"""

from __future__ import annotations

import asyncio
import io
import uuid
from contextlib import AsyncExitStack

import pytest
from PIL import Image

from memory.gating.ingest.apply import write_with_policy
from memory.multimodal import pixel_budget
from memory.multimodal.image_input import ImageInputError, ImageLimits, clean_image_held
from memory.multimodal.pixel_budget import PixelBudget, header_pixels
from memory.settings import ServiceLimits
from memory.storage.db import Database
from memory.storage.pg import open_pool
from memory.storage.quotas import claim_thread, release_thread, usage
from memory.storage.rate_limits import take
from memory.storage.store import MemoryStore
from memory.types import Category, MemoryKind, NewMemory, Origin, Scope

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")


def _fresh(tenant: str = "acme") -> Scope:
    # The module's database is shared by its tests: each limiter test gets users of its own.
    return Scope(tenant, "u" + uuid.uuid4().hex[:12])


async def _pools(stack: AsyncExitStack, url: str, n: int = 2) -> list[Database]:
    return [await stack.enter_async_context(open_pool(url, max_size=20)) for _ in range(n)]


async def test_a_burst_is_admitted_then_refused_until_retry_after(pg_db_url: str) -> None:
    async with AsyncExitStack() as stack:
        (pool,) = await _pools(stack, pg_db_url, 1)
        alice = _fresh()
        per_minute = 120  # a burst of 120, then one every 0.5 s
        admitted = [await take(pool, alice, "runs", per_minute) for _ in range(per_minute)]
        assert admitted == [None] * per_minute
        wait = await take(pool, alice, "runs", per_minute)
        assert wait is not None and 0 < wait <= 0.5
        again = await take(pool, alice, "runs", per_minute)  # a refusal takes no token
        assert again is not None and again <= wait
        await asyncio.sleep(again + 0.05)
        assert await take(pool, alice, "runs", per_minute) is None
        assert await take(pool, alice, "runs", per_minute) is not None


async def test_limits_are_per_user_and_per_action(pg_db_url: str) -> None:
    async with AsyncExitStack() as stack:
        (pool,) = await _pools(stack, pg_db_url, 1)
        alice, bob = _fresh(), _fresh()
        elsewhere = Scope("globex", alice.user_id)
        for _ in range(3):
            assert await take(pool, alice, "threads", 3) is None
        wait = await take(pool, alice, "threads", 3)
        assert wait is not None and 19 < wait <= 20  # one per 20 s at 3 a minute
        # The same user id in another tenant, another user, another action: untouched.
        assert await take(pool, elsewhere, "threads", 3) is None
        assert await take(pool, bob, "threads", 3) is None
        assert await take(pool, alice, "writes", 3) is None


async def test_two_workers_share_one_bucket(pg_db_url: str) -> None:
    async with AsyncExitStack() as stack:
        pools = await _pools(stack, pg_db_url, 2)
        alice = _fresh()
        results = await asyncio.gather(*(take(pools[i % 2], alice, "runs", 10) for i in range(40)))
        assert sum(r is None for r in results) == 10
        assert all(r is not None and r > 0 for r in results if r is not None)


async def test_thread_claims_race_to_exactly_the_quota(pg_db_url: str) -> None:
    async with AsyncExitStack() as stack:
        pools = await _pools(stack, pg_db_url, 2)
        alice, bob = _fresh(), _fresh()
        ids = [f"t{i}" for i in range(20)]
        got = await asyncio.gather(
            *(claim_thread(pools[i % 2], alice, t, 5) for i, t in enumerate(ids))
        )
        assert sum(g is None for g in got) == 5
        assert {g for g in got if g is not None} == {5}
        assert await claim_thread(pools[0], bob, "t0", 5) is None  # another user's count
        # Deleting a thread makes room; deleting someone else's id frees nothing.
        won = [t for t, g in zip(ids, got, strict=True) if g is None]
        await release_thread(pools[0], bob, won[0])
        assert await claim_thread(pools[0], alice, "late", 5) == 5
        await release_thread(pools[0], alice, won[0])
        assert await claim_thread(pools[0], alice, "late", 5) is None


def _fact(text: str) -> NewMemory:
    return NewMemory(
        text,
        kind=MemoryKind.SEMANTIC,
        category=Category.FACT,
        origin=Origin.EXPLICIT,
        ttl_days=None,
        provenance={"agent_id": "test"},
    )


FACTS = [
    "My sister lives in Porto and teaches chemistry.",
    "I keep bees on the roof of my building.",
    "My car is a 2009 Volvo estate that needs new brakes.",
    "I am learning Icelandic for a trip next summer.",
    "Our team ships the billing service every Thursday.",
    "I was born in Tromsø in the middle of the polar night.",
]


async def test_the_write_path_drops_over_the_memory_quota_with_an_audit(
    clean_store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_AUTH_SECRET", "a-test-secret-of-thirty-two-chars!!")
    monkeypatch.setenv("MEMORY_QUOTA_MEMORIES", "3")
    outcomes = await asyncio.gather(
        *(write_with_policy(clean_store, ALICE, _fact(f)) for f in FACTS)
    )
    assert sorted(o.action for o in outcomes) == ["dropped"] * 3 + ["stored"] * 3
    assert all("memory quota full" in o.reason for o in outcomes if o.action == "dropped")
    assert (await usage(clean_store.pool, ALICE)).memories == 3
    drops = [e for e in await clean_store.events(ALICE) if e["event"] == "gate_drop"]
    assert len(drops) == 3 and all("quota" in e["reason"] for e in drops)
    # Bob's quota is his own.
    assert (await write_with_policy(clean_store, BOB, _fact(FACTS[0]))).action == "stored"


async def test_a_process_serving_no_tokens_keeps_no_memory_quota(
    clean_store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The local CLI and open mode are the operator's: a quota set for the server is not theirs.
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    monkeypatch.setenv("MEMORY_QUOTA_MEMORIES", "1")
    outcomes = [await write_with_policy(clean_store, ALICE, _fact(f)) for f in FACTS[:3]]
    assert [o.action for o in outcomes] == ["stored"] * 3
    monkeypatch.setenv("MEMORY_AUTH_SECRET", "a-test-secret-of-thirty-two-chars!!")
    refused = await write_with_policy(clean_store, ALICE, _fact(FACTS[3]))
    assert refused.action == "dropped" and "memory quota full" in refused.reason


async def test_the_write_path_drops_over_the_byte_quota(
    clean_store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_AUTH_SECRET", "a-test-secret-of-thirty-two-chars!!")
    monkeypatch.setenv("MEMORY_QUOTA_BYTES", "120")
    first = await write_with_policy(clean_store, ALICE, _fact(FACTS[0]))
    assert first.action == "stored"
    long = "I collect " + ", ".join(f"stamp series {i}" for i in range(12)) + "."
    refused = await write_with_policy(clean_store, ALICE, _fact(long))
    assert refused.action == "dropped" and "bytes" in refused.reason
    monkeypatch.setenv("MEMORY_QUOTA_BYTES", "off")
    assert (await write_with_policy(clean_store, ALICE, _fact(long))).action == "stored"


def test_settings_switch_off_and_name_what_is_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ServiceLimits.from_env() == ServiceLimits()
    monkeypatch.setenv("MEMORY_RATE_LIMIT_RUNS_PER_MINUTE", "off")
    monkeypatch.setenv("MEMORY_QUOTA_THREADS", "0")
    monkeypatch.setenv("MEMORY_QUOTA_MEMORIES", "2_000")
    monkeypatch.setenv("MEMORY_RATE_LIMIT_SEARCHES_PER_MINUTE", "off")
    limits = ServiceLimits.from_env()
    assert (limits.runs_per_minute, limits.max_threads, limits.max_memories) == (None, None, 2000)
    assert limits.searches_per_minute is None and ServiceLimits().searches_per_minute == 120
    for bad in ("-5", "ten", "1.5"):
        monkeypatch.setenv("MEMORY_RATE_LIMIT_WRITES_PER_MINUTE", bad)
        with pytest.raises(ValueError, match="MEMORY_RATE_LIMIT_WRITES_PER_MINUTE"):
            ServiceLimits.from_env()


def _png(side: int) -> bytes:
    buf = io.BytesIO()
    Image.new("1", (side, side), 0).save(buf, "PNG")
    return buf.getvalue()


def test_the_pixel_budget_refuses_what_does_not_fit_and_frees_on_exit() -> None:
    budget = PixelBudget(total=100, per_owner=60)
    with budget.hold("alice", 60):
        with (
            pytest.raises(ImageInputError, match="still being read") as mine,
            budget.hold("alice", 1),
        ):
            pass
        assert mine.value.reason == "busy"
        with (
            budget.hold("bob", 40),  # another user fits beside her
            pytest.raises(ImageInputError, match="server is reading too many"),
            budget.hold("carol", 1),
        ):
            pass
    assert budget.in_flight == 0 and budget.peak == 100
    with pytest.raises(RuntimeError), budget.hold("alice", 60):
        raise RuntimeError("a decoder crashed")
    with budget.hold("alice", 60):  # the crash gave its pixels back
        assert budget.in_flight == 60


def test_an_image_decoded_while_the_users_pixel_budget_is_held_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    budget = PixelBudget(total=10_000_000, per_owner=5_000_000)
    monkeypatch.setattr(pixel_budget, "_BUDGET", budget)
    data, limits = _png(2_000), ImageLimits()  # 4 megapixels from a few kB
    assert header_pixels(data) == 4_000_000 and header_pixels(b"not an image") == 0
    with budget.hold("acme/alice", 2_000_000):
        with pytest.raises(ImageInputError, match="still being read"):
            clean_image_held(data, limits, owner="acme/alice")
        assert clean_image_held(data, limits, owner="acme/bob").features["width"] == 2_000
    assert budget.peak == 6_000_000 and budget.in_flight == 0
    # Over the per-image limit it is refused by that limit, with nothing decoded or held.
    with pytest.raises(ImageInputError, match="pixels; the limit"):
        clean_image_held(data, ImageLimits(max_pixels=1_000_000), owner="acme/alice")
    assert budget.peak == 6_000_000
