"""The quick start's inspector: open local mode (no secret) in a real headless Chromium.

A memory made as a chosen user (as `memory-agent chat --user NAME` does) is seen by signing in
as that local user, labelled as such; a client that names the server by a non-loopback host
(another machine, or a DNS-rebinding page) is refused by the inspector and the API alike.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import httpx
import pytest
from langgraph_sdk import get_client
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec

from tests.conftest import LangGraphFactory
from tests.e2e.test_inspector_browser import _wait, browser
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e
__all__ = ["browser"]  # the shared headless Chromium fixture

USER = "alice" + uuid.uuid4().hex[:6]


@pytest.fixture(scope="module")
def open_server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Iterator[LangGraphServer]:
    data_dir = tmp_path_factory.mktemp("open-inspector-data")
    env = agent_env(pg_db_url, data_dir, _stub_session.base_url)
    env.pop("MEMORY_AUTH_SECRET", None)
    yield langgraph_factory(env=env)


async def _remember(url: str) -> None:
    client = get_client(url=url)
    thread = await client.threads.create()
    await client.runs.wait(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "I prefer dark mode in every editor."}]},
        context={"user_id": USER},
    )


def test_the_inspector_signs_in_as_a_chosen_local_user(
    browser: WebDriver, open_server: LangGraphServer
) -> None:
    asyncio.run(_remember(open_server.url))
    d = browser
    d.get(f"{open_server.url}/memory/ui")
    _wait(d, ec.url_contains("/memory/ui/login"))
    assert "Open local mode" in d.find_element(By.TAG_NAME, "main").text
    field = d.find_element(By.ID, "user")
    field.clear()
    field.send_keys(USER, Keys.ENTER)
    _wait(d, ec.presence_of_element_located((By.CSS_SELECTOR, "header .who")))
    who = d.find_element(By.CSS_SELECTOR, "header .who").text
    assert f"{USER} @ default" in who and "local user" in who
    assert "dark mode" in d.find_element(By.TAG_NAME, "main").text

    # A user id no scope takes is refused in one line, on the form.
    d.get(f"{open_server.url}/memory/ui/login")
    field = d.find_element(By.ID, "user")
    field.clear()
    field.send_keys("a/b", Keys.ENTER)
    _wait(d, ec.presence_of_element_located((By.CSS_SELECTOR, "p.error")))
    assert "refused" in d.find_element(By.CSS_SELECTOR, "p.error").text


def test_open_mode_refuses_a_non_loopback_host(open_server: LangGraphServer) -> None:
    evil = {"host": f"evil.example:{open_server.port}"}
    with httpx.Client(base_url=open_server.url, timeout=30) as http:
        login = http.post("/memory/ui/login", data={"user": USER}, headers=evil)
        assert login.status_code == 403 and "set-cookie" not in login.headers
        api = http.post("/threads/search", json={}, headers=evil)
        assert api.status_code == 401
        assert "this machine only" in api.text
        assert http.post("/threads/search", json={}).status_code == 200
