"""Open local mode's boundary: only this machine may use it, and its inspector users.

Open local mode (no `MEMORY_AUTH_SECRET`, under `langgraph dev`) trusts whoever calls, so it is
served only to loopback clients that address the server by a loopback name: a client on the
network, or a page on another site that re-pointed its own host name at 127.0.0.1 (DNS
rebinding), gets nothing. A browser on this machine is a loopback client whatever page it
shows, and the server allows any origin and parses a `text/plain` body as JSON (no preflight),
so a request a browser marks with an `Origin` is served only to pages of this machine and to
LangGraph Studio (`MEMORY_OPEN_ORIGINS`). Within it the inspector signs in as a local user of
the developer's choosing with a token signed by a per-process secret that is never stored or
logged; a restart of the server ends those sessions.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from urllib.parse import urlsplit

LOCAL_SECRET = secrets.token_urlsafe(32)
"""Signs the inspector's local-user tokens in open local mode; lives only in this process."""

LOCAL_USER_LABEL = "local user (open mode, no password)"

_LOOPBACK_NAMES = frozenset({"localhost"})
# The hosted LangGraph Studio, which drives `langgraph dev` from the developer's browser.
DEFAULT_OPEN_ORIGINS = "https://smith.langchain.com,https://eu.smith.langchain.com"


def open_mode_allowed() -> bool:
    """Whether a server without a secret may run open: only under `langgraph dev` or when asked."""
    # `langgraph dev` sets this variable itself; deployments do not.
    dev = os.environ.get("LANGSMITH_LANGGRAPH_API_VARIANT") == "local_dev"
    return dev or os.environ.get("MEMORY_AUTH_OPEN", "").strip() == "1"


def local_secret(client_host: str | None, host_header: str | None) -> str | None:
    """The secret of local-user tokens for this request: only in open mode, only from here."""
    if not open_mode_allowed() or not is_local_request(client_host, host_header):
        return None
    return LOCAL_SECRET


def _is_loopback_host(name: str) -> bool:
    name = name.strip("[]").lower()
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None) -> bool:
    """Whether a browser page of `origin` may use open local mode (no `Origin`: not a page's).

    A page of this machine (a loopback host) or one of `MEMORY_OPEN_ORIGINS` (comma-separated,
    default the hosted LangGraph Studio); "null" (a sandboxed frame, a file) and every other
    site are refused.
    """
    if origin is None:
        return True
    try:
        parts = urlsplit(origin.strip())
        hostname = parts.hostname
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not hostname:
        return False
    if _is_loopback_host(hostname):
        return True
    allowed = os.environ.get("MEMORY_OPEN_ORIGINS", DEFAULT_OPEN_ORIGINS)
    wanted = {o.strip().rstrip("/").lower() for o in allowed.split(",") if o.strip()}
    return origin.strip().rstrip("/").lower() in wanted


def is_local_request(
    client_host: str | None, host_header: str | None, origin: str | None = None
) -> bool:
    """Whether a request is this machine's, by a loopback name, from an allowed page if any.

    A request a browser page sent carries its `Origin`: `origin_allowed` decides.
    """
    if not client_host or not _is_loopback_host(client_host):
        return False
    if not origin_allowed(origin):
        return False
    if not host_header:
        return False
    try:
        host = urlsplit(f"//{host_header}").hostname
    except ValueError:  # a malformed Host (an unclosed "[") names nothing local
        return False
    return host is not None and _is_loopback_host(host)


__all__ = [
    "LOCAL_SECRET",
    "LOCAL_USER_LABEL",
    "is_local_request",
    "local_secret",
    "open_mode_allowed",
    "origin_allowed",
]
