"""The inspector in a real headless Chromium (Debian's package) against a real `langgraph dev`.

A user signs in with a token (keyboard only), finds a memory by search and reads its score
breakdown, edits it (the stored text is redacted and a new version), approves a pending memory,
deletes one, and gets a 404 for another user's memory by URL; attacker-controlled memory text
runs no script. An admin rolls back a consolidation run. Screenshots go to pytest's tmp folder.

The browser and its driver come from the distribution (`apt-get install chromium
chromium-driver`, done by `.ci/run`); nothing is downloaded: the driver path is given and
Selenium Manager is kept offline.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.e2e.inspector_world import ADMIN, ALICE, DAVE, World
from tests.support.langgraph_server import LangGraphServer

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip(
        "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    # Selenium Manager must not look anything up: the driver path is given explicitly.
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1200,900", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--metrics-recording-only",
                f"--user-data-dir={tmp_path / 'chromium-profile'}"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: WebDriver, condition: Any, timeout: float = 30) -> Any:
    return WebDriverWait(driver, timeout).until(condition)


def _shot(driver: WebDriver, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    assert driver.save_screenshot(str(path)), name
    return path


def _sign_in(driver: WebDriver, inspector_server: LangGraphServer, token: str) -> None:
    """Sign in from the keyboard: type the token, Tab to the button, press Enter."""
    driver.get(f"{inspector_server.url}/memory/ui")
    _wait(driver, ec.url_contains("/memory/ui/login"))
    field = driver.find_element(By.ID, "token")
    field.send_keys(token)
    # Tab to the submit button and press Enter, as a keyboard user would.
    field.send_keys(Keys.TAB)
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    try:
        _wait(driver, ec.presence_of_element_located((By.CSS_SELECTOR, "header .who")))
    except TimeoutException as exc:  # say what the browser shows instead of a bare timeout
        raise AssertionError(
            f"sign-in failed at {driver.current_url}: {driver.page_source}"
        ) from exc


def _submit_action(driver: WebDriver, label: str) -> None:
    """Focus an action's button and press Enter (keyboard, no mouse)."""
    xpath = f"//form[@data-api]//button[normalize-space()='{label}']"
    driver.find_element(By.XPATH, xpath).send_keys(Keys.ENTER)


async def _row(url: str, sql: str, *args: Any) -> Any:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchrow(sql, *args)
    finally:
        await conn.close()


def _db(inspector_world: World, sql: str, *args: Any) -> Any:
    return asyncio.run(_row(str(inspector_world.settings.database_url), sql, *args))


def test_a_user_inspects_corrects_and_prunes_their_memory(
    browser: WebDriver, inspector_server: LangGraphServer, inspector_world: World, tmp_path: Path
) -> None:
    d = browser
    _sign_in(d, inspector_server, inspector_world.token(ALICE))
    assert "alice @ acme" in d.find_element(By.CSS_SELECTOR, "header .who").text
    # Attacker-controlled text is shown as text and runs nothing.
    assert "window.__xss=1" in d.find_element(By.TAG_NAME, "main").text
    assert d.execute_script("return window.__xss === undefined") is True
    _shot(d, tmp_path, "01-browse")

    # Search with the real recall; the result's breakdown is drawn as six bars.
    d.get(f"{inspector_server.url}/memory/ui/search")
    box = d.find_element(By.ID, "q")
    box.send_keys("which seat do I like on flights", Keys.ENTER)
    _wait(d, ec.presence_of_element_located((By.CSS_SELECTOR, "ol.hits li")))
    first = d.find_element(By.CSS_SELECTOR, "ol.hits li")
    assert "window seats" in first.text
    bars = first.find_elements(By.CSS_SELECTOR, "svg.breakdown rect.bar")
    parts = {b.get_attribute("data-part"): float(b.get_attribute("data-value") or 0) for b in bars}
    assert set(parts) == {"similarity", "lexical", "recency", "importance", "access", "temporal"}
    assert parts["similarity"] > 0.2
    _shot(d, tmp_path, "02-search")

    # Edit: the e-mail address is redacted before it is stored; the old text is a version.
    first.find_element(By.TAG_NAME, "a").click()
    _wait(d, ec.presence_of_element_located((By.ID, "content")))
    text = d.find_element(By.ID, "content")
    text.clear()
    text.send_keys("I prefer aisle seats on long flights; write to alice@example.com")
    _submit_action(d, "Save new text")
    _wait(d, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "p.content"), "aisle"))
    content = d.find_element(By.CSS_SELECTOR, "p.content").text
    assert "[REDACTED:email]" in content and "alice@example.com" not in content
    versions = d.find_element(By.XPATH, "//h2[text()='Versions']/following-sibling::table[1]")
    assert "window seats" in versions.text and "edit" in versions.text
    assert "edited by the user" in d.find_element(By.XPATH, "//table[caption]").text
    _shot(d, tmp_path, "03-edited")
    row = _db(
        inspector_world,
        "SELECT content, version FROM memories WHERE id = $1",
        inspector_world.ids["seat"],
    )
    assert row["version"] == 2 and "alice@example.com" not in row["content"]

    # Pin it (a new version again).
    _submit_action(d, "Pin")
    _wait(d, ec.presence_of_element_located((By.CSS_SELECTOR, "dd .badge.pinned")))
    row = _db(
        inspector_world,
        "SELECT pinned, version FROM memories WHERE id = $1",
        inspector_world.ids["seat"],
    )
    assert row["pinned"] is True and row["version"] == 3

    # Approve the pending memory.
    d.get(f"{inspector_server.url}/memory/ui?status=pending_approval")
    d.find_element(By.PARTIAL_LINK_TEXT, "invoices").click()
    _wait(d, ec.presence_of_element_located((By.CSS_SELECTOR, ".badge.pending_approval")))
    _submit_action(d, "Approve")
    _wait(d, ec.presence_of_element_located((By.CSS_SELECTOR, "dd .badge.active")))
    status = _db(
        inspector_world, "SELECT status FROM memories WHERE id = $1", inspector_world.ids["pending"]
    )
    assert status["status"] == "active"

    # Delete one (the confirmation box is ticked from the keyboard).
    d.get(f"{inspector_server.url}/memory/ui/memories/{inspector_world.ids['doomed']}")
    d.find_element(By.ID, "really").send_keys(Keys.SPACE)
    _submit_action(d, "Delete")
    _wait(d, lambda drv: drv.current_url.rstrip("/").endswith("/memory/ui"))
    assert "gym membership" not in d.find_element(By.TAG_NAME, "main").text
    gone = _db(
        inspector_world,
        "SELECT count(*) AS n FROM memories WHERE id = $1",
        inspector_world.ids["doomed"],
    )
    assert gone["n"] == 0

    # Another user's memory is out of reach by URL.
    d.get(f"{inspector_server.url}/memory/ui/memories/{inspector_world.ids['bob']}")
    assert inspector_world.ids["bob_text"] not in d.page_source
    assert "no such memory" in d.page_source
    _shot(d, tmp_path, "04-not-yours")


def test_an_admin_rolls_back_a_consolidation_run(
    browser: WebDriver, inspector_server: LangGraphServer, inspector_world: World, tmp_path: Path
) -> None:
    d = browser
    before = _db(
        inspector_world,
        "SELECT status FROM consolidation_runs WHERE run_id = $1",
        inspector_world.run_id,
    )
    assert before["status"] == "completed"
    _sign_in(d, inspector_server, inspector_world.token(ADMIN, admin=True))
    d.find_element(By.LINK_TEXT, "Admin").click()
    _wait(d, ec.presence_of_element_located((By.LINK_TEXT, inspector_world.run_id)))
    assert d.find_elements(By.CSS_SELECTOR, "svg.chart"), "metrics charts are drawn"
    _shot(d, tmp_path, "05-admin")
    d.find_element(By.LINK_TEXT, inspector_world.run_id).click()
    diff = _wait(d, ec.presence_of_element_located((By.XPATH, "//table[caption='Changes']")))
    # The tenant's admin sees each text's length and digest, not Carol's words.
    assert "text hidden" in diff.text and "created" in diff.text
    assert "TypeScript" not in diff.text
    _submit_action(d, "Roll back this run")
    receipt = _wait(d, ec.visibility_of_element_located((By.ID, "receipt")))
    assert "users: 1" in receipt.text and "deleted" in receipt.text
    _shot(d, tmp_path, "06-rolled-back")
    after = _db(
        inspector_world,
        "SELECT status FROM consolidation_runs WHERE run_id = $1",
        inspector_world.run_id,
    )
    assert after["status"] == "rolled_back"
    d.refresh()
    assert "This run has been rolled back." in d.find_element(By.TAG_NAME, "main").text


def test_a_user_forgets_everything_and_gets_a_receipt(
    browser: WebDriver, inspector_server: LangGraphServer, inspector_world: World, tmp_path: Path
) -> None:
    d = browser
    _sign_in(d, inspector_server, inspector_world.token(DAVE))
    d.find_element(By.LINK_TEXT, "My data").click()
    _wait(d, ec.presence_of_element_located((By.ID, "confirm")))
    assert d.find_element(By.PARTIAL_LINK_TEXT, "Download everything").get_attribute("href")
    d.find_element(By.ID, "confirm").send_keys(Keys.SPACE)
    _submit_action(d, "Forget me")
    receipt = _wait(d, ec.visibility_of_element_located((By.ID, "receipt")))
    # Read as lines of `key: value`, not raw JSON, and wrapped inside the page.
    lines = receipt.text.splitlines()
    assert "user_id: dave" in lines and "  postgres.memories: 1" in lines, receipt.text
    fits = "const r = document.getElementById('receipt'); return r.scrollWidth <= r.clientWidth"
    assert d.execute_script(fits) is True
    _shot(d, tmp_path, "07-forgotten")
    left = _db(inspector_world, "SELECT count(*) AS n FROM memories WHERE user_id = 'dave'")
    assert left["n"] == 0
