"""Metrics without a database: the Prometheus rendering, the histogram, "used" memories, LRU."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from memory.observability.hit_rate import used_memory_ids
from memory.observability.latency import LatencyHistogram, quantile_bound
from memory.observability.metrics import render_prometheus
from memory.storage.cache_sync import parse_payload
from memory.types import Category, MemoryKind, MemoryRecord, Origin, Scope, Source, Status
from tests.support.prometheus import parse_prometheus


def _stats(latency: LatencyHistogram, **over: Any) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "tenant": None,
        "storage_bytes": {
            "postgres": {"memories": 16384, 'we"ird\\name': 8192},
            "postgres_total": 24576,
            "chroma": 1_000_000,
        },
        "memories": {
            "by_kind_status": [
                {"kind": "episodic", "status": "active", "count": 3},
                {"kind": "preference", "status": "superseded", "count": 1},
            ]
        },
        "recall_latency_seconds": latency.snapshot(),
        "cache": {
            "recall": {"hits": 7, "misses": 3, "hit_rate": 0.7},
            "profile": {"hits": 0, "misses": 0, "hit_rate": None},
        },  # fmt: skip
        "usage": {"turns": 2, "injected": 4, "used": 1, "hit_rate": 0.25},
        "pollution": {
            "stored": 4,
            "polluted": 2,
            "rate": 0.5,
            "by_reason": {"superseded": 1, "deleted": 1, "flagged": 0},
        },  # fmt: skip
        "agent_events": {"task_completed": 2},
    }
    stats.update(over)
    return stats


def test_rendered_text_parses_and_carries_the_numbers() -> None:
    latency = LatencyHistogram("x", "x", buckets=(0.01, 0.1, 1.0))
    for seconds in (0.005, 0.01, 0.05, 0.5, 3.0):
        latency.observe(seconds)
    families = parse_prometheus(render_prometheus(_stats(latency)))
    storage = families["memory_storage_bytes"]
    assert storage.type == "gauge"
    assert storage.value(store="postgres", relation="memories") == 16384
    assert storage.value(store="postgres", relation='we"ird\\name') == 8192  # escaped, parsed back
    assert storage.value(store="chroma", relation="all") == 1_000_000
    assert families["memory_count"].value(kind="preference", status="superseded") == 1
    hist = families["memory_recall_duration_seconds"]
    assert hist.type == "histogram"
    buckets = {lab["le"]: v for n, lab, v in hist.samples if n.endswith("_bucket")}
    assert buckets == {"0.01": 2, "0.1": 3, "1.0": 4, "+Inf": 5}  # le is inclusive: 0.01 <= 0.01
    sums = [v for n, _, v in hist.samples if n.endswith("_sum")]
    assert sums == [pytest.approx(3.565)]
    assert families["memory_cache_hits_total"].type == "counter"
    assert families["memory_cache_hits_total"].value(cache="recall") == 7
    assert families["memory_cache_hit_ratio"].value(cache="recall") == 0.7
    assert [lab for _, lab, _ in families["memory_cache_hit_ratio"].samples] == [
        {"cache": "recall"}
    ]
    assert families["memory_injection_hit_ratio"].value() == 0.25
    assert families["memory_pollution_ratio"].value() == 0.5
    assert families["memory_polluted_memories"].value(reason="deleted") == 1
    assert families["memory_agent_events"].value(event_type="task_completed") == 2


def test_unknown_rates_are_left_out_not_sent_as_zero() -> None:
    stats = _stats(
        LatencyHistogram("x", "x"),
        usage={"turns": 0, "injected": 0, "used": 0, "hit_rate": None},
        pollution={"stored": 0, "polluted": 0, "rate": None, "by_reason": {}},
    )
    families = parse_prometheus(render_prometheus(stats))
    assert "memory_injection_hit_ratio" not in families
    assert "memory_pollution_ratio" not in families
    assert families["memory_injected_memories"].value() == 0
    assert families["memory_recall_duration_seconds"].samples[-1][2] == 0  # _count


def test_the_parser_rejects_broken_exposition() -> None:
    good = "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n"
    assert parse_prometheus(good)["a_total"].value() == 1
    bad = [
        good.rstrip("\n"),  # no final newline
        "a_total 1\n",  # no TYPE
        good + "# TYPE a_total counter\n",  # second TYPE
        '# HELP h H.\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\n'
        "h_sum 1\nh_count 1\n",  # not cumulative
        "# HELP g G.\n# TYPE g gauge\ng{x=unquoted} 1\n",
    ]
    for text in bad:
        with pytest.raises((AssertionError, ValueError)):
            parse_prometheus(text)


def test_histogram_quantile_bounds() -> None:
    h = LatencyHistogram("x", "x", buckets=(0.01, 0.1, 1.0))
    assert h.snapshot()["p50_le"] is None
    for seconds in [0.005] * 90 + [0.5] * 10:
        h.observe(seconds)
    snap = h.snapshot()
    assert (snap["p50_le"], snap["p95_le"], snap["count"]) == (0.01, 1.0, 100)
    assert quantile_bound(snap["buckets"], 0.9) == 0.01
    with pytest.raises(ValueError):
        LatencyHistogram("x", "x", buckets=(0.1, 0.1))


def _record(mid: str, content: str) -> MemoryRecord:
    now = datetime.now(UTC)
    return MemoryRecord(
        id=mid, tenant_id="t", user_id="u", kind=MemoryKind.SEMANTIC, content=content,
        source=Source.CHAT, origin=Origin.EXPLICIT, category=Category.FACT, importance=0.5,
        confidence=0.7, created_at=now, occurred_at=now, expires_at=None, access_count=0,
        last_accessed=None, status=Status.ACTIVE, superseded_by=None, provenance={},
        content_hash="h", version=1, indexed_at=None,
    )  # fmt: skip


def test_used_memory_ids_by_citation_and_by_overlap() -> None:
    cited = _record("ab12cd34ef56ab12cd34ef56ab12cd34", "The user's dog is called Biscuit")
    restated = _record("1111aaaa2222bbbb3333cccc4444dddd", "Alice prefers window seats on flights")
    unused = _record("9999eeee8888ffff7777aaaa6666bbbb", "The quarterly report is due on Friday")
    answer = (
        "I booked you a window seat on both flights, since you prefer window seats. "
        "Say hi to your dog [mem:ab12cd34]. Report? [mem:deadbeef]"
    )
    assert used_memory_ids(answer, [cited, restated, unused]) == [cited.id, restated.id]
    # Also from plain evidence dicts (the composer's EvidenceItem) and with no answer at all.
    as_dicts = [{"id": unused.id, "content": unused.content}]
    assert used_memory_ids("The quarterly report is due on Friday.", as_dicts) == [unused.id]
    assert used_memory_ids("", [cited, restated]) == []


def test_one_shared_word_is_not_use() -> None:
    memory = _record("aaaa0000bbbb1111cccc2222dddd3333", "Alice prefers green tea in the morning")
    assert used_memory_ids("Here is the weather for the morning.", [memory]) == []


def test_cache_notification_payloads() -> None:
    alice = Scope("acme", "alice")
    assert parse_payload("acme/alice/42") == (alice, 42, False)
    assert parse_payload("acme/alice/-") == (alice, None, False)
    assert parse_payload("acme/alice/settings") == (alice, None, True)
    for bad in ("acme/alice", "acme/al ice/1", "a/b/c/d", "acme/alice/x1", ""):
        assert parse_payload(bad) is None
