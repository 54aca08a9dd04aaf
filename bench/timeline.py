"""Facts that change: the right value first, for current and past questions, English and Chinese.

    python -m bench.timeline [--histories tests/data/timeline_histories.jsonl]
                             [--split tune|holdout|blind2|...|blind18|all]
                             [--show-errors] [--json OUT] [--gate-model PROVIDER:MODEL]

Each history (`tests/data/timeline_histories.jsonl`, written for this project) is one user's
statements about one attribute over the years ("I live in Berlin." 2021, "I moved to Munich
last month." 2023, ...), with unrelated filler facts, and questions about the current value
("Where do I live?") and the past ("Where did I live before Munich?", "2022年我在哪里工作？").
Every statement goes through the real write path (rules gate, conflict policy, validity
windows) into a real Postgres and Chroma (embedded unless given URLs), dated as it was said;
then each question is recalled and counts as right when the first memory holds the expected
value. The baseline in the same run is the same recall without the replaced values (what the
system answered before validity windows: the current value, or nothing of the past).

With `--gate-model` the statements go through the model gate instead, which also reads what
each one replaces (`memory.gating.update_model`), as `Context.gate_model` does in the agent.

Each small user is also asked two questions about nothing they said ("What's the capital of
Australia?", "这周末杭州会下雨吗"): kind `off-topic`, right when nothing is recalled.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._workdir import scratch_dir
from memory.gating.ingest import ingest_text
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.pg import embedded_database_url
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import Scope, ScoredMemory

HISTORIES = Path("tests/data/timeline_histories.jsonl")
NOW = datetime(2026, 12, 1, tzinfo=UTC)
"""When the questions are asked: after every statement of the corpus."""


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _right(hits: list[ScoredMemory], answer: str) -> bool:
    return bool(hits) and answer.casefold() in hits[0].record.content.casefold()


# Questions about nothing a user of these histories said: asked of each small user (two per
# history, in its language), any result they get is an injection.
OFF_TOPIC = {
    "en": [
        "What's the capital of Australia?",
        "How long should I boil an egg for a runny yolk?",
        "Can you write a short poem about autumn rain?",
        "What's the difference between a list and a tuple in Python?",
        "Is it going to rain in Lisbon this weekend?",
        "Who painted The Night Watch?",
        "How many cups are in a litre?",
        "Explain how a heat pump works, briefly.",
        "Give me three ideas for a team icebreaker.",
        "What does HTTP status 418 mean?",
    ],
    "zh": [
        "澳大利亚的首都是哪里？",
        "鸡蛋煮几分钟是溏心的",
        "帮我写一首关于秋雨的短诗",
        "Python里列表和元组有什么区别？",
        "这周末杭州会下雨吗",
        "《清明上河图》是谁画的？",
        "一升等于多少毫升",
        "简单讲讲热泵是怎么工作的",
        "给我三个团建破冰游戏的点子",
        "HTTP 418 状态码是什么意思",
    ],
}


async def _history(
    store: MemoryStore, history: dict[str, Any], off_topic: list[str], gate_model: Any = None
) -> list[dict[str, Any]]:
    """Write one history, then ask its questions; one result per question.

    The `off_topic` questions are asked too: their results (`kind` "off-topic") are right
    when nothing is recalled.
    """
    scope = Scope("bench-timeline", history["id"])
    said = sorted(history["statements"] + history.get("fillers", []), key=lambda s: s["at"])
    actions, texts, fillers = [], [], []
    for statement in said:
        results = await ingest_text(
            store, scope, statement["text"], occurred_at=_day(statement["at"]),
            require_approval=False, gate_model=gate_model,
        )  # fmt: skip
        if statement in history["statements"]:
            actions.append([r.action for r in results])
            texts.append(statement["text"])
        else:
            fillers.append((statement["text"], [r.action for r in results]))
    out = []
    for question in history["questions"]:
        hits = await recaller(store).recall(scope, question["q"], k=5, now=NOW, record_access=False)
        current_only = [h for h in hits if h.record.valid_to is None]
        out.append(
            {
                "history": history["id"],
                "lang": history["lang"],
                "split": history["split"],
                "kind": question["kind"],
                "q": question["q"],
                "answer": question["answer"],
                "right": _right(hits, question["answer"]),
                "baseline": _right(current_only, question["answer"]),
                "top": hits[0].record.content if hits else "",
                "updates": sum("superseded" in a for a in actions[1:]),
                "later_actions": [",".join(a) or "none" for a in actions[1:]],
                "later_dropped": [
                    t for t, a in zip(texts[1:], actions[1:], strict=True) if "dropped" in a
                ],
                "statements": len(actions),
                "fillers": len(fillers),
                "fillers_superseding": [t for t, a in fillers if "superseded" in a],
            }
        )
    for question in off_topic:
        hits = await recaller(store).recall(scope, question, k=5, now=NOW, record_access=False)
        out.append({"history": history["id"], "lang": history["lang"],
                    "split": history["split"], "kind": "off-topic", "q": question,
                    "answer": "", "right": not hits, "baseline": not hits,
                    "top": hits[0].record.content if hits else "", "updates": 0,
                    "later_actions": [], "later_dropped": [], "statements": 0, "fillers": 0,
                    "fillers_superseding": []})  # fmt: skip
    return out


def report(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Share right first per split, language and question kind (and the baseline's)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        for split in (r["split"], "all"):
            groups[f"{split} {r['lang']} {r['kind']}"].append(r)
    return {
        key: {
            "questions": len(rows),
            "right_first": sum(r["right"] for r in rows) / len(rows),
            "baseline": sum(r["baseline"] for r in rows) / len(rows),
        }
        for key, rows in sorted(groups.items())
    }


async def run(args: argparse.Namespace) -> int:
    """Load the corpus, write every history, ask every question, print the table."""
    lines = args.histories.read_text(encoding="utf-8").splitlines()
    histories = [json.loads(line) for line in lines if line.strip()]
    if args.split != "all":
        histories = [h for h in histories if h["split"] == args.split]
    workdir = scratch_dir("lma-bench-timeline-")
    url = args.database_url or await asyncio.to_thread(embedded_database_url, workdir)
    settings = replace(
        Settings.from_env(), database_url=url, chroma_url=args.chroma_url, data_dir=workdir
    )
    results: list[dict[str, Any]] = []
    gate_model = None
    if args.gate_model:
        from agent.model import load_chat_model

        gate_model = load_chat_model(args.gate_model)
    async with open_store(settings) as store:
        for i, history in enumerate(histories):
            asked = OFF_TOPIC[history["lang"]]
            off_topic = [asked[(2 * i) % len(asked)], asked[(2 * i + 1) % len(asked)]]
            results.extend(await _history(store, history, off_topic, gate_model))
    table = report(results)
    said = [r for r in results if r["kind"] != "off-topic"]
    statements = {r["history"]: (r["updates"], r["statements"]) for r in said}
    updates = sum(u for u, _ in statements.values())
    later = sum(n - 1 for _, n in statements.values())
    print(f"{len(histories)} histories, {len(said)} questions; later statements that "
          f"superseded the earlier value: {updates}/{later}")  # fmt: skip
    tally: dict[str, int] = defaultdict(int)
    for r in {r["history"]: r for r in said}.values():
        for action in r["later_actions"]:
            tally[action] += 1
    print(
        "what the later statements did: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
    )
    per_history = {r["history"]: r for r in said}.values()
    wrong = sum(len(r["fillers_superseding"]) for r in per_history)
    print(f"unrelated statements (fillers) that superseded a value: {wrong}/"
          f"{sum(r['fillers'] for r in per_history)}")  # fmt: skip
    print(f"{'split lang kind':<22} {'n':>4} {'right first':>12} {'baseline':>9}")
    for key, row in table.items():
        right, base = row["right_first"], row["baseline"]
        print(f"{key:<22} {row['questions']:>4} {right:>12.3f} {base:>9.3f}")
    if args.show_errors:
        for r in {r["history"]: r for r in said}.values():
            for text in r["later_dropped"]:
                print(f"  dropped [{r['history']}] {text!r}")
            for text in r["fillers_superseding"]:
                print(f"  filler superseded [{r['history']}] {text!r}")
        for r in results:
            if not r["right"]:
                print(f"  miss [{r['history']} {r['kind']}] {r['q']!r} want {r['answer']!r},"
                      f" top {r['top']!r}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(
            json.dumps({"table": table, "results": results}, ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.timeline")
    parser.add_argument("--histories", type=Path, default=HISTORIES)
    parser.add_argument(
        "--split",
        default="all",
        help="tune, holdout, blind2 ... blind18 (each blind batch written by someone who had not"
        " read the code), or all",
    )
    parser.add_argument("--database-url", default=None, help="default: an embedded PostgreSQL")
    parser.add_argument("--chroma-url", default=None, help="default: embedded Chroma")
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--json", default=None)
    parser.add_argument("--gate-model", default=None, help="gate with this model (provider:model)")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
