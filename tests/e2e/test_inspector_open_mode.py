"""The quick start's inspector: open local mode (no secret), loopback only, a chosen local user.

A real `langgraph dev` with no `MEMORY_AUTH_SECRET` (as `memory-agent dev` runs it), httpx for
the door's rules, and headless Chromium for what a newcomer does: open the inspector, choose a
local user, see that user's memories under a label saying the mode.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from tests.conftest import LangGraphFactory
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def open_server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Iterator[LangGraphServer]:
    data_dir = tmp_path_factory.mktemp("open-inspector")
    yield langgraph_factory(env=agent_env(pg_db_url, data_dir, _stub_session.base_url))


async def _remember(server: LangGraphServer, user: str, text: str) -> None:
    client = get_client(url=server.url)
    thread = (await client.threads.create())["thread_id"]
    said = {"messages": [{"role": "user", "content": text}]}
    await client.runs.wait(thread, "agent", input=said, context={"user_id": user})


async def test_a_local_user_is_chosen_labelled_and_limited_to_this_machine(
    open_server: LangGraphServer,
) -> None:
    await _remember(open_server, "alice", "I prefer window seats on long flights.")
    origin = {"Origin": open_server.url}
    async with httpx.AsyncClient(base_url=open_server.url, timeout=60) as http:
        first = await http.get("/memory/ui")
        assert first.status_code == 303 and "/memory/ui/login" in first.headers["location"]
        login = await http.get("/memory/ui/login")
        assert login.status_code == 200 and "Open local mode" in login.text
        assert "MEMORY_AUTH_SECRET" in login.text
        # The API has no user to act for until one is chosen, and says how to choose.
        api = await http.get("/memory/memories")
        assert api.status_code == 403 and "choose a local user" in api.text
        bad = await http.post("/memory/ui/login", data={"user": "../etc"}, headers=origin)
        assert bad.status_code == 400
        foreign = await http.post(
            "/memory/ui/login", data={"user": "alice"}, headers={"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        chosen = await http.post("/memory/ui/login", data={"user": "alice"}, headers=origin)
        assert chosen.status_code == 303 and "lma_local_user=alice" in chosen.headers["set-cookie"]
        page = await http.get("/memory/ui")
        assert page.status_code == 200 and "open local mode" in page.text
        assert "window seats" in page.text
        mine = await http.get("/memory/memories")
        assert mine.status_code == 200 and "window seats" in mine.text
        # A page that reached the port under another name (DNS rebinding) is not served.
        rebound = await http.get("/memory/ui", headers={"Host": "evil.example"})
        assert rebound.status_code == 403
        # A change from another origin is refused even with the cookie.
        pinned = await http.post(
            "/memory/memories/zzzz/pin", headers={"Origin": "http://evil.example"}
        )
        assert pinned.status_code == 403
    async with httpx.AsyncClient(base_url=open_server.url, timeout=60) as bob:
        bob.cookies.set("lma_local_user", "bob", path="/memory")
        page = await bob.get("/memory/ui")
        assert page.status_code == 200 and "window seats" not in page.text


@pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
    reason="Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)",
)
async def test_a_newcomer_opens_the_inspector_in_a_browser(
    open_server: LangGraphServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    await _remember(open_server, "carol", "My sister Dana lives in Lisbon.")
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        driver.get(f"{open_server.url}/memory/ui")
        WebDriverWait(driver, 30).until(ec.url_contains("/memory/ui/login"))
        field = driver.find_element(By.ID, "user")
        field.clear()
        field.send_keys("carol", Keys.ENTER)
        WebDriverWait(driver, 30).until(ec.url_matches(r"/memory/ui/?$"))
        main = driver.find_element(By.TAG_NAME, "body").text
        assert "Dana lives in Lisbon" in main and "open local mode" in main
        driver.save_screenshot(str(tmp_path / "open-local-mode.png"))
    finally:
        driver.quit()
