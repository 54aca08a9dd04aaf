"""The template's bearer tokens: JSON Web Tokens (HS256) naming a tenant, a user and roles.

A token is a standard JWT signed with HMAC-SHA256 and `MEMORY_AUTH_SECRET`, with the claims
`sub` (the user), `iat` (issued at), `exp` (expiry; absent for a token valid until the secret
changes), `tenant` and `roles` (permissions such as `memory:metrics`). Any JWT library that holds
the secret can verify one, so another service can check the same tokens; a template user gets
real authentication with no identity provider. Verification pins the algorithm to HS256 (a token
signed with `none` or any other algorithm is refused), requires `sub`, `iat` and `tenant`, and
allows a few seconds of clock skew.

Tokens of the earlier `lma1.` format are no longer accepted: mint new ones.

Mint a token: `python -m agent.auth_tokens --tenant acme --user alice [--ttl 3600]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jwt

from memory.types import Scope, ScopeError

ALGORITHM = "HS256"
SECRET_ENV = "MEMORY_AUTH_SECRET"
MIN_SECRET_CHARS = 16
LEEWAY_S = 5
"""Seconds of clock skew allowed between the minting and the verifying machine."""
REQUIRED_CLAIMS = ("sub", "iat", "tenant")
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
    claims: dict[str, Any] = {
        "sub": scope.user_id,
        "tenant": scope.tenant_id,
        "roles": list(permissions),
        "iat": issued,
    }
    if ttl_s is not None:
        claims["exp"] = issued + ttl_s
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def verify_token(token: str, secret: str) -> TokenClaims:
    """The claims of a token signed with `secret`; raises TokenError otherwise."""
    _check_secret(secret)
    try:
        claims = jwt.decode(
            token.strip(),
            secret,
            algorithms=[ALGORITHM],
            options={"require": list(REQUIRED_CLAIMS)},
            leeway=LEEWAY_S,
        )
    except jwt.ExpiredSignatureError as exc:
        raise TokenError("token expired") from exc
    except jwt.InvalidSignatureError as exc:
        raise TokenError("bad token signature") from exc
    except jwt.PyJWTError as exc:
        raise TokenError(f"bad token: {exc}") from exc
    try:
        scope = Scope(claims["tenant"], claims["sub"])
        roles = claims.get("roles") or ()
        if isinstance(roles, str) or not isinstance(roles, Sequence):
            raise TypeError("roles must be a list")
        expires = claims.get("exp")
        return TokenClaims(
            scope, int(expires) if expires is not None else None, tuple(str(r) for r in roles)
        )
    except (ValueError, TypeError, ScopeError) as exc:
        raise TokenError(f"bad token payload: {exc}") from exc


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
