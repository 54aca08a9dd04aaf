"""The template's bearer tokens: JSON Web Tokens (HS256) naming a tenant, a user and roles.

A token is a standard JWT signed with HMAC-SHA256 and `MEMORY_AUTH_SECRET`, with the claims
`sub` (the user), `iat` (issued at), `exp` (expiry; absent for a token valid until the secret
changes), `tenant` and `roles` (permissions such as `memory:metrics`). Any JWT library that holds
the secret can verify one, so another service can check the same tokens; a template user gets
real authentication with no identity provider. Verification pins the algorithm to HS256 (a token
signed with `none` or any other algorithm is refused, and so is a header field it does not know),
requires `sub`, `iat` and `tenant`, reads `exp`, `iat` and `nbf` only as numbers (RFC 7519
NumericDate: not strings, booleans, NaN or dates past 9999), and allows a few seconds of clock
skew.

Tokens of the earlier `lma1.` format are no longer accepted: mint new ones.

Mint a token: `python -m agent.auth_tokens --tenant acme --user alice [--ttl 3600]`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jwt
from dotenv import find_dotenv, load_dotenv

from memory.sharing.events import reserved_user
from memory.types import Scope, ScopeError

ALGORITHM = "HS256"
SECRET_ENV = "MEMORY_AUTH_SECRET"
MIN_SECRET_CHARS = 16
LEEWAY_S = 5
"""Seconds of clock skew allowed between the minting and the verifying machine."""
REQUIRED_CLAIMS = ("sub", "iat", "tenant")
ALLOWED_HEADER = frozenset({"alg", "typ", "kid"})
"""Header fields a token may carry; `kid` names a key and is harmless with one secret."""
MAX_NUMERIC_DATE = 253_402_300_799
"""9999-12-31T23:59:59Z: a later time is a mistake or an attack (and overflows datetimes)."""
MAX_TOKEN_CHARS = 8_192
PERMISSION_METRICS = "memory:metrics"
"""Lets a token read `GET /memory/metrics`: its tenant's counts and rates (with
`memory:platform`, every tenant's)."""
PERMISSION_ADMIN = "memory:admin"
"""Lets a token create or change assistants and crons, and run admin graphs in its tenant."""
PERMISSION_PLATFORM = "memory:platform"
"""With `memory:admin`, lets admin graphs (consolidation) cover every tenant, not only the
token's own: the operator of the whole deployment, not a tenant's administrator. It also shows
every tenant's metrics and other users' text in consolidation diffs."""
SYSTEM_CREATOR = "system"
"""The `created_by` the LangGraph runtime stamps on the assistants it makes from `langgraph.json`.

Every tenant reads and runs those (`agent.auth` assistants handler), and the runtime skips its
ownership check for them when a run starts: no user may carry this name, in any case."""


def reserved_subject(user_id: str) -> str | None:
    """Why no token may name `user_id` (None when one may).

    The tenant's shared agent memory (`agents:*`) is recalled into every user's prompt, and the
    deployment's own assistants are marked `created_by: system`: an identity of either name
    would let one person act as the system for everyone.
    """
    if reserved_user(user_id):
        return f"user id {user_id!r} is reserved for the tenant's shared agent memory"
    if user_id.strip().casefold() == SYSTEM_CREATOR:
        return f"user id {user_id!r} is reserved for the deployment's own assistants"
    return None


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
    reserved = reserved_subject(scope.user_id)
    if reserved is not None:
        raise TokenError(f"{reserved}; pick another")
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


def _numeric_date(claims: dict[str, Any], name: str) -> int | float | None:
    """A NumericDate claim (RFC 7519, section 2): a JSON number, finite, between 1970 and 9999.

    PyJWT reads these with `int(...)`, which takes the string "99999999999", True (as 1) and
    refuses NaN only by accident; a validly signed token from a sloppy minter must not get a
    meaning its signer did not write down.
    """
    value = claims.get(name)
    if value is None and name not in claims:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenError(f"bad token payload: {name} must be a number (NumericDate)")
    if isinstance(value, float) and not math.isfinite(value):
        raise TokenError(f"bad token payload: {name} must be a finite number")
    if not 0 <= value <= MAX_NUMERIC_DATE:
        raise TokenError(f"bad token payload: {name} is out of range")
    return value


def _check_header(token: str) -> None:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise TokenError(f"bad token: {exc}") from exc
    unknown = set(header) - ALLOWED_HEADER
    if unknown:
        # `crit`, `jku`, `jwk`, `x5u`, `b64` ...: each changes how a token must be read or
        # where its key comes from; a verifier that does not implement one must refuse.
        raise TokenError(f"bad token header: unsupported {', '.join(sorted(unknown))[:80]}")
    if header.get("alg") != ALGORITHM:
        raise TokenError(f"bad token header: the algorithm must be {ALGORITHM}")
    if "typ" in header and header["typ"] != "JWT":
        raise TokenError("bad token header: typ must be JWT")


def verify_token(token: str, secret: str, *, now: float | None = None) -> TokenClaims:
    """The claims of a token signed with `secret`; raises TokenError otherwise.

    Strict beyond the signature: only the HS256 header fields this module writes, the times
    as numbers (RFC 7519 NumericDate) and checked here, `sub` and `tenant` as strings, `roles`
    as a list of strings.
    """
    _check_secret(secret)
    token = token.strip()
    if not token.isascii() or len(token) > MAX_TOKEN_CHARS:
        raise TokenError("bad token: not a token of this server")
    _check_header(token)
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[ALGORITHM],
            # The times are checked below, strictly; PyJWT checks the signature and presence.
            options={
                "require": list(REQUIRED_CLAIMS),
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
            },
        )
    except jwt.InvalidSignatureError as exc:
        raise TokenError("bad token signature") from exc
    except (jwt.PyJWTError, ValueError, TypeError) as exc:
        raise TokenError(f"bad token: {exc}") from exc
    clock = time.time() if now is None else now
    issued = _numeric_date(claims, "iat")
    expires = _numeric_date(claims, "exp")
    not_before = _numeric_date(claims, "nbf")
    if issued is not None and issued > clock + LEEWAY_S:
        raise TokenError("bad token payload: issued in the future")
    if not_before is not None and not_before > clock + LEEWAY_S:
        raise TokenError("token not valid yet")
    if expires is not None and expires <= clock - LEEWAY_S:
        raise TokenError("token expired")
    user, tenant, roles = claims.get("sub"), claims.get("tenant"), claims.get("roles", [])
    if not isinstance(user, str) or not isinstance(tenant, str):
        raise TokenError("bad token payload: sub and tenant must be strings")
    if roles is None:
        roles = []
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise TokenError("bad token payload: roles must be a list of strings")
    try:
        scope = Scope(tenant, user)
    except ScopeError as exc:
        raise TokenError(f"bad token payload: {exc}") from exc
    reserved = reserved_subject(scope.user_id)
    if reserved is not None:
        # A validly signed token from an identity provider that hands out such a name is still
        # refused: see `reserved_subject` for what each name would let its holder do.
        raise TokenError(f"bad token payload: sub: {reserved}")
    return TokenClaims(scope, None if expires is None else int(expires), tuple(roles))


def main(argv: list[str] | None = None) -> int:
    """Print a token for `--tenant`/`--user`, signed with `MEMORY_AUTH_SECRET`."""
    parser = argparse.ArgumentParser(prog="python -m agent.auth_tokens", description=__doc__)
    parser.add_argument("--tenant", default="default")
    parser.add_argument("--user", required=True)
    parser.add_argument("--ttl", type=int, default=None, help="seconds until it expires")
    parser.add_argument("--permission", action="append", default=[], help="e.g. memory:metrics")
    args = parser.parse_args(argv)
    # The same `.env` the server reads (real environment variables win), so a secret put there
    # for `memory-agent dev` signs tokens that server accepts.
    load_dotenv(find_dotenv(usecwd=True), override=False)
    secret = auth_secret()
    if secret is None:
        print(f"error: set {SECRET_ENV} first (in the environment or .env)", file=sys.stderr)
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
