"""Scale-out benchmark: several workers over one Postgres and one Chroma server.

    python -m bench.scale --small              # under 3 minutes on a 2-core machine
    python -m bench.scale --json scale.json    # the full run

Starts its own PostgreSQL, `chroma run` server and stub model (an OpenAI-compatible server, so
`ChatOpenAI` runs its real code path); every worker is a separate process that compiles the
agent graph with the Postgres checkpointer and opens its own memory store and cache sync
(`tests.support.worker`), as a server replica would. Sections:

  multi_worker   3 workers; each user's turns alternate between workers. Counts working
                 memory lost at a switch (an earlier turn missing from the state the next
                 worker reads), stale recalls (a memory stored on one worker and not recalled
                 by another on the next turn) and lost writes (two workers writing for one
                 user at once, counted in Postgres); turn throughput with 1 and 2 workers.
  chroma_killed  the Chroma server is SIGKILLed during a load of memory-writing turns and
                 started again: failed turns, memories missing from Postgres, memories missing
                 from Chroma before and after `reindex`, and how long the workers took to
                 index their backlog by themselves once Chroma was back.
  overhead       per-turn memory overhead through the compiled graph (everything but the
                 model call), p50/p95 per node and in total, at concurrency 1, 10 and 50 on
                 one worker; checkpoint reads and writes timed separately (they run in the
                 background while the next node runs, so they overlap node times). The
                 baseline, in the same run and alternating level by level: a second worker
                 with the overhead fixes undone (the checkpointer's process-wide lock, the
                 recall query embedded only when recall runs (not from perceive on), no
                 embedding memo and onnxruntime's spinning threads, one access-statistics
                 transaction per recall, synchronous Chroma indexing, a liveness round trip
                 at every checkpointer checkout, the thread's ownership written every turn).
                 Every message carries a word of its own, so no turn reuses an earlier
                 turn's embedding. With `--small` the baseline runs at concurrency 1 and 50
                 only. `--durability exit` runs the turns with one checkpoint per run instead
                 of LangGraph's default of one per step, to show what per-step checkpoints cost.
  recall_latency L1/L2 recall at 100k / 1M memories (`--scale 100k` or `--scale 1m` runs one
                 alone), one 200k-memory user and RSS after touching every user under the L1
                 budget, from `bench._scale_recall`, each load phase timed; each scale runs in
                 a fresh process once anything ran before it, so the RSS is the recalls' own.
                 Data at that scale is synthetic (clustered random 384-d unit vectors written
                 with COPY to Postgres and in batches to Chroma): embedding millions of texts on
                 2 cores is not feasible. The 1M scale took 13 minutes on a quiet 2-core machine
                 (500 s of it loading) and most of an hour on a shared one.

JSON keys (`--json FILE`): small, machine {cpus, load_before, load_after}, seconds {section:
s}, multi_worker {workers, users, turns, failed_turns, working_memory_lost, stale_recalls,
stale_checked, lost_writes, writes_checked, throughput {workers_1, workers_2: {turns,
seconds, turns_per_s, p50_ms, p95_ms}}}, chroma_killed {turns, failed_turns, failures,
killed_after_turns, chroma_down_confirmed, restarted_after_turns, turns_during_outage,
caught_up_by_workers_s (seconds until the workers had indexed their backlog by themselves, no
reindex; null if not within 45 s),
turn_ms_during_outage, turn_ms_outside_outage, turn_ms_before_outage, turn_ms_after_outage
{p50, p95} (outside = before + after), slowest_turns [{turn, phase, ms}] (the five slowest,
numbered in order of completion), stored, active, missing_in_postgres,
unindexed_rows_before_reindex,
missing_in_chroma_before_reindex, reindexed, missing_in_chroma_after_reindex,
lost_memories}, overhead {durability, c1, c10, c50: {concurrency, turns, short_turns, total_ms,
wall_ms, model_ms, nodes_ms {node: {p50, p95}}, checkpoint_ms {put, put_writes, get: {p50, p95}},
share, process {turns_per_s, loop_lag_ms {p50, p95, max, samples}, redact_ms_per_turn,
serialize_ms_per_turn, serialize_calls_per_turn,
checkpoint_pool_wait_ms_per_turn, checkpoint_pool_queued_per_turn, texts_embedded_per_turn,
embedding_memo_hits_per_turn, index_upserts_per_turn, indexed_in_background_per_turn,
access_transactions_per_turn, access_records_per_turn, cpu_ms_per_turn (CPU time of the
worker process, all threads)}}, target_total_p95_ms,
c1_total_p95_meets_target, baseline {c1, c10, c50: as above (no c10 with --small)},
repeats [{load, measured {c1, c10, c50: {total_ms, nodes_ms, checkpoint_ms, short_turns,
cpu_ms_per_turn, redact_ms_per_turn}}, baseline {as measured}}] (one per `--repeats`),
versus_baseline {c1, c10, c50:
{total_p50_ms, total_p95_ms, turns_per_s: [baseline, measured]}}}, recall_latency {scales
{small | 100k | 1m: {users, per_user, memories, load_s {generate, features, postgres, chroma,
total}, cold_l2_ms
{n, p50, p95, paths, without_embedding {n, p50, p95}}, touch {users, seconds}, l1
{budget_bytes, held_bytes, side_bytes, users_cached, evictions, bytes_per_memory,
rss_start_mb, rss_before_touch_mb,
rss_after_touch_mb, rss_limit_mb, rss_within_limit, within_budget}, warm_l1_ms {n, p50, p95,
paths, without_embedding}, big_user {memories, load_s, loaded_into_l1, cached, n, p50, p95,
paths, without_embedding, filtered_layers, unbounded_filter {n, p50, p95, filtered_layers}},
seconds}},
targets {warm_p95_ms, cold_p95_ms, big_user_p95_ms}} (or {available: false, reason}).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TENANT = "scale"
TARGET_C1_P95_MS = 50.0
_NODES = ("perceive", "recall", "compose", "respond", "tools", "gate_and_store")

_TOPICS = ("the payment service retries", "the onboarding checklist", "the quarterly report",
           "the database migration", "the mobile release", "the hiring plan",
           "the customer escalation", "the API rate limits")  # fmt: skip
_FACTS = ("my bike lock code word is {t}", "my locker number is {t}",
          "the staging password hint is {t}", "my favourite tea is {t}",
          "the project codename is {t}", "my cat is called {t}")  # fmt: skip


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank), 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))], 3)


def summary(values: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of `values` (milliseconds)."""
    return {"p50": pct(values, 50), "p95": pct(values, 95)}


@dataclass
class Servers:
    """The shared servers of one run."""

    database_url: str
    chroma: Any
    stub: Any
    data: Path


@contextmanager
def servers() -> Iterator[Servers]:
    """A throwaway Postgres, `chroma run` server and stub model, removed afterwards."""
    from tests.support.chroma_server import ChromaServer
    from tests.support.postgres import start_postgres
    from tests.support.stub_llm import StubLLM

    with ExitStack() as stack:
        pg = start_postgres()
        stack.callback(pg.destroy)
        chroma = ChromaServer()
        stack.callback(chroma.destroy)
        chroma.start()
        stub = stack.enter_context(StubLLM())
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lma-scale-")))
        yield Servers(pg.url, chroma, stub, data)


async def start_workers(
    srv: Servers, n: int, name: str, args: Sequence[str] = (), env: dict[str, str] | None = None
) -> list[Any]:
    """`n` workers on a fresh database of the shared Postgres (the first applies migrations)."""
    from tests.support.worker import WorkerProcess, worker_env

    env = worker_env(srv.database_url, srv.chroma.url, srv.stub.base_url, srv.data / "data",
                     MEMORY_CHROMA_SERVER_PATH=str(srv.chroma.path), **(env or {}))  # fmt: skip
    workers = [WorkerProcess(env, srv.data / f"{name}{i}.log", f"{name}{i}", args)
               for i in range(n)]  # fmt: skip
    await workers[0].start()
    await asyncio.gather(*(w.start() for w in workers[1:]))
    return workers


async def stop_workers(workers: Sequence[Any]) -> None:
    """Stop every worker (each finishes its requests first)."""
    await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)


_SUBJECTS = ("door", "vault", "locker", "alarm", "wifi", "garage", "bike", "safe")


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(3))


def _question(rng: random.Random) -> str:
    return f"What should I do next about {rng.choice(_TOPICS)}?"


async def _seed(workers: Sequence[Any], users: Sequence[str], per_user: int) -> None:
    """Give every user `per_user` memories, so recall ranks a realistic candidate set."""
    rng = random.Random(7)
    for i, user in enumerate(users):
        contents = [
            f"Note {n} about {rng.choice(_TOPICS)}: decided {uuid.uuid4().hex[:6]}."
            for n in range(per_user)
        ]
        await workers[i % len(workers)].call("seed", tenant=TENANT, user=user, contents=contents)


# --- multi-worker ---------------------------------------------------------------------------


async def multi_worker(srv: Servers, small: bool) -> dict[str, Any]:
    """Alternating threads on 3 workers; lost writes; throughput with 1 and 2 workers."""
    workers = await start_workers(srv, 3, "mw")
    try:
        report = await _alternating(workers, users=4 if small else 12, turns=4 if small else 6)
        report.update(await _lost_writes(workers, 10 if small else 50))
        report["throughput"] = {
            f"workers_{n}": await _throughput(workers[:n], clients=6, turns=36 if small else 120)
            for n in (1, 2)
        }
        return report
    finally:
        await stop_workers(workers)


async def _alternating(workers: Sequence[Any], users: int, turns: int) -> dict[str, Any]:
    rng = random.Random(11)
    names = [f"mw{uuid.uuid4().hex[:8]}" for _ in range(users)]
    threads = {u: uuid.uuid4().hex for u in names}
    sent: dict[str, list[str]] = {u: [] for u in names}
    failed = lost = stale = checked = 0

    async def user_run(i: int, user: str) -> None:
        nonlocal failed, lost, stale, checked
        for n in range(turns):
            worker = workers[(i + n) % len(workers)]
            token = uuid.uuid4().hex[:8]
            fact = rng.choice(_FACTS).format(t=token)
            text = f"Remember that {fact}." if n % 2 == 0 else _question(rng)
            answer = await worker.try_call(
                "turn", thread=threads[user], tenant=TENANT, user=user, message=text
            )
            if not answer.get("ok"):
                failed += 1
                continue
            sent[user].append(text)
            nxt = workers[(i + n + 1) % len(workers)]
            state = await nxt.call("state", thread=threads[user])
            seen = "\n".join(state["messages"])
            lost += sum(1 for t in sent[user] if t not in seen)
            if answer["stored"]:  # the next worker must recall it on the very next turn
                checked += 1
                ask = f"What did I tell you: {fact.split(' is ')[0]}?"
                got = await nxt.call(
                    "turn", thread=uuid.uuid4().hex, tenant=TENANT, user=user, message=ask
                )
                stale += 0 if set(answer["stored"]) & set(got["recalled"]) else 1

    await asyncio.gather(*(user_run(i, u) for i, u in enumerate(names)))
    return {"workers": len(workers), "users": users, "turns": users * turns,
            "failed_turns": failed, "working_memory_lost": lost, "stale_recalls": stale,
            "stale_checked": checked}  # fmt: skip


async def _lost_writes(workers: Sequence[Any], per_worker: int) -> dict[str, Any]:
    from memory.types import Scope

    user = f"lw{uuid.uuid4().hex[:8]}"
    results = await asyncio.gather(*(
        workers[w].try_call("write", tenant=TENANT, user=user,
                            content=f"note {w}-{n} {uuid.uuid4().hex}")
        for n in range(per_worker) for w in (0, 1)
    ))  # fmt: skip
    acknowledged = {r["memory_id"] for r in results if r.get("ok")}
    in_db = await _ids_in_postgres(workers[0], Scope(TENANT, user))
    failed = sum(1 for r in results if not r.get("ok"))
    return {"writes_checked": len(results), "lost_writes": len(acknowledged - in_db) + failed}


async def _ids_in_postgres(worker: Any, scope: Any) -> set[str]:
    from memory.storage.store import open_store

    settings = _settings(worker.env)
    async with open_store(settings) as store:
        rows = await store.list_memories(scope, limit=100_000)
    return {r.id for r in rows}


def _settings(env: dict[str, str]) -> Any:
    from memory.settings import Settings

    return Settings(
        database_url=env["DATABASE_URL"],
        chroma_url=env.get("CHROMA_URL"),
        data_dir=Path(env["MEMORY_DATA_DIR"]),
        embedding_model_dir=Path(env["MEMORY_EMBEDDING_MODEL_DIR"]),
        chroma_prefix=env["MEMORY_CHROMA_PREFIX"],
        chroma_server_path=Path(env["MEMORY_CHROMA_SERVER_PATH"]),
    )


async def _throughput(workers: Sequence[Any], clients: int, turns: int) -> dict[str, Any]:
    rng = random.Random(13)
    users = [f"tp{uuid.uuid4().hex[:8]}" for _ in range(clients)]
    await _seed(workers, users, 20)
    queue = list(range(turns))
    walls: list[float] = []

    async def client(c: int) -> None:
        while queue:
            n = queue.pop()
            worker = workers[n % len(workers)]  # round robin, no session affinity
            answer = await worker.call("turn", thread=f"{users[c]}-{n % 3}", tenant=TENANT,
                                       user=users[c], message=_question(rng))  # fmt: skip
            walls.append(answer["wall_ms"])

    began = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    seconds = time.perf_counter() - began
    return {"turns": turns, "clients": clients, "seconds": round(seconds, 2),
            "turns_per_s": round(turns / seconds, 2), **summary(walls)}  # fmt: skip


# --- Chroma killed during load --------------------------------------------------------------


CATCH_UP_WAIT_S = 45.0
"""How long `chroma_killed` waits for the workers to index their backlog by themselves."""


async def _wait_caught_up(settings: Any, scopes: list[Any], limit_s: float) -> float | None:
    """Seconds until no row of these users is left unindexed; None if not within `limit_s`."""
    from memory.storage.store import open_store
    from memory.types import Status

    every_status = [st.value for st in Status]
    started = time.perf_counter()
    async with open_store(settings, reindex_on_start=False) as store:
        while time.perf_counter() - started < limit_s:
            rows = []
            for scope in scopes:
                rows += await store.list_memories(scope, statuses=every_status, limit=100_000)
            if all(r.indexed_at is not None for r in rows if r.status == Status.ACTIVE):
                return round(time.perf_counter() - started, 1)
            await asyncio.sleep(1.0)
    return None


async def chroma_killed(srv: Servers, small: bool) -> dict[str, Any]:
    """SIGKILL the Chroma server a third into a load of turns, restart it at two thirds."""
    from memory.storage.store import open_store
    from memory.types import Scope, Status

    workers = await start_workers(srv, 2, "ck")
    total, clients = (24, 4) if small else (90, 6)
    users = [f"ck{uuid.uuid4().hex[:8]}" for _ in range(clients)]
    rng = random.Random(17)
    done = failed = 0
    failures: list[str] = []
    stored: dict[str, set[str]] = {u: set() for u in users}
    events: dict[str, int] = {}
    order: list[tuple[int, str, float]] = []  # (turn completed, phase, ms)
    queue = list(range(total))
    caught_up_s: float | None = None
    try:

        async def client(c: int) -> None:
            nonlocal done, failed
            while queue:
                n = queue.pop(0)
                if n == total // 3 and "killed_after_turns" not in events:
                    events["killed_after_turns"] = done
                    _kill(srv.chroma)
                    events["chroma_down_confirmed"] = int(not srv.chroma.heartbeat_ok())
                if n == 2 * total // 3 and "restarted_after_turns" not in events:
                    events["restarted_after_turns"] = done
                    await asyncio.to_thread(srv.chroma.start)
                # A fact about a new subject each turn, so none supersedes another: every
                # stored memory stays active and must be in Chroma at the end.
                fact = f"the {rng.choice(_SUBJECTS)} code for {_word(rng)} is {_word(rng)}"
                answer = await workers[n % 2].try_call(
                    "turn", thread=uuid.uuid4().hex, tenant=TENANT, user=users[c],
                    message=f"Remember that {fact}.",
                )  # fmt: skip
                done += 1
                phase = ("before" if "killed_after_turns" not in events
                         else "during" if "restarted_after_turns" not in events
                         else "after")  # fmt: skip
                order.append((done, phase, answer.get("wall_ms", 0.0)))
                if answer.get("ok"):
                    stored[users[c]].update(answer["stored"])
                else:
                    failed += 1
                    failures.append(str(answer.get("error"))[:300])

        await asyncio.gather(*(client(c) for c in range(clients)))
        # The workers stay up: their stores notice Chroma's return by themselves (a probe with
        # backoff up to PROBE_MAX_S) and index what they wrote meanwhile. Wait for that, with
        # no reindex from here, and report how long it took.
        srv.chroma.start()  # no-op when up
        settings = _settings(workers[0].env)
        caught_up_s = await _wait_caught_up(
            settings, [Scope(TENANT, u) for u in users], CATCH_UP_WAIT_S
        )
    finally:
        await stop_workers(workers)
        srv.chroma.start()  # no-op when up
    report: dict[str, Any] = {"turns": total, "failed_turns": failed, "failures": failures[:5],
                              **events, "caught_up_by_workers_s": caught_up_s}  # fmt: skip
    every_status = [st.value for st in Status]
    # No start-up reindex here: what Chroma misses now is what the workers left unindexed.
    async with open_store(settings, reindex_on_start=False) as store:
        scopes = [Scope(TENANT, u) for u in users]
        # Every row the gate reported, whatever became of it since (a later fact about the
        # same thing supersedes the earlier one: a status change, not a loss).
        rows = {s.user_id: await store.list_memories(s, statuses=every_status, limit=100_000)
                for s in scopes}  # fmt: skip
        missing_pg = sum(len(stored[u] - {r.id for r in rows[u]}) for u in users)
        active = {u: {r.id for r in rows[u] if r.status == Status.ACTIVE} for u in users}
        unindexed = sum(1 for u in users for r in rows[u] if r.indexed_at is None)

        async def missing_chroma() -> int:
            missing = 0
            for s in scopes:
                indexed = {doc_id for doc_id, _, _ in await store.index.documents_for(s)}
                missing += len(active[s.user_id] - indexed)
            return missing

        before = await missing_chroma()
        reindexed = await store.reindex()
        after = await missing_chroma()
    walls = {p: [ms for _, phase, ms in order if phase == p] for p in ("before", "during", "after")}
    report.update(stored=sum(len(v) for v in stored.values()), missing_in_postgres=missing_pg,
                  active=sum(len(v) for v in active.values()),
                  turn_ms_during_outage=summary(walls["during"]),
                  turn_ms_outside_outage=summary(walls["before"] + walls["after"]),
                  turn_ms_before_outage=summary(walls["before"]),
                  turn_ms_after_outage=summary(walls["after"]),
                  slowest_turns=[{"turn": n, "phase": ph, "ms": round(ms, 1)} for n, ph, ms
                                 in sorted(order, key=lambda t: -t[2])[:5]],
                  turns_during_outage=len(walls["during"]),
                  unindexed_rows_before_reindex=unindexed,
                  missing_in_chroma_before_reindex=before, reindexed=reindexed,
                  missing_in_chroma_after_reindex=after,
                  lost_memories=missing_pg + after)  # fmt: skip
    return report


def _kill(chroma: Any) -> None:
    # SIGKILL, not a clean stop: an outage is a crash or a lost node, not a shutdown.
    if chroma.proc is not None and chroma.proc.poll() is None:
        os.killpg(chroma.proc.pid, signal.SIGKILL)
        chroma.proc.wait()
    chroma.proc = None


# --- per-node overhead ----------------------------------------------------------------------


async def overhead(
    srv: Servers,
    small: bool,
    executor_threads: int | None = None,
    levels: Sequence[int] = (1, 10, 50),
    profile: Path | None = None,
    baseline: bool = True,
    c1_turns: int | None = None,
    durability: str = "async",
) -> dict[str, Any]:
    """Per-node memory overhead at concurrency 1, 10 and 50 on one worker.

    With `baseline`, a second worker runs the same turns with the overhead fixes undone
    (`tests.support.worker --baseline`, synchronous indexing), level by level alternating
    with the measured one, so both see the same machine load. `profile`: write the measured
    worker's cProfile (its event-loop thread) to that file. `durability`: LangGraph's checkpoint
    durability for every turn, measured and baseline alike.
    """
    extra = ["--executor-threads", str(executor_threads)] if executor_threads else []
    extra += ["--durability", durability]
    workers = await start_workers(srv, 1, "oh", [*extra, *(["--profile", str(profile)]
                                                        if profile else [])])  # fmt: skip
    users = [[f"oh{w}{uuid.uuid4().hex[:8]}" for _ in range(50)] for w in range(2)]
    per_user = 10 if small else 100
    try:
        if baseline:  # the baseline worker starts while the first one's users are seeded
            started, _ = await asyncio.gather(
                start_workers(srv, 1, "ohb", [*extra, "--baseline"],
                              env={"MEMORY_INDEX_IN_BACKGROUND": "0"}),
                _seed(workers, users[0], per_user),
            )  # fmt: skip
            workers += started
            await _seed(workers[1:], users[1], per_user)
        else:
            await _seed(workers, users[0], per_user)
        report: dict[str, Any] = {"durability": durability}
        base: dict[str, Any] = {}
        rounds = {1: c1_turns or (30 if small else 200), 10: 3 if small else 20,
                  50: 1 if small else 6}  # fmt: skip
        # `--small` keeps its 3 minutes: the baseline runs at 1 and 50 only.
        base_levels = (1, 50) if small else tuple(rounds)
        for concurrency, n_rounds in rounds.items():
            if concurrency not in levels:
                continue
            key = f"c{concurrency}"
            for worker, names, into in zip(workers, users, (report, base), strict=False):
                if into is base and concurrency not in base_levels:
                    continue
                into[key] = await _overhead_level(worker, names[:concurrency], n_rounds)
                into[key]["concurrency"] = concurrency
        if "c1" in report:
            report["target_total_p95_ms"] = TARGET_C1_P95_MS
            report["c1_total_p95_meets_target"] = (
                report["c1"]["total_ms"]["p95"] <= TARGET_C1_P95_MS
            )
        if base:
            report["baseline"] = base
            report["versus_baseline"] = {
                k: {"total_p50_ms": [base[k]["total_ms"]["p50"], report[k]["total_ms"]["p50"]],
                    "total_p95_ms": [base[k]["total_ms"]["p95"], report[k]["total_ms"]["p95"]],
                    "turns_per_s": [base[k]["process"]["turns_per_s"],
                                    report[k]["process"]["turns_per_s"]]}
                for k in base
            }  # fmt: skip
        return report
    finally:
        await stop_workers(workers)


async def _overhead_level(worker: Any, users: Sequence[str], n_rounds: int) -> dict[str, Any]:
    # One warm-up turn per user outside the figures: first-touch costs (cache load of the
    # user, a new thread) belong to the session start, not to a steady turn.
    await asyncio.gather(*(_turn(worker, u, f"{u}-warm", 0) for u in users))
    before = await worker.call("totals")
    began = time.perf_counter()
    answers = await _rounds(worker, users, n_rounds)
    seconds = time.perf_counter() - began
    after = await worker.call("totals")
    level = overhead_summary(len(users), answers)
    level["process"] = _process_totals(before, after, answers, seconds)
    return level


def _process_totals(
    before: dict[str, Any], after: dict[str, Any], answers: Sequence[Any], seconds: float
) -> dict[str, Any]:
    """Per turn: checkpoint redaction and serialisation time, checkpointer pool waits.

    From the worker's process-wide counters (their difference over the run).
    """
    n = max(1, len(answers))

    def delta(group: str, key: str) -> float:
        return float(after[group].get(key, 0)) - float(before[group].get(key, 0))

    return {
        "turns_per_s": round(len(answers) / seconds, 2) if seconds else 0.0,
        "loop_lag_ms": after["loop_lag_ms"],
        "redact_ms_per_turn": round(delta("serde_ms", "redact") / n, 3),
        "serialize_ms_per_turn": round(delta("serde_ms", "serialize") / n, 3),
        "serialize_calls_per_turn": round(delta("serde_ms", "serialize_calls") / n, 1),
        "checkpoint_pool_wait_ms_per_turn": round(
            delta("checkpoint_pool", "requests_wait_ms") / n, 3
        ),
        "checkpoint_pool_queued_per_turn": round(
            delta("checkpoint_pool", "requests_queued") / n, 2
        ),
        # Texts the embedder computed (memo misses) and answered from its memo, per turn;
        # background Chroma upserts and the rows they carried; access-statistics transactions
        # against the recalls they recorded.
        **{f"{k}_per_turn": round(delta("store", k) / n, 2)
           for k in ("texts_embedded", "embedding_memo_hits", "index_upserts",
                     "indexed_in_background", "access_transactions", "access_records",
                     "cpu_ms")},
    }  # fmt: skip


async def _turn(worker: Any, user: str, thread: str, n: int) -> dict[str, Any]:
    rng = random.Random(hash((user, n)))
    # A word of the turn's own in every message: no two turns send the same text, so a memo
    # of recent embeddings saves only what one turn repeats, never a previous turn's work.
    text = (f"I prefer short answers about {rng.choice(_TOPICS)}." if n % 5 == 4
            else _question(rng))  # fmt: skip
    text = f"{text} ({_word(rng)})"
    answer: dict[str, Any] = await worker.call(
        "turn", thread=thread, tenant=TENANT, user=user, message=text
    )
    return answer


# Turns per benchmark thread. A turn counts two steps of its task (perceive, respond) and the
# task brake stops a task at 50 steps, so a thread continued past 24 turns ends every further
# turn at perceive with an interrupt: turns that do no memory work and would pull the figures
# down. Each user starts a new thread after this many turns (and each level uses threads of
# its own), so every measured turn runs the whole graph; `short_turns` counts any that did not.
TURNS_PER_THREAD = 20


async def _rounds(worker: Any, users: Sequence[str], n_rounds: int) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    level = uuid.uuid4().hex[:6]

    async def user_run(user: str) -> None:
        for n in range(n_rounds):
            thread = f"{user}-{level}-t{n // TURNS_PER_THREAD}"
            answers.append(await _turn(worker, user, thread, n + 1))

    await asyncio.gather(*(user_run(u) for u in users))
    return answers


def overhead_summary(concurrency: int, answers: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Percentiles per node, per checkpoint call and in total, and each node's share of it."""
    nodes: dict[str, list[float]] = {}
    for a in answers:
        for node, ms in a["nodes_ms"].items():
            own = ms - a["nodes_model_ms"].get(node, 0.0)  # the model call is not overhead
            nodes.setdefault(node if node != "respond" else "respond_excl_model", []).append(own)
    totals = [a["overhead_ms"] for a in answers]
    mean_total = statistics.fmean(totals) if totals else 0.0
    share = {n: round(sum(v) / len(answers) / mean_total, 3) if mean_total else 0.0
             for n, v in nodes.items()}  # fmt: skip
    checkpoint = {k: summary([a["checkpoint_ms"][k] for a in answers])
                  for k in ("put", "put_writes", "get")}  # fmt: skip
    full = [a for a in answers if "gate_and_store" in a["nodes_ms"]]
    return {
        "concurrency": concurrency,
        "turns": len(answers),
        # Turns that ended before gate_and_store (a brake, a refused input): they did not do a
        # turn's memory work, so a run with any is not a fair measure of it.
        "short_turns": len(answers) - len(full),
        "total_ms": summary(totals),
        "wall_ms": summary([a["wall_ms"] for a in answers]),
        "model_ms": summary([a["model_ms"] for a in answers]),
        "nodes_ms": {n: summary(v) for n, v in sorted(nodes.items(), key=_node_order)},
        "checkpoint_ms": checkpoint,
        # Mean time per turn in each node over mean overhead: where the time goes. The rest
        # (1 - sum) is the graph's own scheduling, checkpoint waits and event-loop queueing.
        "share": dict(sorted(share.items(), key=_node_order)),
    }


async def overhead_repeated(srv: Servers, args: argparse.Namespace) -> dict[str, Any]:
    """The overhead section `args.repeats` times, each with fresh workers and its baseline.

    The report is the last repeat's, with every repeat's totals and node figures under
    `repeats` (one run on a shared machine is one sample of its load). Each repeat's table is
    printed as it finishes, with the load average beside it.
    """
    runs: list[dict[str, Any]] = []
    report: dict[str, Any] = {}
    for i in range(args.repeats):
        report = await overhead(
            srv,
            args.small,
            levels=args.overhead_levels,
            profile=args.profile,
            baseline=not args.no_baseline,
            c1_turns=args.c1_turns,
            durability=args.durability,
        )
        runs.append({"load": [round(x, 2) for x in os.getloadavg()], **_compact(report)})
        print(overhead_table(runs[-1], f"overhead repeat {i + 1}/{args.repeats}"), flush=True)
    report["repeats"] = runs
    return report


def _compact(report: dict[str, Any]) -> dict[str, Any]:
    """Totals and per-node p50/p95 of each level, measured and baseline."""

    def levels(part: dict[str, Any]) -> dict[str, Any]:
        return {k: {"total_ms": v["total_ms"], "nodes_ms": v["nodes_ms"],
                    "checkpoint_ms": v["checkpoint_ms"], "short_turns": v.get("short_turns"),
                    "cpu_ms_per_turn": v["process"]["cpu_ms_per_turn"],
                    "redact_ms_per_turn": v["process"]["redact_ms_per_turn"]}
                for k, v in part.items() if k in ("c1", "c10", "c50")}  # fmt: skip

    return {"measured": levels(report), "baseline": levels(report.get("baseline", {}))}


def overhead_table(run: dict[str, Any], title: str) -> str:
    """One repeat as text: total and per-node p50/p95 per level, baseline beside it."""
    lines = [f"{title} (load average {run['load']})"]
    for part in ("measured", "baseline"):
        for level, v in run[part].items():
            nodes = "  ".join(f"{n.removesuffix('_excl_model')} {x['p50']:.1f}/{x['p95']:.1f}"
                              for n, x in v["nodes_ms"].items())  # fmt: skip
            lines.append(
                f"  {part:8} {level:>3}: total p50 {v['total_ms']['p50']:.1f} p95 "
                f"{v['total_ms']['p95']:.1f} ms | {nodes} | cpu/turn {v['cpu_ms_per_turn']:.1f}"
                f" ms, short turns {v['short_turns']}"
            )
    return "\n".join(lines)


def _node_order(item: tuple[str, Any]) -> int:
    name = item[0].removesuffix("_excl_model")
    return _NODES.index(name) if name in _NODES else len(_NODES)


# --- recall latency (L1 / L2 at scale) ------------------------------------------------------


async def recall_latency(args: argparse.Namespace) -> dict[str, Any]:
    """The L1/L2 recall section, when the module that builds it is present."""
    try:
        from bench import _scale_recall  # type: ignore[attr-defined, unused-ignore]
    except ImportError as exc:
        print(f"recall_latency: not available ({exc})", flush=True)
        return {"available": False, "reason": f"bench._scale_recall not importable: {exc}"}
    section: Callable[[argparse.Namespace], Awaitable[dict[str, Any]]]
    section = _scale_recall.recall_latency_section
    return await section(args)


# --- main -----------------------------------------------------------------------------------

SECTIONS = ("multi_worker", "chroma_killed", "overhead", "recall_latency")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the chosen sections, each timed, on one set of servers."""
    report: dict[str, Any] = {"small": args.small, "seconds": {}}
    report["machine"] = {"cpus": os.cpu_count(), "load_before": os.getloadavg()}
    chosen = [s for s in SECTIONS if s in args.sections]
    with servers() as srv:
        for name in chosen:
            began = time.perf_counter()
            print(f"{name} ...", flush=True)
            if name == "recall_latency":
                # The shared servers: Chroma out of process, so RSS is the agent's own.
                args.database_url = args.database_url or srv.database_url
                args.chroma_url = args.chroma_url or srv.chroma.url
                args.after_other_sections = name != chosen[0]
                report[name] = await recall_latency(args)
            elif name == "overhead":
                report[name] = await overhead_repeated(srv, args)
            else:
                section = {"multi_worker": multi_worker, "chroma_killed": chroma_killed}[name]
                report[name] = await section(srv, args.small)
            report["seconds"][name] = round(time.perf_counter() - began, 1)
            print(json.dumps({name: report[name]}, indent=2), flush=True)
    report["machine"]["load_after"] = os.getloadavg()
    return report


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print and optionally write the JSON report."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--small", action="store_true", help="the under-3-minute run")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS),
                        help="run only these sections")  # fmt: skip
    parser.add_argument("--scale", nargs="+", choices=("small", "100k", "1m"), default=None,
                        help="recall_latency: the scales to run, each alone (several: each "
                        "in a child process; default: small with --small, else 100k and "
                        "1m)")  # fmt: skip
    parser.add_argument("--big-user-memories", type=int, default=None,
                        help="recall_latency: size of the one large user (0: none)")  # fmt: skip
    parser.add_argument("--recall-per-user", type=int, default=None,
                        help="recall_latency: memories per user (default 100)")  # fmt: skip
    parser.add_argument("--recall-queries", type=int, default=None,
                        help="recall_latency: timed recalls per measurement")  # fmt: skip
    parser.add_argument("--overhead-levels", nargs="+", type=int, choices=(1, 10, 50),
                        default=[1, 10, 50],
                        help="overhead: the concurrency levels to run")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=1,
                        help="overhead: run the section this many times, fresh workers "
                        "each")  # fmt: skip
    parser.add_argument("--c1-turns", type=int, default=None,
                        help="overhead: turns at concurrency 1 (default 30 with --small, "
                        "else 200); a p95 of 30 turns rests on their three slowest")  # fmt: skip
    parser.add_argument("--no-baseline", action="store_true",
                        help="overhead: skip the same-run baseline worker")  # fmt: skip
    parser.add_argument("--durability", choices=("async", "exit", "sync"), default="async",
                        help="overhead: LangGraph's checkpoint durability for the turns (async, "
                        "the default of LangGraph and its server: a checkpoint per step, "
                        "written in the background; exit: one per run)")  # fmt: skip
    parser.add_argument("--profile", type=Path, default=None,
                        help="overhead: write the measured worker's cProfile here")  # fmt: skip
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    args.database_url = args.chroma_url = None
    began = time.perf_counter()
    report = asyncio.run(run(args))
    report["seconds"]["total"] = round(time.perf_counter() - began, 1)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    mw, ck = report.get("multi_worker", {}), report.get("chroma_killed", {})
    bad = (mw.get("lost_writes", 0) + mw.get("stale_recalls", 0) + mw.get("failed_turns", 0)
           + mw.get("working_memory_lost", 0) + ck.get("failed_turns", 0)
           + ck.get("lost_memories", 0))  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
