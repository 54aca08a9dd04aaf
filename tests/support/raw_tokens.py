"""Tokens signed from raw JSON text: hostile claim types a JWT library would never write.

Signed with the right secret, so only the verifier's own checks stand between them and a user.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

NOW = int(time.time())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def signed(payload: str, *, secret: str, header: str = '{"alg":"HS256","typ":"JWT"}') -> str:
    """A token of exactly these JSON texts, signed with HMAC-SHA256 and `secret`."""
    head = _b64(header.encode()) + "." + _b64(payload.encode())
    mac = hmac.new(secret.encode(), head.encode("ascii"), hashlib.sha256).digest()
    return f"{head}.{_b64(mac)}"


def claims(**fields: Any) -> str:
    """A valid payload's JSON with `fields` replaced; a value of `Raw` is written verbatim."""
    base: dict[str, Any] = {"sub": "mallory", "tenant": "acme", "roles": [], "iat": NOW}
    base.update(fields)
    parts = [f"{json.dumps(k)}:{v.text if isinstance(v, Raw) else json.dumps(v)}"
             for k, v in base.items() if not isinstance(v, Missing)]  # fmt: skip
    return "{" + ",".join(parts) + "}"


class Raw:
    """JSON text written as it is (NaN, Infinity, 1e400, 400-digit integers)."""

    def __init__(self, text: str) -> None:
        self.text = text


class Missing:
    """Leave the claim out."""


__all__ = ["NOW", "Missing", "Raw", "claims", "signed"]
