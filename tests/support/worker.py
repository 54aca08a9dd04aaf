"""A worker: a separate process that runs the agent graph over a shared Postgres and Chroma.

Each worker compiles `agent.graph.build_graph()` with the project's Postgres checkpointer and
opens its own MemoryStore through the agent's composition point (`agent.resources.get_store`,
which also starts the LISTEN-based cache synchronisation), exactly as one server replica
would. The model is whatever `MEMORY_AGENT_MODEL` / `OPENAI_BASE_URL` name (the stub in tests
and benchmarks). Several workers on one database and one Chroma server are a scale-out
deployment in miniature; the multi-worker test and `bench.scale` drive them.

Protocol: one JSON request per line on stdin, one JSON answer per line on stdout, matched by
`id`; requests run concurrently inside the worker (one event loop, as in a server process).

  {"op": "turn", "thread", "tenant", "user", "message"}  -> reply, recalled/injected/stored
      memory ids, gate actions, wall time, per-node times, model time, checkpoint I/O times
  {"op": "state", "thread"}                  -> the checkpointed messages, summary and task
  {"op": "recall", "tenant", "user", "query"} -> ranked memory ids (no access recorded)
  {"op": "write", "tenant", "user", "content"} -> `memory_id` of a memory written directly
  {"op": "seed", "tenant", "user", "contents": [...]} -> `memory_ids`, written in one batch
  {"op": "forget", "tenant", "user", "memory_id"} -> the deletion receipt
  {"op": "totals"}  -> process-wide checkpoint redaction/serialisation time, pool statistics,
                       event-loop lag since the previous `totals`
  {"op": "interpreter"} -> the switch interval and the objects frozen out of the collector
  {"op": "ping"}, {"op": "quit"}
Every answer has `ok`; a failed request answers `{"ok": false, "error": "Type: message"}`.

Run as `python -m tests.support.worker`; drive it with `WorkerProcess`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import functools
import itertools
import json
import os
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage

from tests.support.ports import REPO_ROOT, child_env

# One answer can carry a thread's whole state: far above asyncio's 64 KiB line default.
_LINE_LIMIT = 64 * 1024 * 1024
_READY_TIMEOUT_S = 180.0


class NodeTimer(BaseCallbackHandler):
    """Wall time of each graph node of one run, and of the model calls made inside each node.

    One instance per run (passed in that run's `callbacks`), so concurrent runs never mix. The
    nodes are the chains whose parent is the graph's own run; model calls are attributed to the
    node they happened in by walking the parent links. `run_inline` keeps the timestamps on the
    event loop instead of a thread pool, where queueing would distort them.
    """

    run_inline = True

    def __init__(self) -> None:
        """Empty timings."""
        self.root: UUID | None = None
        self.parent: dict[UUID, UUID | None] = {}
        self.node_of: dict[UUID, str] = {}
        self.started: dict[UUID, float] = {}
        self.nodes_ms: dict[str, float] = defaultdict(float)
        self.model_ms: dict[str, float] = defaultdict(float)

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember the run; time it when it is one of the graph's nodes."""
        self.parent[run_id] = parent_run_id
        if parent_run_id is None:
            self.root = run_id
        elif parent_run_id == self.root:
            self.node_of[run_id] = str(
                kwargs.get("name") or (metadata or {}).get("langgraph_node") or "?"
            )
            self.started[run_id] = time.perf_counter()

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Add a node's duration to its total (a node can run twice: respond ⇄ tools)."""
        self._finish(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A failed node still took its time."""
        self._finish(run_id)

    def _finish(self, run_id: UUID) -> None:
        began = self.started.pop(run_id, None)
        if began is not None:
            self.nodes_ms[self.node_of[run_id]] += (time.perf_counter() - began) * 1000

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Start timing a model call."""
        self.parent[run_id] = parent_run_id
        self.started[run_id] = time.perf_counter()

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Start timing a completion-style model call."""
        self.on_chat_model_start(serialized, prompts, run_id=run_id, parent_run_id=parent_run_id)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Charge a model call to the node it ran in."""
        self._finish_model(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A failed model call still took its time."""
        self._finish_model(run_id)

    def _finish_model(self, run_id: UUID) -> None:
        began = self.started.pop(run_id, None)
        if began is None:
            return
        node, current = "?", self.parent.get(run_id)
        while current is not None:
            if current in self.node_of:
                node = self.node_of[current]
                break
            current = self.parent.get(current)
        self.model_ms[node] += (time.perf_counter() - began) * 1000


class CheckpointTimer:
    """Time spent in the checkpointer's reads and writes, per thread id.

    Wraps the saver's bound methods on the instance, so the saver under measurement is the
    project's own, unchanged. LangGraph writes checkpoints in the background while the next
    node runs, so these times overlap node times; they are reported beside them, not summed.
    """

    def __init__(self, saver: Any) -> None:
        """Wrap `saver.aput`, `aput_writes` and `aget_tuple`."""
        self.ms: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for name, label in (("aput", "put"), ("aput_writes", "put_writes"),
                            ("aget_tuple", "get")):  # fmt: skip
            setattr(saver, name, self._timed(getattr(saver, name), label))

    def _timed(
        self, call: Callable[..., Awaitable[Any]], label: str
    ) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(call)
        async def timed(config: Any, *args: Any, **kwargs: Any) -> Any:
            thread = str(((config or {}).get("configurable") or {}).get("thread_id"))
            began = time.perf_counter()
            try:
                return await call(config, *args, **kwargs)
            finally:
                self.ms[thread][label] += (time.perf_counter() - began) * 1000

        return timed

    def profile(self, saver: Any) -> None:
        """Also total, process-wide, the CPU-side work of checkpoint writes: redaction and
        serialisation (they run on the event loop or in worker threads, so no per-thread split)."""
        self.serde_ms: dict[str, float] = defaultdict(float)
        lock = threading.Lock()
        inside = threading.local()

        def timed(call: Callable[..., Any], label: str) -> Callable[..., Any]:
            # The redactor walks a value by calling itself: only the outermost call is timed
            # and counted. Timing every nested call (a lock and two clock reads per list item,
            # message and dict) cost more than the redaction it measured and counted each
            # nested call's time again in its caller's.
            @functools.wraps(call)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if getattr(inside, label, False):
                    return call(*args, **kwargs)
                setattr(inside, label, True)
                began = time.perf_counter()
                try:
                    return call(*args, **kwargs)
                finally:
                    setattr(inside, label, False)
                    with lock:
                        self.serde_ms[label] += (time.perf_counter() - began) * 1000
                        self.serde_ms[label + "_calls"] += 1

            return wrapper

        serde = saver.serde
        serde.redactor.value = timed(serde.redactor.value, "redact")
        serde.inner.dumps_typed = timed(serde.inner.dumps_typed, "serialize")
        self.pool = saver.conn

    def totals(self) -> dict[str, Any]:
        """Process-wide serialisation totals and the checkpointer pool's wait statistics."""
        stats = self.pool.get_stats() if hasattr(self.pool, "get_stats") else {}
        return {"serde_ms": {k: round(v, 3) for k, v in self.serde_ms.items()},
                "checkpoint_pool": dict(stats)}  # fmt: skip

    def take(self, thread: str) -> dict[str, float]:
        """This thread's totals since the last `take`, rounded to microseconds."""
        got = self.ms.pop(thread, {})
        return {k: round(got.get(k, 0.0), 3) for k in ("put", "put_writes", "get")}


class LoopLag:
    """How late the event loop wakes a 10 ms sleeper: the queueing every coroutine sees."""

    def __init__(self) -> None:
        """No samples yet."""
        self.samples: list[float] = []

    async def run(self) -> None:
        """Sample until cancelled."""
        while True:
            began = time.perf_counter()
            await asyncio.sleep(0.01)
            self.samples.append((time.perf_counter() - began - 0.01) * 1000)

    def take(self) -> dict[str, float]:
        """p50, p95 and max of the samples since the last `take`, in ms."""
        got, self.samples = sorted(self.samples), []
        if not got:
            return {"p50": 0.0, "p95": 0.0, "max": 0.0, "samples": 0}

        def at(q: float) -> float:
            return round(got[min(len(got) - 1, int(q * len(got)))], 3)

        return {"p50": at(0.5), "p95": at(0.95), "max": round(got[-1], 3), "samples": len(got)}


def _text(message: BaseMessage) -> str:
    return message.text


class _Worker:
    """The in-process side: a compiled graph, this process's store, request handlers."""

    def __init__(self, graph: Any, timer: CheckpointTimer, durability: str = "async") -> None:
        self.graph = graph
        self.timer = timer
        self.durability = durability

    async def turn(self, req: Mapping[str, Any]) -> dict[str, Any]:
        from agent.context import Context

        thread = _required(req, "thread")
        ctx = Context(tenant_id=_required(req, "tenant"), user_id=_required(req, "user"))
        nodes = NodeTimer()
        config = {"configurable": {"thread_id": thread}, "callbacks": [nodes]}
        self.timer.take(thread)  # nothing left from an earlier read of this thread
        began = time.perf_counter()
        out = await self.graph.ainvoke(
            {"messages": [("user", _required(req, "message"))]},
            config,
            context=ctx,
            durability=self.durability,
        )
        wall_ms = (time.perf_counter() - began) * 1000
        model_ms = sum(nodes.model_ms.values())
        messages = out.get("messages") or []
        recalled = [e["id"] for e in out.get("evidence") or []]
        recalled += [e["id"] for e in out.get("rules_recalled") or []]
        return {
            "reply": _text(messages[-1]) if messages else "",
            "recalled": recalled,
            "injected": list(out.get("injected_ids") or []),
            "gate": [g["action"] for g in out.get("gate") or []],
            "stored": [g["memory_id"] for g in out.get("gate") or [] if g.get("memory_id")],
            "messages": len(messages),
            "wall_ms": round(wall_ms, 3),
            "model_ms": round(model_ms, 3),
            "overhead_ms": round(wall_ms - model_ms, 3),
            "nodes_ms": {k: round(v, 3) for k, v in nodes.nodes_ms.items()},
            "nodes_model_ms": {k: round(v, 3) for k, v in nodes.model_ms.items()},
            "checkpoint_ms": self.timer.take(thread),
            "pid": os.getpid(),
        }

    async def state(self, req: Mapping[str, Any]) -> dict[str, Any]:
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": req["thread"]}})
        values = snapshot.values or {}
        return {
            "messages": [_text(m) for m in values.get("messages") or []],
            "summary": values.get("summary"),
            "task": values.get("task"),
        }

    async def recall(self, req: Mapping[str, Any]) -> dict[str, Any]:
        from agent.resources import get_store
        from memory.system import recaller

        store = await get_store()
        hits = await recaller(store).recall(
            _scope(req), _required(req, "query"), k=int(req.get("k", 10)), record_access=False
        )
        return {"ids": [h.record.id for h in hits]}

    async def write(self, req: Mapping[str, Any]) -> dict[str, Any]:
        from agent.resources import get_store
        from memory.types import NewMemory

        store = await get_store()
        record = await store.write(_scope(req), NewMemory(content=_required(req, "content")))
        return {"memory_id": record.id}

    async def seed(self, req: Mapping[str, Any]) -> dict[str, Any]:
        from agent.resources import get_store
        from memory.types import NewMemory

        contents = req.get("contents")
        if not isinstance(contents, list) or not all(isinstance(c, str) for c in contents):
            raise ValueError("request field 'contents' must be a list of strings")
        store = await get_store()
        records = await store.write_many(_scope(req), [NewMemory(content=c) for c in contents])
        return {"memory_ids": [r.id for r in records]}

    async def interpreter(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """What the store's opening set up process-wide (`memory.system.settle_process`)."""
        import gc

        return {
            "switch_interval_s": sys.getswitchinterval(),
            "frozen": gc.get_freeze_count(),
            "gc_threshold": list(gc.get_threshold()),
        }

    async def forget(self, req: Mapping[str, Any]) -> dict[str, Any]:
        from agent.resources import get_store

        store = await get_store()
        receipt = await store.delete(
            _scope(req), _required(req, "memory_id"), reason="worker request"
        )
        return {"receipt": receipt}


def _required(req: Mapping[str, Any], key: str) -> str:
    value = req.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"request field {key!r} must be a non-empty string")
    return value


def _scope(req: Mapping[str, Any]) -> Any:
    from memory.types import Scope

    return Scope(_required(req, "tenant"), _required(req, "user"))


def _store_totals(store: Any) -> dict[str, float]:
    """Process-wide counters of the store's background work and the embedding memo."""
    memo = getattr(store.embedder, "memo", None)
    indexer = store.indexer
    return {
        "texts_embedded": memo.misses if memo is not None else 0,
        "embedding_memo_hits": memo.hits if memo is not None else 0,
        "index_upserts": indexer.batches if indexer is not None else 0,
        "indexed_in_background": indexer.indexed if indexer is not None else 0,
        "access_transactions": store.access_log.batches,
        "access_records": store.access_log.written,
        # CPU time of the whole process (every thread): with it the benchmark tells a turn
        # that waits (I/O, locks) from one that computes.
        "cpu_ms": round(time.process_time() * 1000, 3),
    }


def _undo_overhead_fixes(saver: Any, store: Any) -> None:
    """The benchmark's baseline: the per-turn costs that were taken off a turn, put back.

    The saver's process-wide lock, the query embedded only when recall runs, a fresh embedding
    of every text (no memo of recent ones) by onnxruntime's spinning threads, one
    access-statistics transaction per recall, a liveness round trip at every checkpointer
    checkout and the thread's ownership written on every turn; synchronous indexing comes from
    `MEMORY_INDEX_IN_BACKGROUND=0` in the environment. What changed in the nodes' code (reads
    run side by side, fewer thread hops) and in the checkpoint redactor's memory cannot be
    undone here and is in both figures.
    """
    import agent.checkpointer
    import memory.storage.threads
    from memory.settings import Settings
    from memory.storage.embedding import OnnxEmbedder
    from memory.system import recaller

    agent.checkpointer._RECHECK_AFTER_S = 0.0  # every checkout checked
    memory.storage.threads.REFRESH_S = 0.0  # every turn writes the thread's ownership
    saver.lock = asyncio.Lock()
    if isinstance(store.embedder, OnnxEmbedder):  # onnxruntime's spinning threads, no memo
        store.embedder = OnnxEmbedder(Settings.from_env().embedding_model_dir, spin_wait=True)
        store.embedder.memo.entries = 0
    store.access_log.linger_s = 0.0
    recaller(store).prefetch_queries = False  # the query is embedded when recall runs


async def _serve(
    out: TextIO, executor_threads: int | None, baseline: bool = False, durability: str = "async"
) -> None:
    from agent.checkpointer import open_checkpointer
    from agent.graph import build_graph
    from agent.resources import close_stores, get_store

    if executor_threads:
        from concurrent.futures import ThreadPoolExecutor

        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(executor_threads))
    lag = LoopLag()
    lag_task = asyncio.get_running_loop().create_task(lag.run())
    async with open_checkpointer() as saver:
        timer = CheckpointTimer(saver)
        timer.profile(saver)
        worker = _Worker(build_graph().compile(checkpointer=saver), timer, durability)
        store = await get_store()  # open the pool, the index and the cache sync before "ready"
        if baseline:
            _undo_overhead_fixes(saver, store)
        handlers = {"turn": worker.turn, "state": worker.state, "recall": worker.recall,
                    "write": worker.write, "seed": worker.seed,
                    "forget": worker.forget, "interpreter": worker.interpreter}  # fmt: skip
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        tasks: set[asyncio.Task[None]] = set()

        def answer(payload: dict[str, Any]) -> None:
            out.write(json.dumps(payload, default=str) + "\n")
            out.flush()

        async def handle(req: dict[str, Any]) -> None:
            try:
                handler = handlers.get(str(req.get("op")))
                if handler is None:
                    raise ValueError(f"unknown op {req.get('op')!r}")
                answer({**await handler(req), "id": req.get("id"), "ok": True})
            except Exception as exc:  # the answer carries the error; the worker keeps serving
                answer({"id": req.get("id"), "ok": False, "error": f"{type(exc).__name__}: {exc}"})

        answer({"ready": True, "pid": os.getpid()})
        try:
            while line := await reader.readline():
                try:
                    req = json.loads(line)
                except json.JSONDecodeError as exc:
                    answer({"id": None, "ok": False, "error": f"JSONDecodeError: {exc}"})
                    continue
                if not isinstance(req, dict):
                    answer({"id": None, "ok": False, "error": "ValueError: not an object"})
                    continue
                if req.get("op") == "quit":
                    break
                if req.get("op") == "totals":
                    totals = {**timer.totals(), "loop_lag_ms": lag.take(),
                              "store": _store_totals(store)}  # fmt: skip
                    answer({"id": req.get("id"), "ok": True, **totals})
                    continue
                if req.get("op") == "ping":
                    answer({"id": req.get("id"), "ok": True})
                    continue
                task = loop.create_task(handle(req))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.gather(*tasks)
        finally:
            lag_task.cancel()
            await close_stores()


def main(argv: list[str] | None = None) -> None:
    """Serve requests on stdin until `quit` or end of input."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.worker")
    parser.add_argument("--profile", type=Path, help="write the event loop thread's cProfile")
    parser.add_argument("--executor-threads", type=int, help="size of asyncio's default executor")
    parser.add_argument(
        "--baseline", action="store_true", help="undo the per-turn overhead fixes (a baseline)"
    )
    parser.add_argument(
        "--durability",
        choices=("async", "exit", "sync"),
        default="async",
        help="LangGraph's checkpoint durability for turns (async: every step, in the background)",
    )
    args = parser.parse_args(argv)
    # The protocol owns the real stdout; anything a library prints goes to stderr instead.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if args.profile is None:
        asyncio.run(_serve(out, args.executor_threads, args.baseline, args.durability))
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        asyncio.run(_serve(out, args.executor_threads, args.baseline, args.durability))
    finally:
        profiler.disable()
        profiler.dump_stats(args.profile)


class WorkerError(RuntimeError):
    """A worker answered a request with an error, or died."""


class WorkerProcess:
    """Start and drive one worker (`python -m tests.support.worker`) from an event loop."""

    def __init__(
        self,
        env: Mapping[str, str],
        log: Path,
        name: str = "worker",
        args: Sequence[str] = (),
    ) -> None:
        """`env` overrides (DATABASE_URL, CHROMA_URL, OPENAI_BASE_URL, ...); stderr to `log`."""
        self.env = child_env(env)
        self.args = list(args)
        self.log = log
        self.name = name
        self.proc: asyncio.subprocess.Process | None = None
        self.pid = 0
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> WorkerProcess:
        """Spawn the process and wait until its graph and store are open."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as sink:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tests.support.worker", *self.args,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=sink,
                cwd=REPO_ROOT, env=self.env, limit=_LINE_LIMIT, start_new_session=True,
            )  # fmt: skip
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), _READY_TIMEOUT_S)
        except TimeoutError:
            await self.kill()
            raise WorkerError(f"{self.name} not ready in {_READY_TIMEOUT_S:.0f} s") from None
        if not line:
            await self.proc.wait()
            raise WorkerError(f"{self.name} exited with {self.proc.returncode}:\n{self._tail()}")
        self.pid = int(json.loads(line)["pid"])
        self._reader = asyncio.get_running_loop().create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            answer = json.loads(line)
            future = self._pending.pop(answer.get("id"), None)
            if future is not None and not future.done():
                future.set_result(answer)
        for future in self._pending.values():  # the worker died: nobody will answer these
            if not future.done():
                future.set_exception(WorkerError(f"{self.name} exited:\n{self._tail()}"))
        self._pending.clear()

    def _tail(self) -> str:
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return "\n".join(lines[-40:])

    async def call(self, op: str, timeout: float = 300.0, **fields: Any) -> dict[str, Any]:
        """Send one request; return its answer, or raise `WorkerError` with the worker's error."""
        answer = await self.try_call(op, timeout, **fields)
        if not answer.get("ok"):
            raise WorkerError(f"{self.name} {op}: {answer.get('error')}")
        return answer

    async def try_call(self, op: str, timeout: float = 300.0, **fields: Any) -> dict[str, Any]:
        """Send one request; return its answer, failed or not (`ok` says which)."""
        if self.proc is None or self.proc.stdin is None or self.proc.returncode is not None:
            raise WorkerError(f"{self.name} is not running")
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.proc.stdin.write((json.dumps({"id": request_id, "op": op, **fields}) + "\n").encode())
        await self.proc.stdin.drain()
        return await asyncio.wait_for(future, timeout)

    async def turn(self, thread: str, tenant: str, user: str, message: str) -> dict[str, Any]:
        """One agent turn on this worker."""
        return await self.call("turn", thread=thread, tenant=tenant, user=user, message=message)

    async def stop(self, timeout: float = 30.0) -> None:
        """Ask the worker to finish its requests and exit; kill it if it does not."""
        if self.proc is None:
            return
        if self.proc.returncode is None and self.proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.proc.stdin.write(b'{"op": "quit"}\n')
                await self.proc.stdin.drain()
                self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                await self.kill()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader

    async def kill(self) -> None:
        """SIGKILL the worker's process group."""
        if self.proc is not None and self.proc.returncode is None:
            import signal

            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()


def worker_env(
    database_url: str, chroma_url: str | None, model_base_url: str, data_dir: Path, **extra: str
) -> dict[str, str]:
    """The environment of a worker on these shared servers with the stub model."""
    env = {
        "DATABASE_URL": database_url,
        "OPENAI_BASE_URL": model_base_url,
        "OPENAI_API_KEY": "stub",
        "MEMORY_AGENT_MODEL": "openai:stub-model",
        "MEMORY_DATA_DIR": str(data_dir),
        # Each run gets its own collection names, so runs sharing a Chroma server never mix.
        "MEMORY_CHROMA_PREFIX": extra.pop("MEMORY_CHROMA_PREFIX", "w" + uuid.uuid4().hex[:8]),
        **extra,
    }
    if chroma_url:
        env["CHROMA_URL"] = chroma_url
    return env


if __name__ == "__main__":
    main()
