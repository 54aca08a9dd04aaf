"""The inspector's pure parts: escaping, redirect targets, CSRF values, SVG charts, dev banner."""

from __future__ import annotations

import argparse
import contextlib
import html
import importlib
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.inspector.charts import BREAKDOWN_PARTS, breakdown_bars, histogram, lines, rate_bar
from agent.inspector.render import action_form, e, page, table
from agent.inspector.session import _safe_next, csrf_token

SECRET = "unit-test-secret-0123456789"


@given(st.text())
def test_escaped_text_never_opens_a_tag_or_leaves_an_attribute(text: str) -> None:
    out = e(text)
    assert "<" not in out and ">" not in out and '"' not in out and "'" not in out
    assert html.unescape(out) == text


@given(st.text().map(lambda t: f"<zz onclick=x>{t}</zz>"))
def test_page_content_is_escaped_wherever_it_lands(text: str) -> None:
    body = table(["h"], [[e(text)]]) + action_form("/memory/x", text, fields=e(text))
    doc = page(text, body, csrf=text, user=text)
    # The only tags are the template's own: user text cannot add a script or an event handler.
    assert re.findall(r"<script[^>]*>", doc) == [
        '<script src="/memory/ui/static/inspector.js" defer>'
    ]
    assert "<zz" not in doc and "onclick=x>" not in doc


@given(st.text())
def test_sign_in_redirects_stay_inside_the_inspector(target: str) -> None:
    out = _safe_next(target)
    assert out.startswith("/memory/ui") and "//" not in out and "\\" not in out


@pytest.mark.parametrize(
    "target", ["//evil.example", "/memory/ui//evil.example", "/memory/ui\\@evil", "https://x/"]
)
def test_known_open_redirect_shapes_are_refused(target: str) -> None:
    assert _safe_next(target) == "/memory/ui"


def test_csrf_values_are_bound_to_the_token_and_the_secret() -> None:
    a = csrf_token("token-a", SECRET)
    assert a == csrf_token("token-a", SECRET)
    assert a != csrf_token("token-b", SECRET)
    assert a != csrf_token("token-a", SECRET + "x")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", a)


@given(st.dictionaries(st.sampled_from(BREAKDOWN_PARTS), st.floats(-5, 5), min_size=0))
def test_breakdown_bars_are_clamped_to_the_track(breakdown: dict[str, float]) -> None:
    svg = breakdown_bars(breakdown, label="<b>x</b>")
    widths = [float(w) for w in re.findall(r'width="([0-9.]+)" height="10" class="bar ', svg)]
    assert widths and all(0 <= w <= 160 for w in widths)
    assert svg.count('class="bar ') == len(BREAKDOWN_PARTS)
    assert "<b>" not in svg


def test_histogram_draws_each_bucket_not_the_running_total() -> None:
    svg = histogram([[0.005, 2], [0.01, 5], [float("inf"), 5]], label="latency")
    titles = re.findall(r"<title>([^<]*)</title>", svg)
    assert titles[1:] == ["≤ 5 ms: 2", "≤ 10 ms: 3", "≤ +Inf ms: 0"]
    assert "no data" in histogram([], label="latency")


def test_lines_and_rates_handle_empty_and_bounded_values() -> None:
    assert "no data" in lines({}, label="counts")
    svg = lines({"episodic": [("2026-01-01", 1.0), ("2026-01-02", 3.0)]}, label="counts")
    assert "<polyline" in svg and "episodic (3)" in svg
    assert "no data" in rate_bar(None, label="hit rate")
    assert "100.0%" in rate_bar(7.0, label="hit rate")


async def test_dev_prints_the_inspector_address(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The package re-exports the function under the module's name; take the module itself.
    dev_command = importlib.import_module("agent.commands.dev")

    class _Proc:
        returncode = 0

        async def wait(self) -> int:
            return 0

    async def _spawn(*_args: Any, **_kw: Any) -> _Proc:
        return _Proc()

    monkeypatch.setenv("DATABASE_URL", "")  # dev() sets it; restored after the test
    monkeypatch.setattr(dev_command, "database_url", lambda _settings: "postgresql://x/y")

    @contextlib.asynccontextmanager
    async def _reachable(*_args: Any, **_kw: Any) -> AsyncIterator[None]:
        yield None  # the database check before the server starts: no database in a unit test

    monkeypatch.setattr(dev_command, "open_pool", _reachable)
    monkeypatch.setattr(dev_command.asyncio, "create_subprocess_exec", _spawn)
    args = argparse.Namespace(host="127.0.0.1", port=2099, no_browser=True)
    assert await dev_command.dev(args) == 0
    assert "http://127.0.0.1:2099/memory/ui" in capsys.readouterr().out


def test_audit_details_read_as_pairs_with_rounded_numbers() -> None:
    from agent.inspector.pages import detail_text

    detail = {"score": 0.7234567891, "parts": {"similarity": 0.41234, "kept": True}, "by": "gate"}
    assert detail_text(detail) == (
        'score: 0.723; parts: {"similarity": 0.412, "kept": true}; by: gate'
    )
    assert detail_text(None) == "" and detail_text({}) == ""


def test_histogram_ticks_are_slanted_and_overlapping_lines_stay_visible() -> None:
    from importlib import resources

    buckets = [[b, i] for i, b in enumerate((0.005, 0.01, 0.025, 0.25, 2.5, 10.0, float("inf")))]
    svg = histogram(buckets, label="latency")
    ticks = re.findall(r'<text x="([\d.]+)"[^>]*transform="rotate\(-45 [^"]+\)"[^>]*>([^<]+)<', svg)
    assert [t for _, t in ticks] == ["5", "10", "25", "250", "2500", "10000", "+Inf"]
    # Slanted, the widest label ("10000", ~33 px) still starts inside the picture.
    assert min(float(x) for x, _ in ticks) - 33 * 0.71 >= 0
    css = resources.files("agent.inspector").joinpath("static", "inspector.css").read_text()
    # Two series with the same values: the second is dashed, so the first shows through.
    svg = lines({"episodic": [("d1", 3.0)], "semantic": [("d1", 3.0)]}, label="kinds")
    assert 'class="series s0"' in svg and 'class="series s1"' in svg
    assert re.search(r"polyline\.s1 \{ stroke-dasharray", css)
