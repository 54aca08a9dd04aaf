"""Database settings as the LangGraph server names them, and no embedded database when deployed."""

from __future__ import annotations

import pytest

from memory.settings import Settings
from memory.storage.pg import DatabaseError, database_url

_NAMES = ("DATABASE_URL", "DATABASE_URI", "POSTGRES_URI", "LANGSMITH_LANGGRAPH_API_VARIANT")


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("name", ["DATABASE_URL", "DATABASE_URI", "POSTGRES_URI"])
def test_each_documented_name_gives_the_database(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "postgresql://u:p@db:5432/x")
    assert Settings.from_env().database_url == "postgresql://u:p@db:5432/x"


def test_database_url_wins_and_the_dev_servers_memory_marker_is_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_URI", ":memory:")  # what `langgraph dev` sets for itself
    assert Settings.from_env().database_url is None
    monkeypatch.setenv("POSTGRES_URI", "postgres://a@b/c")
    monkeypatch.setenv("DATABASE_URL", "postgresql://first@db/x")
    assert Settings.from_env().database_url == "postgresql://first@db/x"


@pytest.mark.parametrize("variant", ["licensed", "cloud", "standalone", "anything"])
def test_deployed_without_a_url_is_an_error_not_an_embedded_database(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, variant: str
) -> None:
    monkeypatch.setenv("LANGSMITH_LANGGRAPH_API_VARIANT", variant)
    settings = Settings.from_env()
    assert not settings.embedded_allowed
    with pytest.raises(DatabaseError, match="DATABASE_URL"):
        database_url(settings)
    monkeypatch.setenv("DATABASE_URI", "postgresql://u@db/x")
    assert database_url(Settings.from_env()) == "postgresql://u@db/x"


@pytest.mark.parametrize("variant", [None, "local_dev"])
def test_locally_the_embedded_database_is_allowed(
    monkeypatch: pytest.MonkeyPatch, variant: str | None
) -> None:
    if variant:
        monkeypatch.setenv("LANGSMITH_LANGGRAPH_API_VARIANT", variant)
    assert Settings.from_env().embedded_allowed
