"""Cross-modal recall through an OpenAI-compatible embeddings endpoint (a local stub) + real stores.

The stub plays a CLIP-style model in a 3-d colour space: an image embeds as its mean colour, a
text as the colour words it names. A red photo described only as "holiday photo" is then found
by "the red one": the image vectors, not the description, did it.
"""

from __future__ import annotations

import base64
import io
import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from PIL import Image

from agent.images import image_evidence
from memory.multimodal import (
    ImageEmbedder,
    ImageLimits,
    clean_image,
    remember_image,
    search_images,
)
from memory.multimodal.describe import ImageDescription
from memory.settings import Settings
from memory.storage.forget import forget_user
from memory.storage.forget_one import delete_memory
from memory.storage.store import MemoryStore, open_store
from memory.storage.vector import IMAGE_LAYER
from memory.types import Scope
from tests.support.images import encode, scene
from tests.support.memory_stores import truncate

ALICE, BOB = Scope("acme", "alice"), Scope("acme", "bob")
COLOURS = {"red": [1.0, 0.0, 0.0], "green": [0.0, 1.0, 0.0], "blue": [0.0, 0.0, 1.0]}


class _Embeddings(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        data = [{"index": i, "embedding": _embed(item)} for i, item in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200 if self.path == "/v1/embeddings" else 404)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _embed(item: dict[str, str]) -> list[float]:
    if "image" in item:
        raw = base64.b64decode(item["image"].split(",", 1)[1])
        pixels = Image.open(io.BytesIO(raw)).convert("RGB").resize((1, 1), Image.Resampling.BOX)
        r, g, b = pixels.getpixel((0, 0))  # type: ignore[misc]
        return [r / 255, g / 255, b / 255]
    words = item["text"].lower()
    hits = [COLOURS[w] for w in COLOURS if w in words]
    return [sum(v[i] for v in hits) + 0.01 for i in range(3)] if hits else [0.3, 0.3, 0.3]


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Embeddings.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def settings(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, endpoint: str
) -> Settings:
    return Settings(
        database_url=pg_db_url,
        data_dir=tmp_data_dir,
        embedding_model_dir=embedding_model_dir,
        image_embedding_url=endpoint,
        image_embedding_model="stub-clip",
    )


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[MemoryStore]:
    async with open_store(settings) as s:
        await truncate(s)
        yield s


def _tinted(seed: int, colour: tuple[int, int, int]) -> bytes:
    return encode(Image.blend(scene(seed), Image.new("RGB", (320, 240), colour), 0.75), "PNG")


async def _remember(store: MemoryStore, scope: Scope, data: bytes, text: str, embedder: Any) -> str:
    image = clean_image(data, ImageLimits())
    result = await remember_image(
        store, scope, image, ImageDescription(text, "user_text"), embedder=embedder
    )
    assert result.action == "stored" and result.memory_id
    return result.memory_id


async def test_text_queries_find_images_by_their_vectors(
    store: MemoryStore, settings: Settings
) -> None:
    embedder = ImageEmbedder.from_settings(settings)
    assert embedder is not None
    red = await _remember(store, ALICE, _tinted(1, (220, 20, 20)), "holiday photo one", embedder)
    blue = await _remember(store, ALICE, _tinted(2, (20, 20, 220)), "holiday photo two", embedder)
    await _remember(store, BOB, _tinted(3, (230, 10, 10)), "bob's photo", embedder)
    sent = [item for r in _Embeddings.requests for item in r["input"]]
    assert sum("image" in item for item in sent) == 3
    assert all(item["image"].startswith("data:image/png;base64,") for item in sent)

    hits = await search_images(store.index, embedder, ALICE, "the red one", k=2)
    assert [h[0] for h in hits] == [red, blue]
    hits = await search_images(store.index, embedder, ALICE, "something blue", k=1)
    assert [h[0] for h in hits] == [blue]
    # The agent's recall glue finds it by the image vector: its description names no colour.
    evidence = await image_evidence(store, ALICE, "the red one", 2, settings)
    assert evidence[0][0].id == red and evidence[0][0].content.startswith("Image (undescribed)")

    # Deleting a memory removes its image vector; forgetting a user removes them all.
    await delete_memory(store, ALICE, red, reason="test")
    hits = await search_images(store.index, embedder, ALICE, "the red one", k=5)
    assert [h[0] for h in hits] == [blue]
    receipt = await forget_user(store, ALICE)
    assert receipt.counts["chroma"] >= 2  # the text entry and the image vector of `blue`
    assert await search_images(store.index, embedder, ALICE, "blue", k=5) == []
    bob = await store.index._call(
        IMAGE_LAYER, BOB, "get", where=store.index._owned(BOB), include=[]
    )
    assert len(bob["ids"]) == 1


async def test_an_unreachable_endpoint_never_loses_the_memory(
    store: MemoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    down = ImageEmbedder("http://127.0.0.1:9/v1", "stub-clip")
    memory_id = await _remember(store, ALICE, _tinted(4, (20, 200, 20)), "a green field", down)
    assert await store.get(ALICE, memory_id) is not None
    assert "not indexed for cross-modal recall" in caplog.text
    assert await search_images(store.index, down, ALICE, "green", k=3) == []
