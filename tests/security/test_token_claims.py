"""Validly signed tokens with hostile claim types or headers: refused, each for its reason.

The signature proves who minted a token, not that its minter wrote sane JSON: a second service
with the secret, or a minting script with a bug, can sign `"exp": "9999999999"`. RFC 7519 says
the times are numbers; a verifier that coerces them gives a token a meaning nobody signed.
Every token here is signed with the right secret, from raw JSON text (so NaN, 1e400 and
integers of 400 digits reach the verifier as such), and must be refused; the controls must not.
"""

from __future__ import annotations

import functools

import pytest
from langgraph_sdk import Auth

from agent.auth_tokens import TokenError, verify_token
from tests.support.raw_tokens import NOW, Missing, Raw, claims
from tests.support.raw_tokens import signed as signed_with

SECRET = "claims-test-secret-0123456789abcdef"
signed = functools.partial(signed_with, secret=SECRET)


HOSTILE_CLAIMS = {
    "exp string": claims(exp=str(NOW + 3600)),
    "exp numeric string far ahead": claims(exp="99999999999"),
    "exp true": claims(exp=True),
    "exp false": claims(exp=False),
    "exp NaN": claims(exp=Raw("NaN")),
    "exp Infinity": claims(exp=Raw("Infinity")),
    "exp -Infinity": claims(exp=Raw("-Infinity")),
    "exp 1e400": claims(exp=Raw("1e400")),
    "exp 400 digits": claims(exp=Raw("9" * 400)),
    "exp year 10000": claims(exp=253_402_300_800),
    "exp negative": claims(exp=-1),
    "exp null": claims(exp=None),
    "exp list": claims(exp=[NOW + 3600]),
    "exp object": claims(exp={"at": NOW + 3600}),
    "iat string": claims(iat=str(NOW)),
    "iat true": claims(iat=True),
    "iat NaN": claims(iat=Raw("NaN")),
    "iat huge": claims(iat=Raw("1" + "0" * 30)),
    "iat in the future": claims(iat=NOW + 86_400),
    "iat null": claims(iat=None),
    "nbf string": claims(nbf=str(NOW)),
    "nbf NaN": claims(nbf=Raw("NaN")),
    "nbf in the future": claims(nbf=NOW + 3600),
    "sub number": claims(sub=12345),
    "sub list": claims(sub=["mallory"]),
    "sub object": claims(sub={"id": "mallory"}),
    "sub true": claims(sub=True),
    "sub null": claims(sub=None),
    "tenant number": claims(tenant=7),
    "tenant list": claims(tenant=["acme"]),
    "tenant null": claims(tenant=None),
    "roles string": claims(roles="memory:admin"),
    "roles with a number": claims(roles=[1]),
    "roles nested list": claims(roles=[["memory:admin"]]),
    "roles object": claims(roles={"memory:admin": True}),
    "no iat": claims(iat=Missing()),
}

HOSTILE_HEADERS = {
    "alg lower case": '{"alg":"hs256","typ":"JWT"}',
    "alg with a space": '{"alg":"HS256 ","typ":"JWT"}',
    "typ other": '{"alg":"HS256","typ":"JOSE+JSON"}',
    "typ number": '{"alg":"HS256","typ":1}',
    "crit": '{"alg":"HS256","typ":"JWT","crit":["exp"]}',
    "jku": '{"alg":"HS256","jku":"http://127.0.0.1:9/keys"}',
    "jwk": '{"alg":"HS256","jwk":{"kty":"oct","k":"AAAA"}}',
    "x5u": '{"alg":"HS256","x5u":"http://127.0.0.1:9/cert"}',
    "b64 false": '{"alg":"HS256","b64":false,"crit":["b64"]}',
    "no alg": '{"typ":"JWT"}',
    "header list": '["HS256"]',
}


@pytest.mark.parametrize("payload", HOSTILE_CLAIMS.values(), ids=HOSTILE_CLAIMS.keys())
def test_hostile_claim_types_are_refused(payload: str) -> None:
    with pytest.raises(TokenError):
        verify_token(signed(payload), SECRET)


@pytest.mark.parametrize("header", HOSTILE_HEADERS.values(), ids=HOSTILE_HEADERS.keys())
def test_hostile_headers_are_refused(header: str) -> None:
    with pytest.raises(TokenError):
        verify_token(signed(claims(exp=NOW + 3600), header=header), SECRET)


def test_the_controls_are_accepted() -> None:
    # Same signing helper, sane claims: numbers (a fractional NumericDate is allowed), strings.
    for payload, header in [
        (claims(exp=NOW + 3600), '{"alg":"HS256","typ":"JWT"}'),
        (claims(exp=NOW + 3600.5, nbf=NOW - 10), '{"alg":"HS256"}'),
        (claims(roles=["memory:metrics"]), '{"alg":"HS256","typ":"JWT","kid":"k1"}'),
    ]:
        got = verify_token(signed(payload, header=header), SECRET)
        assert (got.scope.tenant_id, got.scope.user_id) == ("acme", "mallory")


async def test_the_authenticate_handler_answers_401(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.auth import authenticate

    monkeypatch.setenv("MEMORY_AUTH_SECRET", SECRET)
    for payload in (HOSTILE_CLAIMS["exp string"], HOSTILE_CLAIMS["exp NaN"]):
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            await authenticate(f"Bearer {signed(payload)}")
        assert refused.value.status_code == 401
