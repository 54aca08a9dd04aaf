"""Round-two probes: hostile variants the first fixes of issue 42 did not cover.

- A secret pasted as JSON/JS unicode escapes (`\\u0073\\u006b…`) or HTML numeric character
  references (`&#115;&#107;…`, `&#x73;…`) is redacted like the other encodings.
"""

from __future__ import annotations

import uuid

import pytest

from agent.auth_tokens import mint_token
from memory.gating.privacy import PrivacyFilter
from memory.types import Scope

SECRET = "probe2-secret-" + uuid.uuid4().hex
TAG = uuid.uuid4().hex[:8]
QUOTA_THREADS = 2


def _user(name: str) -> Scope:
    return Scope("acme", f"{name}{TAG}")


def _auth(scope: Scope) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(scope, SECRET)}"}


KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
AWS = "AKIAIOSFODNN7EXAMPLE"


def _json_u(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize(
    "pasted",
    [
        "my api key is " + _json_u(KEY),
        'config: {"openai": "' + _json_u(KEY).upper().replace("\\U", "\\u") + '"}',
        "key " + "".join(f"&#{ord(c)};" for c in KEY),
        "key " + "".join(f"&#x{ord(c):X};" for c in KEY),
        "aws id " + _json_u(AWS),
        # Mixed: only some characters escaped, as a JSON encoder of a hostile writer might.
        "my api key is sk-live-" + _json_u(KEY[8:20]) + KEY[20:],
        "my key is \\u{73}\\u{6b}\\u{2d}\\u{6c}" + _json_u(KEY[4:]).replace("\\u00", "\\x"),
    ],
)
def test_secrets_in_character_escapes_are_redacted(pasted: str) -> None:
    out = PrivacyFilter().redact(pasted).text
    assert "REDACTED" in out, out
    # Nothing of the escaped run survives to be decoded again later.
    assert "\\u00" not in out and "&#" not in out, out


def test_escapes_that_say_no_secret_are_kept() -> None:
    text = "caf\\u00e9 and na&#239;ve r&#233;sum&#xE9; are fine \\u2764\\ufe0f"
    assert PrivacyFilter().redact(text).text == text
