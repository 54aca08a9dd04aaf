"""Open local mode's boundary: a loopback client that names the server by a loopback host."""

from __future__ import annotations

import pytest

from agent.local_mode import is_local_request, local_secret


@pytest.mark.parametrize(
    ("client", "host"),
    [
        ("127.0.0.1", "127.0.0.1:2025"),
        ("127.0.0.1", "localhost:2025"),
        ("::1", "[::1]:2025"),
        ("127.0.0.5", "localhost"),
        ("::1", "app.localhost:8000"),
    ],  # fmt: skip
)
def test_this_machine_by_a_loopback_name_is_local(client: str, host: str) -> None:
    assert is_local_request(client, host)


@pytest.mark.parametrize(
    ("client", "host"),
    [
        ("10.0.0.7", "127.0.0.1:2025"),  # another machine, whatever host it names
        ("127.0.0.1", "evil.example:2025"),  # DNS rebinding: a page of another site
        ("127.0.0.1", "localhost.evil.example"),
        ("127.0.0.1", ""),
        ("127.0.0.1", None),
        (None, "localhost:2025"),
        ("192.168.1.2", "192.168.1.2:2025"),
        ("127.0.0.1", "[::1"),
    ],  # fmt: skip
)
def test_anything_else_is_not(client: str | None, host: str | None) -> None:
    assert not is_local_request(client, host)


def test_the_local_secret_only_in_open_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_AUTH_OPEN", raising=False)
    monkeypatch.delenv("LANGSMITH_LANGGRAPH_API_VARIANT", raising=False)
    assert local_secret("127.0.0.1", "localhost") is None  # not under langgraph dev: closed
    monkeypatch.setenv("LANGSMITH_LANGGRAPH_API_VARIANT", "local_dev")
    assert local_secret("127.0.0.1", "localhost")
    assert local_secret("10.0.0.7", "localhost") is None


@pytest.mark.parametrize(
    "origin",
    [None, "http://localhost:3000", "http://127.0.0.1:2024", "http://[::1]:8080",
     "https://smith.langchain.com", "https://smith.langchain.com/"],
)  # fmt: skip
def test_pages_of_this_machine_and_studio_may_use_open_mode(origin: str | None) -> None:
    assert is_local_request("127.0.0.1", "127.0.0.1:2024", origin)


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "null", "http://localhost.evil.example", "file://", "",
     "https://smith.langchain.com.evil.example", "chrome-extension://abc", "http://[::1"],
)  # fmt: skip
def test_a_page_of_another_site_may_not(origin: str) -> None:
    """A browser on this machine is a loopback client, whatever page sent the request."""
    assert not is_local_request("127.0.0.1", "127.0.0.1:2024", origin)


def test_the_allowed_origins_are_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_OPEN_ORIGINS", "https://studio.example.com")
    assert is_local_request("127.0.0.1", "localhost", "https://studio.example.com")
    assert not is_local_request("127.0.0.1", "localhost", "https://smith.langchain.com")
