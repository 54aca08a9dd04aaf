"""The memory routes' query strings are redacted before anything reads or logs them.

A search typed into the memory API or the inspector (`/memory/memories/search?q=…`,
`/memory/ui/search?q=…`) travels in the URL, and the server's access log writes every request's
query string verbatim: a user looking up "my api key sk-…" would leave the key in the log. The
memory holds only redacted text, so a search for the redacted form finds what the raw one
would; the query string is rewritten in place, in the request scope the access log reads
after the response.
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Receive, Scope, Send

from memory.gating.privacy import PrivacyFilter

# Only the project's own routes: the server's (threads, runs, assistants) take ids and limits.
_PREFIX = "/memory/"
_PRIVACY = PrivacyFilter()


def redact_query(raw: bytes) -> bytes:
    """`raw` (a URL query string) with every value's secrets replaced by placeholders."""
    pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="utf-8")
    cleaned = [(key, _PRIVACY.clean(value)) for key, value in pairs]
    if cleaned == pairs:
        return raw
    return urlencode(cleaned, encoding="utf-8").encode("ascii")


class RedactQueryString:
    """Pure ASGI middleware: redact a `/memory/` request's query string in its scope."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Rewrite the query string (in a worker thread: redaction is CPU work), pass on."""
        raw = scope.get("query_string") or b""
        if scope["type"] == "http" and raw and str(scope.get("path", "")).startswith(_PREFIX):
            scope["query_string"] = await asyncio.to_thread(redact_query, raw)
        await self.app(scope, receive, send)
