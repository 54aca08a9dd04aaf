"""Settings from the environment: a value that cannot work is refused at start-up, by name."""

from __future__ import annotations

import os

import pytest

from memory.settings import MAX_CHROMA_SHARDS, MAX_L2_CANDIDATES, Settings, SettingsError
from tests.support.cli import run_cli

_BOUNDED = {
    "MEMORY_RECALL_L2_CANDIDATES": ("recall_l2_candidates", MAX_L2_CANDIDATES),
    "MEMORY_RECALL_L2_LEXICAL_CANDIDATES": ("recall_l2_lexical_candidates", MAX_L2_CANDIDATES),
    "MEMORY_CHROMA_SHARDS": ("chroma_shards", MAX_CHROMA_SHARDS),
}


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*_BOUNDED, "MEMORY_RECALL_CACHE_BYTES", "MEMORY_IMAGE_FETCH_URLS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("name", sorted(_BOUNDED))
@pytest.mark.parametrize(
    "value",
    ["3000000000", "99999999999999999999", "0", "-5", "abc", "1e3", "", " ", "12.5", "max+1"],
)
def test_a_bounded_number_outside_its_range_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    # 3,000,000,000 candidates used to pass and make every recall of a large user fail with
    # Postgres's "value out of int32 range"; the setting is now refused where it is read.
    field, maximum = _BOUNDED[name]
    if value == "max+1":
        value = f"{maximum + 1:_}"  # written as an operator might: 10_001
    monkeypatch.setenv(name, value)
    if not value.strip():  # empty means unset: the default
        assert getattr(Settings.from_env(), field) == getattr(Settings(), field)
        return
    with pytest.raises(ValueError, match=f"{name} must be an integer from 1 to {maximum:,}"):
        Settings.from_env()


@pytest.mark.parametrize("name", sorted(_BOUNDED))
def test_a_bounded_number_within_its_range_is_taken(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    field, maximum = _BOUNDED[name]
    for value, expected in (("1", 1), (str(maximum), maximum), ("3_2", 32)):
        monkeypatch.setenv(name, value)
        assert getattr(Settings.from_env(), field) == expected


def test_an_unbounded_number_still_refuses_what_is_not_a_positive_integer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_RECALL_CACHE_BYTES", "1GB")
    with pytest.raises(ValueError, match="MEMORY_RECALL_CACHE_BYTES must be a positive integer"):
        Settings.from_env()
    monkeypatch.setenv("MEMORY_RECALL_CACHE_BYTES", "2_000_000_000")
    assert Settings.from_env().recall_cache_bytes == 2_000_000_000


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("on", True), ("yes", True), ("0", False), ("off", False)]
)
def test_fetching_image_urls_reads_a_switch_like_every_other(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("MEMORY_IMAGE_FETCH_URLS", value)
    assert Settings.from_env().image_fetch_urls is expected


def test_fetching_image_urls_refuses_a_word_it_does_not_know(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Before, anything but 1/true/yes silently meant off, so "enabled" or "ON " left a
    # deployment without the fetching its operator asked for.
    monkeypatch.setenv("MEMORY_IMAGE_FETCH_URLS", "enabled")
    with pytest.raises(ValueError, match="MEMORY_IMAGE_FETCH_URLS must be 1 or 0"):
        Settings.from_env()
    monkeypatch.delenv("MEMORY_IMAGE_FETCH_URLS")
    assert Settings.from_env().image_fetch_urls is False


@pytest.mark.parametrize(
    ("name", "value", "wanted"),
    [
        ("DATABASE_URL", "localhost:5432", "postgresql://"),
        ("DATABASE_URL", "mysql://root:hunter2@db/app", "postgresql://"),
        ("CHROMA_URL", "localhost:8000", "http://"),
    ],
)
def test_a_url_without_its_scheme_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, wanted: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=f"{name} must be a URL starting with {wanted}") as err:
        Settings.from_env()
    assert "hunter2" not in str(err.value)  # a URL may carry a password


@pytest.mark.parametrize(
    ("env", "wanted"),
    [
        ({"MEMORY_CHROMA_SHARDS": "abc"}, "MEMORY_CHROMA_SHARDS must be an integer from 1 to"),
        ({"MEMORY_MAX_INPUT_CHARS": "-1"}, "MEMORY_MAX_INPUT_CHARS must be a positive integer"),
        ({"DATABASE_URL": "localhost:5432"}, "DATABASE_URL must be a URL starting with"),
        ({"MEMORY_IMAGE_KEEP": "everything"}, "MEMORY_IMAGE_KEEP must be one of"),
    ],
)
def test_the_cli_names_a_bad_setting_in_one_line_and_exits_non_zero(
    env: dict[str, str], wanted: str
) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CHROMA_URL")}
    done = run_cli({**base, **env}, "stats", timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {wanted}"), done.stderr
    assert "Traceback" not in done.stderr + done.stdout
