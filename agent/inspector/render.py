"""HTML for the memory inspector: escaping, the page frame, and small shared pieces.

Memories are attacker-controlled text (anyone who talks to the agent writes them), so every
value goes through `e()` (HTML-escaped, quotes included) before it reaches a page; markup is
built only from this module's literals. The pages carry no inline script or style, so the
Content-Security-Policy can forbid both.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

UI = "/memory/ui"


def e(value: Any) -> str:
    """`value` as text safe inside HTML content and quoted attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def url(path: str, **query: Any) -> str:
    """An escaped inspector URL; path segments and query values are percent-encoded."""
    params = {k: v for k, v in query.items() if v not in (None, "")}
    return e(path + (f"?{urlencode(params)}" if params else ""))


def seg(value: str) -> str:
    """One path segment, percent-encoded (ids are checked, but a page never trusts that)."""
    return quote(value, safe="")


def when(value: Any) -> str:
    """A timestamp as `YYYY-MM-DD HH:MM` UTC, or an empty string."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M")
        except ValueError:
            return value
    return ""


def short(text: str, limit: int = 160) -> str:
    """The first `limit` characters of `text`, with an ellipsis when cut (not yet escaped)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(headers: Iterable[str], rows: Iterable[Iterable[str]], caption: str = "") -> str:
    """A table of already-escaped cells."""
    head = "".join(f'<th scope="col">{e(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption>{e(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def dl(items: Mapping[str, str]) -> str:
    """A definition list of already-escaped values."""
    return "<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in items.items()) + "</dl>"


def pre_json(data: Any) -> str:
    """Data as indented, escaped JSON in a <pre>."""
    return f"<pre>{e(json.dumps(data, indent=2, ensure_ascii=False, default=str))}</pre>"


def action_form(
    api: str,
    label: str,
    *,
    method: str = "POST",
    fields: str = "",
    next_url: str = "",
    receipt: bool = False,
    css: str = "",
) -> str:
    """A form the page script sends to `api` as JSON with the session's CSRF header."""
    attrs = f' data-api="{e(api)}" data-method="{e(method)}"'
    if next_url:
        attrs += f' data-next="{e(next_url)}"'
    if receipt:
        attrs += ' data-receipt="1"'
    cls = f' class="{e(css)}"' if css else ""
    return f'<form{attrs}{cls}>{fields}<button type="submit">{e(label)}</button></form>'


def page(
    title: str,
    body: str,
    *,
    csrf: str = "",
    user: str = "",
    admin: bool = False,
    current: str = "",
) -> str:
    """A complete inspector page around `body` (already escaped)."""
    links = [("Memories", UI), ("Search", f"{UI}/search"), ("Profile", f"{UI}/profile"),
             ("My data", f"{UI}/account")]  # fmt: skip
    if admin:
        links.append(("Admin", f"{UI}/admin"))
    nav = "".join(
        f'<li><a href="{e(href)}"'
        + (' aria-current="page"' if href == current else "")
        + f">{e(name)}</a></li>"
        for name, href in links
    )
    logout = (
        f'<form method="post" action="{UI}/logout" class="logout">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        f'<span class="who">{e(user)}</span> <button type="submit">Sign out</button> '
        '<button type="submit" name="everywhere" value="1">Sign out everywhere</button></form>'
        if user
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="{e(csrf)}">
<title>{e(title)} · memory inspector</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{UI}/static/inspector.css">
<script src="{UI}/static/inspector.js" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header><nav aria-label="Inspector"><ul>{nav}</ul></nav>{logout}</header>
<main id="main" tabindex="-1"><h1>{e(title)}</h1>
<p id="status" role="status" aria-live="polite"></p>
{body}
<pre id="receipt" hidden></pre>
</main></body></html>"""


def login_page(next_url: str, error: str = "", *, local: bool = False) -> str:
    """The sign-in form: paste a token (HttpOnly cookie only); open local mode: choose a user."""
    err = f'<p class="error" role="alert">{e(error)}</p>' if error else ""
    if local:
        return page(
            "Sign in as a local user",
            f"""{err}
<form method="post" action="{UI}/login" class="login">
<p class="hint"><strong>Open local mode</strong>: this server has no MEMORY_AUTH_SECRET, so
anyone on this machine may look at any user's memories. Choose whose: the user id you chat as
(<code>memory-agent chat --user NAME</code>, or <code>user_id</code> in Studio's context;
Studio's default is <code>local-dev</code>).</p>
<label for="user">User id</label>
<input id="user" name="user" required autocomplete="off" spellcheck="false" value="local-dev">
<label for="tenant">Tenant id</label>
<input id="tenant" name="tenant" autocomplete="off" spellcheck="false" value="default">
<input type="hidden" name="next" value="{e(next_url)}">
<button type="submit">Sign in as this local user</button>
</form>""",
        )
    body = f"""{err}
<form method="post" action="{UI}/login" class="login">
<label for="token">Access token</label>
<textarea id="token" name="token" rows="4" required autocomplete="off"
 spellcheck="false"></textarea>
<input type="hidden" name="next" value="{e(next_url)}">
<p class="hint">Paste a token minted with <code>python -m agent.auth_tokens --user YOU</code>.
It is kept in an HttpOnly cookie of this site only, never in page storage.</p>
<button type="submit">Sign in</button>
</form>"""
    return page("Sign in", body)


__all__ = ["action_form", "dl", "e", "login_page", "page", "pre_json", "seg", "short", "table",
           "url", "when"]  # fmt: skip
