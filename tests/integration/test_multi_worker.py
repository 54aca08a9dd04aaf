"""Three worker processes over one Postgres and one Chroma server, as replicas behind a balancer.

Each worker is a separate OS process with its own compiled graph, Postgres checkpointer pool,
MemoryStore and recall cache (`tests.support.worker`); only the model is the stub. Threads are
continued alternately on different workers, as a load balancer without session affinity would.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from memory.system import GC_YOUNG_THRESHOLD, GIL_SWITCH_S
from tests.support.chroma_server import ChromaServer
from tests.support.postgres import PostgresServer
from tests.support.stub_llm import StubLLM
from tests.support.worker import WorkerProcess, worker_env

pytestmark = pytest.mark.server

TENANT = "mw"


@pytest.fixture(scope="module")
async def workers(
    _pg_session: PostgresServer,
    _chroma_session: ChromaServer,
    _stub_session: StubLLM,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[list[WorkerProcess]]:
    """Three workers on a fresh database of the shared Postgres and the shared Chroma server."""
    url = _pg_session.create_database()
    _chroma_session.start()
    logs = tmp_path_factory.mktemp("workers")
    env = worker_env(url, _chroma_session.url, _stub_session.base_url, logs / "data",
                     MEMORY_CHROMA_SERVER_PATH=str(_chroma_session.path))  # fmt: skip
    procs = [WorkerProcess(env, logs / f"w{i}.log", name=f"worker{i}") for i in range(3)]
    try:
        # One at a time: the first applies the migrations, the others find them applied.
        await procs[0].start()
        await asyncio.gather(*(p.start() for p in procs[1:]))
        yield procs
    finally:
        await asyncio.gather(*(p.stop() for p in procs), return_exceptions=True)
        _pg_session.drop_database(url.rsplit("/", 1)[-1])


@pytest.fixture(scope="module")
def db_url(workers: list[WorkerProcess]) -> str:
    """The workers' database."""
    return workers[0].env["DATABASE_URL"]


def _user() -> str:
    return "u" + uuid.uuid4().hex[:10]


async def test_threads_alternate_between_workers_and_keep_working_memory(
    workers: list[WorkerProcess],
) -> None:
    turns = [
        "I am planning a trip to Lisbon in May; the budget is 900 euros.",
        "Which neighbourhood should I stay in?",
        "And what about getting there from the airport?",
        "Summarise the plan so far.",
    ]
    users = [_user() for _ in range(3)]
    threads = {u: uuid.uuid4().hex for u in users}
    for n, text in enumerate(turns):
        # Turn n of each user on a different worker than turn n-1, users in parallel.
        answers = await asyncio.gather(*(
            workers[(n + i) % 3].turn(threads[u], TENANT, u, f"{text} ({u})")
            for i, u in enumerate(users)
        ))  # fmt: skip
        assert len({a["pid"] for a in answers}) == 3  # three processes served this round
        for i, (u, answer) in enumerate(zip(users, answers, strict=True)):
            assert answer["reply"], answer
            # The next worker reads the thread from the shared checkpointer: every earlier
            # human turn of this user is in the state it sees, none of another user's.
            state = await workers[(n + i + 1) % 3].call("state", thread=threads[u])
            seen = "\n".join(state["messages"])
            for earlier in turns[: n + 1]:
                assert f"{earlier} ({u})" in seen
            assert not any(f"({other})" in seen for other in users if other != u)
    last = await workers[1].call("state", thread=threads[users[0]])
    assert len(last["messages"]) >= 2 * len(turns)


async def test_memory_written_on_one_worker_is_recalled_by_the_next(
    workers: list[WorkerProcess],
) -> None:
    stale = []
    for i in range(3):
        user, token = _user(), uuid.uuid4().hex[:8]
        writer, reader = workers[i], workers[(i + 1) % 3]
        # The reader has this user's (empty) memory cached before the write happens elsewhere.
        before = await reader.call("recall", tenant=TENANT, user=user, query="bike lock code")
        assert before["ids"] == []
        wrote = await writer.turn(
            uuid.uuid4().hex, TENANT, user,
            f"Remember that my bike lock code word is heron-{token}.",
        )  # fmt: skip
        assert "stored" in wrote["gate"], wrote
        memory_id = wrote["stored"][0]
        answer = await reader.turn(
            uuid.uuid4().hex, TENANT, user, "What is my bike lock code word?"
        )
        if memory_id not in answer["recalled"]:
            stale.append((i, memory_id, answer["recalled"]))
    assert stale == []


async def test_forget_on_one_worker_drops_it_from_every_cache(
    workers: list[WorkerProcess],
) -> None:
    user, token = _user(), uuid.uuid4().hex[:8]
    query = "favourite tea"
    written = await workers[0].call(
        "write", tenant=TENANT, user=user, content=f"My favourite tea is oolong {token}."
    )
    memory_id = written["memory_id"]
    # Every worker recalls it, so every worker now holds it in its cache.
    for w in workers:
        assert memory_id in (await w.call("recall", tenant=TENANT, user=user, query=query))["ids"]
    receipt = await workers[1].call("forget", tenant=TENANT, user=user, memory_id=memory_id)
    assert receipt["receipt"]["memories"] == 1
    # The other workers learn of it through LISTEN/NOTIFY (and the version check behind it).
    for w in workers:
        got = await w.call("recall", tenant=TENANT, user=user, query=query)
        assert memory_id not in got["ids"], w.name
    answer = await workers[2].turn(uuid.uuid4().hex, TENANT, user, "What is my favourite tea?")
    assert memory_id not in answer["recalled"]


async def test_two_workers_writing_for_one_user_lose_nothing(
    workers: list[WorkerProcess], db_url: str
) -> None:
    user, per_worker = _user(), 15
    contents = [[f"note {w}-{n} {uuid.uuid4().hex}" for n in range(per_worker)] for w in (0, 1)]
    results = await asyncio.gather(*(
        workers[w].call("write", tenant=TENANT, user=user, content=c)
        for n in range(per_worker) for w in (0, 1) for c in [contents[w][n]]
    ))  # fmt: skip
    ids = {r["memory_id"] for r in results}
    assert len(ids) == 2 * per_worker
    # Agent turns for the same user on both workers at once: every memory the gate reports
    # stored or updated is a row in Postgres.
    facts = ["Remember that my dentist is Dr. Alvarez on Pine Street.",
             "Remember that my passport expires in March 2031.",
             "Remember that I am allergic to penicillin.",
             "Remember that my sister's birthday is on 14 August."]  # fmt: skip
    turns = await asyncio.gather(*(
        workers[i % 2].turn(uuid.uuid4().hex, TENANT, user, fact) for i, fact in enumerate(facts)
    ))  # fmt: skip
    stored = {m for t in turns for m in t["stored"]}
    assert stored, [t["gate"] for t in turns]
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch(
            "SELECT id, content FROM memories WHERE tenant_id = $1 AND user_id = $2", TENANT, user
        )
    finally:
        await conn.close()
    in_db = {r["id"] for r in rows}
    assert ids <= in_db
    assert stored <= in_db
    assert {r["content"] for r in rows} >= {c for cs in contents for c in cs}


async def test_bad_requests_get_clear_errors(workers: list[WorkerProcess]) -> None:
    bad = await workers[0].try_call("turn", thread="", tenant=TENANT, user="x", message="hi")
    assert not bad["ok"] and "thread" in bad["error"]
    unknown = await workers[0].try_call("drop_tables")
    assert not unknown["ok"] and "unknown op" in unknown["error"]
    assert (await workers[0].call("ping"))["ok"]


async def test_each_worker_settles_its_process_once_its_store_is_open(
    workers: list[WorkerProcess],
) -> None:
    # The composition point (`agent.resources.get_store`) freezes the long-lived objects, makes
    # the collector wait for more new objects and shortens the interpreter's switch interval:
    # without them a large user's recall waits on collections and on threads queued for the
    # interpreter.
    for worker in workers:
        answer = await worker.call("interpreter")
        assert answer["switch_interval_s"] == pytest.approx(GIL_SWITCH_S)
        assert answer["frozen"] > 0
        assert answer["gc_threshold"][0] == GC_YOUNG_THRESHOLD
