"""End to end: images through the real `langgraph dev` (SDK client, auth on), Postgres, Chroma.

The stub OpenAI server answers both the chat and the describe requests; the test checks the
describe request carried the image, that a later thread recalls the image by words, that the
same image resent is deduplicated, that EXIF GPS is nowhere (every table of the server's
database and the raw files of its Chroma), and that forget removes the image bytes.
"""

from __future__ import annotations

import base64
import io
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from langgraph_sdk import get_client
from PIL import Image

from agent.auth_tokens import PERMISSION_ADMIN, mint_token
from memory.types import Scope
from tests.conftest import LangGraphFactory
from tests.integration.test_image_memory import DESCRIBE_MARK, describe_requests, describe_with
from tests.support.images import (
    CAMERA_SERIAL,
    b64,
    data_url,
    dump_database,
    encode,
    jpeg_with_gps,
    metadata_forms,
    scene,
)
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e

SECRET = "e2e-image-secret-" + uuid.uuid4().hex
CAROL = Scope("acme", "carol")
CTX = {"vision_model": "openai:stub-model"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("image-server-data")


@pytest.fixture(scope="module")
def server(
    langgraph_factory: LangGraphFactory, pg_db_url: str, data_dir: Path, _stub_session: StubLLM
) -> Iterator[LangGraphServer]:
    env = agent_env(pg_db_url, data_dir, _stub_session.base_url, MEMORY_AUTH_SECRET=SECRET)
    yield langgraph_factory(env=env)


def _headers(scope: Scope) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(scope, SECRET)}"}


@pytest.fixture
async def db(pg_db_url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(pg_db_url)
    yield conn
    await conn.close()


_ASSISTANTS: dict[str, str] = {}


async def _assistant(server: LangGraphServer) -> str:
    """An admin's assistant with the vision model: a run may not choose a model itself."""
    if server.url not in _ASSISTANTS:
        token = mint_token(Scope("acme", "ops"), SECRET, permissions=[PERMISSION_ADMIN])
        admin = get_client(url=server.url, headers={"Authorization": f"Bearer {token}"})
        made = await admin.assistants.create("agent", context=CTX)
        _ASSISTANTS[server.url] = str(made["assistant_id"])
    return _ASSISTANTS[server.url]


async def _run(server: LangGraphServer, content: Any, thread: str | None = None) -> Any:
    client = get_client(url=server.url, headers=_headers(CAROL))
    thread = thread or (await client.threads.create())["thread_id"]
    message = {"role": "user", "content": content}
    return await client.runs.wait(thread, await _assistant(server), input={"messages": [message]})


async def _everything(conn: asyncpg.Connection, data_dir: Path) -> bytes:
    chunks = [await dump_database(conn)]
    for path in sorted((data_dir / "chroma").rglob("*")):  # the server's embedded Chroma
        if path.is_file():
            chunks.append(path.read_bytes())
    return b"\n".join(chunks)


async def test_image_turn_through_the_server(
    server: LangGraphServer, stub_llm: StubLLM, db: asyncpg.Connection, data_dir: Path
) -> None:
    describe_with(stub_llm, "A yellow tram climbing a steep street.", "LINE 28")
    photo = jpeg_with_gps(scene(31))
    out = await _run(server, [
        {"type": "text", "text": "Took this on my trip."},
        {"type": "image_url", "image_url": {"url": data_url(photo, "image/jpeg")}},
    ])  # fmt: skip
    assert any(g["action"] == "stored" and "image" in g["reason"] for g in out["gate"]), out
    (request,) = describe_requests(stub_llm)
    blocks = request["messages"][1]["content"]
    image_urls = [b["image_url"]["url"] for b in blocks if b.get("type") == "image_url"]
    assert len(image_urls) == 1
    sent = Image.open(io.BytesIO(base64.b64decode(image_urls[0].split(",", 1)[1])))
    assert sent.size == (320, 240) and not sent.getexif()

    # Recalled on a later thread by words only; the answer prompt cites it as evidence.
    stub_llm.reset()
    await _run(server, "Which tram line did I photograph?")
    answers = [r for r in stub_llm.requests() if DESCRIBE_MARK not in json.dumps(r["messages"])]
    cited = json.dumps(answers[0]["messages"])
    assert "yellow tram" in cited and "[mem:" in cited

    # Resent as a PNG on a third thread: reinforced, not stored twice.
    out = await _run(server, [{"type": "image", "base64": b64(encode(Image.open(io.BytesIO(photo)),
                                                                       "PNG")),
                                "mime_type": "image/png"}])  # fmt: skip
    assert [g["action"] for g in out["gate"]] == ["reinforced"], out["gate"]
    assert await db.fetchval("SELECT count(*) FROM memory_images") == 1

    dump = await _everything(db, data_dir)
    for form in metadata_forms(CAMERA_SERIAL.encode()) + metadata_forms(b"Exif\x00\x00"):
        assert form not in dump, form

    # The memory API returns the image memory with its features; forget removes the bytes.
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        listed = (await http.get("/memory/memories", headers=_headers(CAROL))).json()
        items = listed["memories"] if isinstance(listed, dict) else listed
        image = next(m for m in items if "image" in m["tags"])
        assert image["provenance"]["image"]["format"] == "JPEG"
        exported = (await http.get("/memory/export", headers=_headers(CAROL))).json()
        assert exported["images"][0]["thumbnail_base64"]
        response = await http.post(
            "/memory/forget", headers=_headers(CAROL), json={"confirm": True}
        )
        assert response.status_code == 200, response.text
    assert await db.fetchval("SELECT count(*) FROM memory_images") == 0
    assert await db.fetchval("SELECT count(*) FROM memories WHERE user_id = 'carol'") == 0


async def test_server_refuses_non_images_clearly(
    server: LangGraphServer, stub_llm: StubLLM
) -> None:
    bogus = base64.b64encode(b"MZ\x90\x00 definitely not a picture" * 10).decode()
    out = await _run(server, [{"type": "image", "base64": bogus, "mime_type": "image/png"}])
    assert "not a readable image" in out["rejected"]
    assert out["messages"][-1]["content"].startswith("I could not use that message:")
    assert describe_requests(stub_llm) == []
