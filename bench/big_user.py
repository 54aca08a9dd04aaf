"""Recall of one very large user through L2, stage by stage, on a database loaded once.

    python -m bench.big_user --dir /tmp/big                   # load (first time), then measure
    python -m bench.big_user --dir /tmp/big --baseline-tree ../base --rounds 2 --json big.json

The user has `--memories` synthetic memories, loaded as `bench.scale` loads them (COPY to
Postgres, batches to a `chroma run` server): by default (`--corpus clusters`) short generated
texts whose vectors are noisy copies of 420 sentences' embeddings (cosine ~0.93 to their
sentence), or with `--corpus sentences` distinct generated sentences embedded by the model
(`bench/_big_corpus.py`; ~13 minutes to load on 2 cores), or with `--corpus random`
`bench.scale`'s large user (clustered random vectors, generated texts; ~4 minutes). Then a
planted set with real embeddings: realistic sentences, among them the gold memories of the
probe queries below, and look-alike distractors. `--others` users of 100 memories each share
the Chroma shards. The Postgres cluster and the Chroma server's files stay
in `--dir`, so later runs (other code, other settings) reuse the load; `--reload` starts over.
Servers listen on `--port` (Postgres) and `--port + 1` (Chroma) and are stopped at the end.

Each timed recall is `Recaller.recall_traced(k=8)` on a fresh embedding (the embedder's memo is
cleared), so it pays for the query's embedding as a turn does. Stage times come from timers
wrapped around the store's calls (they overlap: the lexical leg runs while Chroma searches):
embed, lexical (the Postgres lexical leg, or the whole-user probe), chroma, rows (the dense
hits' rows by id), sample (the relevance floor's sample), index (indexing the candidates),
rank (`UserIndex.search`). Queries: the scale benchmark's five and the probes' own. `gc`: the
garbage collector's runs during the timed recalls (by generation), their time per recall and
the longest one.

Quality: every probe names its gold memory; the report gives how many golds are in the top 8
(`hits_at_8`) and pass the relevance floor (`passed_at_8`), by probe kind: `dense` (the query
shares no word with its gold: only the dense leg finds it), `rare` (a rare word among common
ones: only the lexical leg's per-term bound keeps it), `both`.

`--pristine` puts the Postgres cluster back as it was right after the load before every round
(a copy is kept in `--dir`), so a tree whose migrations change the database (e.g. index storage
settings) is compared with the baseline on the same starting state; without it, whatever the
last round's tree migrated stays. `--reference N` also ranks each query with a budget of N
candidates in each leg and reports how much of that top 8 the measured top 8 keeps.
`--ann-check` also asks Chroma for each probe's nearest entries as the dense leg does and
compares them with an exact scan of the user's vectors from Postgres (`ann`: recall of the
exact nearest, golds returned).

`--profile FILE` runs this tree's timed recalls under cProfile and writes the stats of its last
round to FILE (`python -m pstats FILE`); the figures of a profiled run are not comparable.

`--baseline-tree PATH` measures another checkout's `memory` package too (e.g. a worktree of the
main branch), in the same run, rounds alternating, each in its own process; the JSON holds
{machine {load_before, load_after}, load_s, runs {label: [round, ...]}, summary {label: {...}}}.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

TENANT = "bigbench"
BIG_USER = "big"
CHUNK = 50_000
NOISE = 0.02  # per dimension: a vector's cosine to its sentence's embedding ~0.93

# Probes: (kind, gold memory, query). "dense": no query word is in the gold memory (after
# stop words); "rare": the gold shares one rare word with a query full of words the synthetic
# memories use thousands of times; "both": shared words and meaning.
PROBES: list[tuple[str, str, str]] = [
    ("dense", "My niece Quillanora plays the oboe in her school orchestra.",
     "What musical instrument is my brother's daughter learning?"),
    ("dense", "I am severely allergic to peanuts and carry an epinephrine pen.",
     "Which foods could give me an anaphylactic reaction?"),
    ("dense", "Our wedding anniversary is on the fourteenth of June.",
     "When did my spouse and I get married?"),
    ("dense", "The kids' pediatrician moved her practice to Elm Street.",
     "Where is the children's doctor located now?"),
    ("dense", "I switched from coffee to green tea because caffeine kept me awake.",
     "Why did I stop drinking espresso?"),
    ("dense", "Our team adopted trunk-based development with short-lived branches.",
     "What git workflow does my group follow?"),
    ("dense", "I run five kilometres every morning along the river.",
     "How do I keep fit in the mornings?"),
    ("dense", "My apartment lease ends in March and the landlord wants to raise the rent.",
     "When does my rental contract expire?"),
    ("dense", "The cat needs her thyroid medication twice a day with food.",
     "How often should the kitty get her pills?"),
    ("dense", "I'm learning Japanese and practise kanji for twenty minutes each evening.",
     "Which foreign language am I studying?"),
    ("dense", "We replaced the flaky integration tests with contract tests against the mock.",
     "How did we fix the unreliable CI suite?"),
    ("dense", "My father's knee surgery is scheduled at Saint Mary's hospital.",
     "Where will dad have his operation?"),
    ("rare", "Zephyrine from accounting approved the reimbursement.",
     "What did I decide about the budget with Zephyrine?"),
    ("rare", "The wifi password at the cabin is marmaladefox42.",
     "Did I book the Lisbon trip, and is marmaladefox42 the password?"),
    ("rare", "Invoice INV-88213 is still unpaid by the vendor.",
     "What happened with our database and invoice INV-88213?"),
    ("rare", "Dr. Okonkwo-Baptiste recommended a second scan.",
     "When is the dentist appointment with Okonkwo-Baptiste?"),
    ("rare", "The staging cluster is called Brontide.",
     "What do I prefer for the API on Brontide?"),
    ("rare", "Pemberly the parrot only eats sunflower seeds.",
     "What did I schedule on Monday for Pemberly?"),
    ("rare", "Our Kubernetes namespace quarrelwick has a memory quota of 64 GiB.",
     "What happened with our database in quarrelwick?"),
    ("rare", "The bakery on Rua Garrett sells the best pastel de nata.",
     "Did I book the Lisbon trip near Garrett?"),
    ("both", "I prefer dark mode in every editor and terminal.",
     "Do I prefer dark mode in my editor?"),
    ("both", "The Q3 report is due to the board on October 15th.",
     "When is the Q3 report due to the board?"),
    ("both", "My sister's wedding is in Lisbon next September.",
     "When is my sister's wedding in Lisbon?"),
    ("both", "We migrated our database from MySQL to PostgreSQL 16 last spring.",
     "Which database did we migrate to from MySQL?"),
]  # fmt: skip

_PEOPLE = ["my cousin", "my neighbour", "my manager", "my friend Ana", "my uncle", "our intern",
           "my aunt", "my colleague Raj", "my grandmother", "the landlord"]  # fmt: skip
_ACTS = ["plays the violin on weekends", "is allergic to shellfish", "moved to Porto last year",
         "recommended a book about sailing", "started a pottery class", "runs a small bakery",
         "switched teams in January", "prefers tea over coffee", "is training for a marathon",
         "adopted a rescue dog", "is learning to code in Go", "booked a flight to Tokyo",
         "fixed the flaky deployment script", "hates long meetings", "grows tomatoes",
         "visits the dentist every six months", "bought an electric car",
         "reviewed the pull request about caching", "planned a hiking trip in the Alps",
         "takes vitamin D in winter"]  # fmt: skip


def _at(i: int) -> datetime:
    """The i-th memory's time: one every 10 minutes from 2021 (200,000: until late 2024)."""
    return datetime(2021, 1, 1, 9, tzinfo=UTC) + timedelta(minutes=10 * i)


def _distractors() -> list[str]:
    return [f"{p[0].upper()}{p[1:]} {a}." for p in _PEOPLE for a in _ACTS]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))], 2)


def _load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --- servers (kept files, fixed ports) ------------------------------------------------------


class _Servers:
    """Postgres and `chroma run` on files under `root`, started here, stopped by `stop`."""

    def __init__(self, root: Path, port: int) -> None:
        from tests.support.chroma_server import ChromaServer
        from tests.support.postgres import PostgresServer

        self.root = root
        self.pg = PostgresServer(port=port)
        shutil.rmtree(self.pg.root, ignore_errors=True)  # its own temp dir: ours instead
        self.pg.root = root / "pg"
        self.pg.data = self.pg.root / "data"
        self.pg.log = self.pg.root / "postgres.log"
        self.chroma = ChromaServer(path=root / "chroma", port=port + 1)

    def start(self) -> bool:
        """Start both; True when the cluster was created now (nothing loaded yet)."""
        fresh = not self.pg.data.exists()
        if fresh:
            self.pg.root.mkdir(parents=True, exist_ok=True)
            self.pg.init()
        self.pg.start()
        if fresh:
            self.pg.create_database(self.pg.dbname)
        self.chroma.path.mkdir(parents=True, exist_ok=True)
        self.chroma.start()
        return fresh

    def stop(self) -> None:
        self.chroma.stop()
        if self.pg.is_running():
            self.pg.stop()

    @property
    def pristine(self) -> Path:
        return self.root / "pg-pristine"

    def snapshot(self) -> None:
        """Keep a copy of the cluster as loaded (before any tree's migrations ran on it)."""
        self.pg.stop()
        subprocess.run(["cp", "-a", str(self.pg.data), str(self.pristine)], check=True)
        self.pg.start()

    def restore(self) -> None:
        """Put the cluster back as loaded, so each round starts from the same state."""
        self.pg.stop()
        shutil.rmtree(self.pg.data)
        subprocess.run(["cp", "-a", str(self.pristine), str(self.pg.data)], check=True)
        self.pg.start()


def _settings(database_url: str, chroma_url: str, root: Path, big: int) -> Any:
    from memory.settings import Settings

    base = Settings.from_env()
    return replace(
        base,
        database_url=database_url,
        chroma_url=chroma_url,
        data_dir=root / "data",
        chroma_prefix="big",
        index_in_background=False,
        recall_cache_user_max=min(base.recall_cache_user_max, max(1, big - 1)),
    )


# --- loading --------------------------------------------------------------------------------


async def _load(
    database_url: str, chroma_url: str, root: Path, big: int, others: int, corpus: str
) -> Any:
    # Imported here: a baseline tree's `bench` package (on the path when it is measured)
    # may not have it, and measuring needs none of the loading code.
    from bench import _scale_recall as sr
    from bench._big_corpus import sentences
    from memory.storage.bulk import BulkMemory, analyze
    from memory.storage.store import open_store
    from memory.types import Scope

    load: dict[str, Any] = {"started": time.time(), "load_avg_before": _load_avg()}
    settings = _settings(database_url, chroma_url, root, big)
    began = time.perf_counter()
    async with open_store(settings, reindex_on_start=False) as store:
        phases = sr._Phases()
        scopes = [Scope(TENANT, f"u{i}") for i in range(others)]
        if scopes:
            await sr._load_users(store, scopes, 100, phases, chunk=500)
        whale = Scope(TENANT, BIG_USER)
        distinct = sentences(big) if corpus == "sentences" else []
        centres = {}
        if corpus == "clusters":
            combos = [f"{v} {s} {d}" for v in sr._VERBS for s in sr._SUBJECTS
                      for d in sr._DETAILS]  # fmt: skip
            centres = dict(zip(combos, await store.embedder.aembed(combos), strict=True))
        for start in range(0, big, CHUNK):
            n = min(CHUNK, big - start)
            t0 = time.perf_counter()
            if distinct:
                texts = distinct[start : start + n]
                vectors = await _embedded(store, texts, start, big)
            elif corpus == "random":  # `bench.scale`'s large user, chunk by chunk alike
                seed = 10_000_019 + start
                texts = sr._texts(random.Random(seed), n, seed)
                vectors = sr._vectors(np.random.default_rng(seed), n)
            else:
                texts, vectors = _clustered(centres, start, n)
            items = [BulkMemory(whale, uuid.uuid4().hex, t, _at(start + i), v)
                     for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]  # fmt: skip
            await _copy(store, items, phases, phases.add("generate", t0))
            print(f"  big user: {start + n:,}/{big:,} ({phases.report()['total']:.0f} s)",
                  flush=True)  # fmt: skip
        # The planted set: real sentences, embedded by the model, spread over the same years.
        texts = [gold for _, gold, _ in PROBES] + _distractors()
        vectors = await store.embedder.aembed(texts)
        rng = random.Random(5)
        ids = [uuid.uuid4().hex for _ in texts]
        items = [
            BulkMemory(whale, mid, text,
                       _at(rng.randrange(big)), vector)
            for mid, text, vector in zip(ids, texts, vectors, strict=True)
        ]  # fmt: skip
        await _copy(store, items, phases, time.perf_counter())
        await analyze(store.pool)
        load.update(
            seconds=round(time.perf_counter() - began, 1),
            phases=phases.report(),
            load_avg_after=_load_avg(),
            memories=big + len(texts),
            others=others,
            corpus=corpus,
            gold={gold: mid for (_, gold, _), mid in zip(PROBES, ids, strict=False)},
        )
    return load


def _clustered(centres: dict[str, np.ndarray], start: int, n: int) -> tuple[list[str], Any]:
    """`n` memories of the clustered corpus: noisy copies of 420 sentences' embeddings."""
    from bench import _scale_recall as sr

    rng, nrng = random.Random(start), np.random.default_rng(start)
    texts, vectors = [], np.empty((n, sr.DIM), dtype=np.float32)
    for i in range(n):
        combo = f"{rng.choice(sr._VERBS)} {rng.choice(sr._SUBJECTS)} {rng.choice(sr._DETAILS)}"
        texts.append(f"I {combo} (note {start + i})")
        vectors[i] = centres[combo]
    # Each memory's vector: its sentence's real embedding, moved by noise (cosine ~0.93 to
    # it), so the user's vectors lie where the model's vectors lie, as real ones do.
    vectors += NOISE * nrng.standard_normal(vectors.shape).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, vectors


async def _embedded(store: Any, texts: list[str], start: int, big: int) -> Any:
    """The real model's vectors of `texts`, embedded in batches with a progress line."""
    out = []
    step = 5_000
    for i in range(0, len(texts), step):
        out.append(await store.embedder.aembed(texts[i : i + step]))
        print(f"  embedded {start + i + len(out[-1]):,}/{big:,}", flush=True)
    return np.vstack(out)


async def _copy(store: Any, items: list[Any], phases: Any, began: float) -> None:
    """Features computed, then COPY to Postgres and batches to Chroma, each phase timed."""
    from memory.recall.features import encode, features_key
    from memory.recall.representation import indexed_memory
    from memory.recall.retrieval import features_of
    from memory.storage.bulk import copy_memories
    from memory.types import NewMemory

    with_features = []
    for m in items:
        item = indexed_memory(m.id, NewMemory(m.content, occurred_at=m.occurred_at), m.vector)
        key = features_key(item.text, item.context, item.occurred_at)
        with_features.append(replace(m, recall_features=encode(features_of(item), key)))
    began = phases.add("features", began)
    await copy_memories(store.pool, with_features, model=store.embedder.name,
                        indexed_at=datetime.now(UTC))  # fmt: skip
    began = phases.add("postgres", began)
    await store.index.upsert_many_users("episodic", [m.scope for m in items],
                                        [m.id for m in items],
                                        np.vstack([m.vector for m in items]))  # fmt: skip
    phases.add("chroma", began)


# --- measuring ------------------------------------------------------------------------------


class _Stages:
    """Milliseconds per stage of the recall under way (stages may overlap)."""

    def __init__(self) -> None:
        self.now: dict[str, float] = {}

    def wrap(self, obj: Any, attr: str, name: str | Callable[..., str]) -> None:
        inner = getattr(obj, attr, None)
        if inner is None:
            return

        async def timed(*args: Any, **kwargs: Any) -> Any:
            label = name if isinstance(name, str) else name(*args, **kwargs)
            t0 = time.perf_counter()
            try:
                return await inner(*args, **kwargs)
            finally:
                self.add(label, t0)

        setattr(obj, attr, timed)

    def wrap_sync(self, obj: Any, attr: str, name: str) -> None:
        inner = getattr(obj, attr, None)
        if inner is None:
            return

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.add(name, t0)

        setattr(obj, attr, timed)

    def add(self, name: str, t0: float) -> None:
        self.now[name] = self.now.get(name, 0.0) + (time.perf_counter() - t0) * 1000.0


class _Collections:
    """The garbage collector's runs during the timed recalls, and the time they took."""

    def __init__(self) -> None:
        self.started = 0.0
        self.runs = [0, 0, 0]
        self.ms: list[float] = []

    def observe(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
            return
        self.runs[info["generation"]] += 1
        self.ms.append((time.perf_counter() - self.started) * 1000.0)

    def summary(self, recalls: int) -> dict[str, Any]:
        return {
            "runs_by_generation": self.runs,
            "ms_per_recall": round(sum(self.ms) / max(1, recalls), 3),
            "longest_ms": round(max(self.ms, default=0.0), 2),
        }


def _candidates_label(*_: Any, ids: Any = (), nearest: Any = (), **kw: Any) -> str:
    return "rows" if ids or nearest else "lexical"


async def _measure(args: argparse.Namespace) -> dict[str, Any]:
    from bench._scale_recall import _QUERIES
    from memory.recall import recaller as recaller_module
    from memory.storage.store import open_store
    from memory.system import recaller
    from memory.types import Scope

    meta = json.loads((args.dir / "load.json").read_text())
    gold: dict[str, str] = meta["gold"]
    settings = _settings(args.database_url, args.chroma_url, args.dir, meta["memories"])
    whale = Scope(TENANT, BIG_USER)
    queries = [(q, None, None) for q in _QUERIES] + [(q, kind, g) for kind, g, q in PROBES]
    out: dict[str, Any] = {"label": args.label, "load_avg_before": _load_avg()}
    async with open_store(settings, reindex_on_start=False) as store:
        r = recaller(store)
        r.preload_on_miss = False
        stages = _Stages()
        stages.wrap(store.embedder, "aembed", "embed")
        stages.wrap(store.index, "query_dominant", "chroma")
        stages.wrap(store.index, "nearest", "chroma")
        stages.wrap(store.index, "query", "chroma")
        stages.wrap(store, "candidates", _candidates_label)
        stages.wrap(store, "nearest_rows", "rows")
        stages.wrap(store, "sample_vectors", "sample")
        # Indexing candidates: `_index_into` where it exists (`_entry_of` calls it), so the
        # lexical rows indexed while Chroma searches count too, once.
        indexer = "_index_into" if hasattr(recaller_module, "_index_into") else "_entry_of"
        stages.wrap_sync(recaller_module, indexer, "index")
        stages.wrap_sync(r, "_rank", "rank")
        memo = getattr(store.embedder, "memo", None)
        for q, _, _ in queries[:5]:  # warm-up: model, pools, Chroma segments, the large flag
            await r.recall_traced(whale, q, k=8, record_access=False)
        # What the tree's server does once its store is open (absent in older trees).
        system = importlib.import_module("memory.system")
        settle = getattr(system, "settle_process", getattr(system, "freeze_long_lived", None))
        if settle is not None:
            settle()
        out["froze_long_lived"] = settle is not None
        out["gil_switch_ms"] = sys.getswitchinterval() * 1000.0
        totals: list[float] = []
        per_stage: dict[str, list[float]] = {}
        quality: dict[str, dict[str, int]] = {}
        paths: dict[str, int] = {}
        tops: dict[str, list[str]] = {}  # each query's top 8 (the first pass's)
        profile = cProfile.Profile() if args.profile else None
        collecting = _Collections()
        gc.callbacks.append(collecting.observe)
        if profile is not None:
            profile.enable()
        for _ in range(args.repeat):
            for q, kind, g in queries:
                if memo is not None:
                    memo.clear()
                stages.now = {}
                t0 = time.perf_counter()
                found = await r.recall_traced(whale, q, k=8, record_access=False,
                                              relevant_only=False)  # fmt: skip
                totals.append((time.perf_counter() - t0) * 1000.0)
                tops.setdefault(q, [h.record.id for h in found.hits])
                paths[found.path] = paths.get(found.path, 0) + 1
                for name, ms in stages.now.items():
                    per_stage.setdefault(name, []).append(ms)
                if kind is not None and g is not None:
                    q_stats = quality.setdefault(kind, {"probes": 0, "hits_at_8": 0,
                                                        "passed_at_8": 0})  # fmt: skip
                    q_stats["probes"] += 1
                    hit = next((h for h in found.hits if h.record.id == gold[g]), None)
                    if hit is not None:
                        q_stats["hits_at_8"] += 1
                        relevance = hit.breakdown.relevance
                        q_stats["passed_at_8"] += relevance is None or relevance.passed
        gc.callbacks.remove(collecting.observe)
        if profile is not None:
            profile.disable()
            profile.dump_stats(str(args.profile))
        if args.reference:
            # The same queries with a larger candidate budget: how much of that ranking's top 8
            # this budget's top 8 keeps (the synthetic memories repeat their sentences, so the
            # top 8 among near-duplicates can differ between any two budgets).
            r.candidates = args.reference
            if hasattr(r, "lexical_candidates"):  # each leg's budget (older trees: one for both)
                r.lexical_candidates = args.reference
            shares = []
            for q, _, _ in queries:
                found = await r.recall_traced(whale, q, k=8, record_access=False,
                                              relevant_only=False)  # fmt: skip
                ref = {h.record.id for h in found.hits}
                shares.append(len(ref & set(tops[q])) / max(1, len(ref)))
            out["overlap_with_reference"] = round(statistics.fmean(shares), 3)
        if args.ann_check:
            out["ann"] = await _ann_check(store, whale, gold, queries, r.candidates)
    out.update(
        n=len(totals),
        p50=_pct(totals, 50),
        p95=_pct(totals, 95),
        mean=round(statistics.fmean(totals), 2),
        stages={
            k: {"p50": _pct(v, 50), "p95": _pct(v, 95), "mean": round(statistics.fmean(v), 2)}
            for k, v in per_stage.items()
        },  # fmt: skip
        gc=collecting.summary(len(totals)),
        quality=quality,
        tops=tops,
        paths=paths,
        load_avg_after=_load_avg(),
    )
    return out


async def _ann_check(
    store: Any, whale: Any, gold: dict[str, str], queries: list[Any], limit: int
) -> dict[str, Any]:
    """Chroma's unfiltered nearest entries against an exact scan of the user's vectors.

    The dense leg of a large user's L2 recall is Chroma's HNSW search (`VectorIndex.nearest`),
    approximate by design; this says how approximate on this data. Per probe kind: the mean
    and lowest share of the exact `limit` nearest that Chroma returned (`recall`), how many
    golds are the exact nearest of their query (`gold_exact_first`) and how many golds Chroma
    returned at all (`gold_returned`).
    """
    from memory.storage.rows import vector_from_bytes

    probes = [(kind, g, q) for q, kind, g in queries if kind is not None]
    vectors = await store.embedder.aembed([q for _, _, q in probes])
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT id::text AS id, embedding FROM memories WHERE tenant_id = $1"
            " AND user_id = $2 AND status = 'active' AND embedding IS NOT NULL",
            whale.tenant_id, whale.user_id,
        )  # fmt: skip
    held = [(row["id"], vector_from_bytes(row["embedding"], store.embedder.dim)) for row in rows]
    ids = np.array([mid for mid, v in held if v is not None])
    matrix = np.vstack([v for _, v in held if v is not None])
    out: dict[str, dict[str, Any]] = {}
    for (kind, g, _), vector in zip(probes, vectors, strict=True):
        order = np.argsort(-(matrix @ vector))
        exact = set(ids[order[:limit]])
        found = await store.index.nearest(whale, np.asarray(vector), k=limit,
                                          unfiltered=["episodic"], layers=["episodic"])  # fmt: skip
        returned = {mid for mid, _ in found[0].hits}
        stats = out.setdefault(kind, {"probes": 0, "recalls": [], "gold_exact_first": 0,
                                      "gold_returned": 0})  # fmt: skip
        stats["probes"] += 1
        stats["recalls"].append(len(returned & exact) / limit)
        stats["gold_exact_first"] += bool(ids[order[0]] == gold[g])
        stats["gold_returned"] += gold[g] in returned
    for stats in out.values():
        recalls = stats.pop("recalls")
        stats["recall"] = {"mean": round(statistics.fmean(recalls), 3),
                           "min": round(min(recalls), 3)}  # fmt: skip
    return out


# --- driver ---------------------------------------------------------------------------------


def _measure_in(tree: Path, args: argparse.Namespace, label: str) -> dict[str, Any]:
    """One measuring round in its own process, importing `memory` from `tree`."""
    out = args.dir / f"round-{label}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", "--dir", str(args.dir),
           "--database-url", args.database_url, "--chroma-url", args.chroma_url,
           "--label", label, "--repeat", str(args.repeat), "--out", str(out),
           "--reference", str(args.reference)]  # fmt: skip
    if args.ann_check:
        cmd.append("--ann-check")
    if args.profile is not None and label == "this":
        cmd += ["--profile", str(args.profile.resolve())]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if label == "this":
        env.update(item.split("=", 1) for item in args.this_env)
    subprocess.run(cmd, cwd=tree, env=env, check=True)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def _summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    def med(key: str) -> float:
        return round(float(statistics.median(r[key] for r in rounds)), 2)

    stages = sorted({s for r in rounds for s in r["stages"]})
    return {
        "p50": med("p50"),
        "p95": med("p95"),
        "stages_p50": {s: round(statistics.median(r["stages"][s]["p50"] for r in rounds
                                                  if s in r["stages"]), 2) for s in stages},
        "stages_p95": {s: round(statistics.median(r["stages"][s]["p95"] for r in rounds
                                                  if s in r["stages"]), 2) for s in stages},
        "gc_ms_per_recall": round(statistics.median(r["gc"]["ms_per_recall"] for r in rounds), 3),
        "quality": rounds[-1]["quality"],
        "overlap_with_reference": rounds[-1].get("overlap_with_reference"),
        "ann": rounds[-1].get("ann"),
    }  # fmt: skip


def main() -> int:
    """Load once (or reuse), then measure this tree and optionally a baseline tree."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.big_user",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dir", type=Path, required=True, help="kept servers' files")
    parser.add_argument("--port", type=int, default=21110, help="Postgres; Chroma: port + 1")
    parser.add_argument("--memories", type=int, default=200_000, help="synthetic memories")
    parser.add_argument("--others", type=int, default=100, help="other users (100 memories)")
    parser.add_argument("--corpus", choices=("clusters", "sentences", "random"),
                        default="clusters",
                        help="the big user's memories: noisy copies of 420 sentences'"
                        " vectors, distinct embedded sentences (slow to load), or bench.scale's"
                        " random vectors")  # fmt: skip
    parser.add_argument("--reload", action="store_true", help="delete --dir and load again")
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="another checkout whose `memory` package is measured too")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2, help="measuring rounds per tree")
    parser.add_argument("--repeat", type=int, default=2, help="passes over the queries a round")
    parser.add_argument("--this-env", nargs="*", default=[], metavar="NAME=VALUE",
                        help="this tree's rounds only (a setting to try)")  # fmt: skip
    parser.add_argument("--reference", type=int, default=0,
                        help="also rank with this budget; the top 8's overlap with it")  # fmt: skip
    parser.add_argument("--ann-check", action="store_true",
                        help="also check Chroma's nearest against an exact scan")  # fmt: skip
    parser.add_argument("--pristine", action="store_true",
                        help="each round on the cluster as loaded (before migrations)")  # fmt: skip
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--profile", type=Path, default=None,
                        help="cProfile this tree's timed recalls (last round)")  # fmt: skip
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--chroma-url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--label", default="this", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    from memory.settings import apply_privacy_defaults

    apply_privacy_defaults()
    if args.load:
        loaded = asyncio.run(
            _load(
                args.database_url,
                args.chroma_url,
                args.dir,
                args.memories,
                args.others,
                args.corpus,
            )
        )
        (args.dir / "load.json").write_text(json.dumps(loaded))
        return 0
    if args.measure:
        result = asyncio.run(_measure(args))
        assert args.out is not None
        args.out.write_text(json.dumps(result))
        return 0
    if args.reload:
        shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True, exist_ok=True)
    servers = _Servers(args.dir, args.port)
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load_before": _load_avg()}}
    try:
        fresh = servers.start()
        args.database_url, args.chroma_url = servers.pg.url, servers.chroma.url
        meta_file = args.dir / "load.json"
        trees = [("this", Path(__file__).resolve().parents[1])]
        if args.baseline_tree is not None:
            trees.insert(0, ("baseline", args.baseline_tree.resolve()))
        if fresh or not meta_file.exists():
            # Loaded by the first tree's code (the baseline's, when given): its migrations
            # shape the database as that code would have left it.
            print(f"loading {args.memories:,} memories into {args.dir} ...", flush=True)
            cmd = [sys.executable, str(Path(__file__).resolve()), "--load", "--dir", str(args.dir),
                   "--database-url", args.database_url, "--chroma-url", args.chroma_url,
                   "--memories", str(args.memories), "--others", str(args.others)]  # fmt: skip
            if args.corpus != "clusters":  # a baseline tree from before `--corpus` refuses it
                cmd += ["--corpus", args.corpus]
            env = {**os.environ, "PYTHONPATH": str(trees[0][1])}
            subprocess.run(cmd, cwd=trees[0][1], env=env, check=True)
            servers.snapshot()
        meta = json.loads(meta_file.read_text())
        held = meta.get("corpus", "clusters")
        if held != args.corpus:
            print(f"error: {args.dir} holds the {held} corpus, not {args.corpus}:"
                  " add --reload, or use another --dir", file=sys.stderr)  # fmt: skip
            return 2
        report["load"] = {k: meta.get(k) for k in ("seconds", "phases", "memories", "others",
                                                   "corpus", "load_avg_before",
                                                   "load_avg_after")}  # fmt: skip
        print(f"load: {report['load']}", flush=True)
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
        for i in range(args.rounds):
            for label, tree in trees:
                if args.pristine:
                    servers.restore()
                result = _measure_in(tree, args, label)
                runs[label].append(result)
                print(f"round {i + 1} {label}: p50 {result['p50']} p95 {result['p95']}"
                      f" load {result['load_avg_after']} gc {result['gc']} stages "
                      f"{ {k: v['p50'] for k, v in result['stages'].items()} }"
                      f" quality {result['quality']}"
                      f" reference {result.get('overlap_with_reference')}", flush=True)  # fmt: skip
        report["runs"] = runs
        report["summary"] = {label: _summary(rs) for label, rs in runs.items()}
        if "baseline" in runs:
            # How far this tree's answers moved from the baseline's: the share of each query's
            # baseline top 8 that this tree also returns (1.0: the same memories).
            base, this = runs["baseline"][0]["tops"], runs["this"][0]["tops"]
            shares = [len(set(base[q]) & set(this.get(q, []))) / max(1, len(base[q]))
                      for q in base]  # fmt: skip
            report["summary"]["this"]["top8_overlap_with_baseline"] = round(
                statistics.fmean(shares), 3
            )
    finally:
        servers.stop()
    report["machine"]["load_after"] = _load_avg()
    text = json.dumps(report, indent=2)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    print(json.dumps(report["summary"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["PROBES", "main"]
