"""Tokens, the authenticate handler's two modes, and how a run's scope is resolved under auth."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import jwt
import pytest
from langgraph_sdk import Auth
from starlette.requests import Request

from agent.auth import OPEN_IDENTITY, authenticate
from agent.auth_tokens import LEEWAY_S, TokenError, mint_token, verify_token
from agent.context import Context
from agent.identity import resolve_scope
from memory.types import Scope, ScopeError

SECRET = "unit-test-secret-0123456789"
ALICE = Scope("acme", "alice")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def test_round_trip_and_expiry() -> None:
    token = mint_token(ALICE, SECRET, ttl_s=60, permissions=["memory:metrics"])
    claims = verify_token(token, SECRET)
    assert claims.scope == ALICE and claims.permissions == ("memory:metrics",)
    assert claims.expires_at is not None and claims.expires_at - time.time() <= 60
    # Standard claims, so any JWT library with the secret reads the same token.
    raw = jwt.decode(token, SECRET, algorithms=["HS256"])
    assert (raw["sub"], raw["tenant"], raw["roles"]) == ("alice", "acme", ["memory:metrics"])
    # Expired beyond the small clock leeway.
    old = mint_token(ALICE, SECRET, ttl_s=60, now=time.time() - 60 - LEEWAY_S - 1)
    with pytest.raises(TokenError, match="expired"):
        verify_token(old, SECRET)


def _alg_none(t: str) -> str:
    head = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return f"{head}.{t.split('.')[1]}."


def _alg_hs512(t: str) -> str:
    payload = jwt.decode(t, SECRET, algorithms=["HS256"])
    return jwt.encode(payload, SECRET, algorithm="HS512")


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t.split(".", 1)[1],  # header cut off
        lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),
        lambda t: t.split(".")[0]
        + "."
        + mint_token(Scope("acme", "bob"), SECRET).split(".")[1]
        + "."
        + t.split(".")[2],
        lambda t: t + ".extra",
        lambda t: "",
        _alg_none,  # unsigned
        _alg_hs512,  # right key, another algorithm than the pinned HS256
        lambda t: jwt.encode({"sub": "alice", "iat": 1}, SECRET, algorithm="HS256"),  # no tenant
        lambda t: jwt.encode({"tenant": "acme", "sub": "al ice", "iat": 1}, SECRET),  # bad scope
        lambda t: jwt.encode({"tenant": "acme", "sub": "alice", "iat": 1, "roles": 3}, SECRET),
    ],
)
def test_forged_or_broken_tokens_are_refused(mangle: object) -> None:
    token = mint_token(ALICE, SECRET)
    with pytest.raises(TokenError):
        verify_token(mangle(token), SECRET)  # type: ignore[operator]


def test_another_secret_and_a_short_secret_are_refused() -> None:
    with pytest.raises(TokenError, match="signature"):
        verify_token(mint_token(ALICE, SECRET), SECRET + "x")
    with pytest.raises(TokenError, match="at least"):
        mint_token(ALICE, "short")


async def test_token_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_AUTH_SECRET", SECRET)
    user = await authenticate(f"Bearer {mint_token(ALICE, SECRET)}")
    assert (user["identity"], user["tenant_id"]) == ("alice", "acme")
    for bad in (None, "", mint_token(ALICE, SECRET), "Bearer nope", "Basic abc"):
        with pytest.raises(Auth.exceptions.HTTPException) as info:
            await authenticate(bad)
        assert info.value.status_code == 401


def _request(client: str, host: str) -> Request:
    headers = [(b"host", host.encode())]
    return Request({"type": "http", "client": (client, 50000), "headers": headers})


async def test_open_mode_only_under_langgraph_dev(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    monkeypatch.delenv("MEMORY_AUTH_OPEN", raising=False)
    monkeypatch.setenv("LANGSMITH_LANGGRAPH_API_VARIANT", "local_dev")
    assert (await authenticate(None, _request("127.0.0.1", "localhost:2025")))[
        "identity"
    ] == OPEN_IDENTITY
    # Only this machine, by a loopback name; with no request to judge, nobody (deny by default).
    for request in (
        _request("10.1.2.3", "10.1.2.3:2025"),
        _request("127.0.0.1", "evil.test"),
        None,
    ):
        with pytest.raises(Auth.exceptions.HTTPException) as info:
            await authenticate(None, request)
        assert info.value.status_code == 401
    monkeypatch.setenv("LANGSMITH_LANGGRAPH_API_VARIANT", "licensed")  # a deployment
    with pytest.raises(Auth.exceptions.HTTPException) as info:
        await authenticate("Bearer anything")
    assert info.value.status_code == 401  # fails closed without a secret


@pytest.mark.parametrize("user", ["agents:shared", "AGENTS:Shared", "Agents:x"])
def test_no_token_or_run_acts_as_the_tenants_shared_agent_memory(user: str) -> None:
    # Its memories are recalled into every user's prompt: a token (however an identity
    # provider spelled the id) or a run context naming it would write into everyone's context.
    forged = jwt.encode(
        {"sub": user, "tenant": "acme", "iat": int(time.time())}, SECRET, algorithm="HS256"
    )
    with pytest.raises(TokenError, match="reserved"):
        verify_token(forged, SECRET)
    with pytest.raises(TokenError, match="reserved"):
        mint_token(Scope("acme", user), SECRET)
    with pytest.raises(ScopeError, match="reserved"):
        resolve_scope(Context(tenant_id="acme", user_id=user), None)
    verified = {"configurable": {"langgraph_auth_user": {"identity": user, "tenant_id": "acme"}}}
    with pytest.raises(ScopeError, match="reserved"):
        resolve_scope(Context(), verified)  # type: ignore[arg-type]
    # A person's id that merely contains the word is theirs.
    assert verify_token(mint_token(Scope("acme", "agents-fan"), SECRET), SECRET).scope.user_id


@pytest.mark.parametrize("user", ["system", "System", "SYSTEM"])
async def test_no_token_is_the_servers_own_assistant_marker(
    user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runtime marks the assistants it makes `created_by: system`; every tenant reads and
    # runs those. A token naming that user (an operator's service account, say) is refused.
    forged = jwt.encode(
        {"sub": user, "tenant": "acme", "iat": int(time.time()), "roles": ["memory:admin"]},
        SECRET,
        algorithm="HS256",
    )
    with pytest.raises(TokenError, match="deployment's own assistants"):
        verify_token(forged, SECRET)
    with pytest.raises(TokenError, match="deployment's own assistants"):
        mint_token(Scope("acme", user), SECRET)
    monkeypatch.setenv("MEMORY_AUTH_SECRET", SECRET)
    with pytest.raises(Auth.exceptions.HTTPException) as info:
        await authenticate(f"Bearer {forged}")
    assert info.value.status_code == 401 and "reserved" in str(info.value.detail)
    assert verify_token(mint_token(Scope("acme", "systems"), SECRET), SECRET).scope.user_id


def test_the_authenticated_identity_beats_the_context() -> None:
    ctx = Context(tenant_id="globex", user_id="mallory")
    authed = {"identity": "alice", "tenant_id": "acme"}
    config = {"configurable": {"langgraph_auth_user": authed, "langgraph_auth_user_id": "alice"}}
    assert resolve_scope(ctx, config) == ALICE  # type: ignore[arg-type]
    # An identity without a tenant gets the default tenant, never the client's choice.
    config = {"configurable": {"langgraph_auth_user": {"identity": "alice"}}}
    assert resolve_scope(ctx, config) == Scope("default", "alice")  # type: ignore[arg-type]
    open_user = {"identity": OPEN_IDENTITY, "memory_auth": "open"}
    config = {"configurable": {"langgraph_auth_user": open_user}}
    assert resolve_scope(ctx, config) == Scope("globex", "mallory")  # type: ignore[arg-type]


def test_minting_reads_the_dotenv_the_server_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.auth_tokens import main

    folder = tmp_path
    monkeypatch.delenv("MEMORY_AUTH_SECRET", raising=False)
    monkeypatch.chdir(folder)
    assert main(["--user", "alice"]) == 2
    assert "MEMORY_AUTH_SECRET" in capsys.readouterr().err
    (folder / ".env").write_text(f"MEMORY_AUTH_SECRET={SECRET}\n", encoding="utf-8")
    assert main(["--user", "alice", "--tenant", "acme"]) == 0
    token = capsys.readouterr().out.strip()
    assert verify_token(token, SECRET).scope == ALICE
