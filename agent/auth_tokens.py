"""The template's bearer tokens: HMAC-signed (tenant, user) claims, minted and checked locally.

Format: `lma1.<payload>.<signature>`, both parts base64url without padding. The payload is JSON
`{"t": tenant, "u": user, "exp": unix-seconds | null, "p": [permissions]}`; the signature is
HMAC-SHA256 over `lma1.<payload>` with `MEMORY_AUTH_SECRET`. Nothing leaves the process, so a
template user gets real authentication with no identity provider; swap `verify_token` for a JWT
or OAuth check in `agent/auth.py` to use one.

Mint a token: `python -m agent.auth_tokens --tenant acme --user alice [--ttl 3600]`.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import hmac
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.types import Scope, ScopeError

PREFIX = "lma1"
SECRET_ENV = "MEMORY_AUTH_SECRET"
MIN_SECRET_CHARS = 16
PERMISSION_METRICS = "memory:metrics"
"""Lets a token read `GET /memory/metrics` (aggregates over every tenant)."""
PERMISSION_ADMIN = "memory:admin"
"""Lets a token create or change assistants and crons, and run admin graphs in its tenant."""
PERMISSION_PLATFORM = "memory:platform"
"""With `memory:admin`, lets admin graphs (consolidation) cover every tenant, not only the
token's own: the operator of the whole deployment, not a tenant's administrator."""


class TokenError(ValueError):
    """A token that is malformed, forged, expired, or names an invalid scope."""


@dataclass(frozen=True, slots=True)
class TokenClaims:
    """Who a verified token speaks for."""

    scope: Scope
    expires_at: int | None = None
    permissions: tuple[str, ...] = field(default_factory=tuple)


def auth_secret() -> str | None:
    """`MEMORY_AUTH_SECRET`, or None when authentication is off (open local mode)."""
    value = os.environ.get(SECRET_ENV, "").strip()
    return value or None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TokenError("token is not base64url") from exc


def _sign(secret: str, message: str) -> str:
    return _b64(hmac.new(secret.encode(), message.encode(), hashlib.sha256).digest())


def _check_secret(secret: str) -> None:
    if len(secret) < MIN_SECRET_CHARS:
        raise TokenError(f"{SECRET_ENV} must be at least {MIN_SECRET_CHARS} characters")


def mint_token(
    scope: Scope,
    secret: str,
    *,
    ttl_s: int | None = None,
    permissions: Sequence[str] = (),
    now: float | None = None,
) -> str:
    """A signed token for `scope`, valid for `ttl_s` seconds (None: until the secret changes)."""
    _check_secret(secret)
    issued = int(now if now is not None else time.time())
    claims = {
        "t": scope.tenant_id,
        "u": scope.user_id,
        "exp": issued + ttl_s if ttl_s is not None else None,
        "p": list(permissions),
    }
    payload = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    head = f"{PREFIX}.{payload}"
    return f"{head}.{_sign(secret, head)}"


def verify_token(token: str, secret: str, *, now: float | None = None) -> TokenClaims:
    """The claims of a token signed with `secret`; raises TokenError otherwise."""
    _check_secret(secret)
    parts = token.strip().split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise TokenError(f"not a {PREFIX} token")
    head = f"{parts[0]}.{parts[1]}"
    # compare_digest: a byte-by-byte compare would leak how much of a forged signature matched.
    if not hmac.compare_digest(_sign(secret, head), parts[2]):
        raise TokenError("bad token signature")
    try:
        claims = json.loads(_unb64(parts[1]))
        scope = Scope(claims["t"], claims["u"])
        expires = claims.get("exp")
        perms = tuple(str(p) for p in claims.get("p") or ())
    except (ValueError, KeyError, TypeError, ScopeError) as exc:
        raise TokenError(f"bad token payload: {exc}") from exc
    if expires is not None and int(expires) <= (now if now is not None else time.time()):
        raise TokenError("token expired")
    return TokenClaims(scope, int(expires) if expires is not None else None, perms)


def main(argv: list[str] | None = None) -> int:
    """Print a token for `--tenant`/`--user`, signed with `MEMORY_AUTH_SECRET`."""
    parser = argparse.ArgumentParser(prog="python -m agent.auth_tokens", description=__doc__)
    parser.add_argument("--tenant", default="default")
    parser.add_argument("--user", required=True)
    parser.add_argument("--ttl", type=int, default=None, help="seconds until it expires")
    parser.add_argument("--permission", action="append", default=[], help="e.g. memory:metrics")
    args = parser.parse_args(argv)
    secret = auth_secret()
    if secret is None:
        print(f"error: set {SECRET_ENV} first", file=sys.stderr)
        return 2
    try:
        scope = Scope(args.tenant, args.user)
        print(mint_token(scope, secret, ttl_s=args.ttl, permissions=args.permission))
    except (ScopeError, TokenError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
