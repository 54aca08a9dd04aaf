"""The cron handlers of `agent.auth`: what they store for the server's scheduler to read back.

The scheduler (langgraph_api 0.16) refuses a run with both a `context` and a non-empty
`config.configurable`, and the identity travels in `configurable`: a cron must be stored
without a context (folded into `configurable`). The end-to-end check that such a cron fires is
`tests/e2e/test_consolidate_cron.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langgraph_sdk import Auth

from agent import auth
from agent.auth_tokens import PERMISSION_ADMIN


@dataclass
class _User:
    identity: str = "ops"
    tenant_id: str = "acme"
    display_name: str = "ops"
    is_authenticated: bool = True


def _ctx(action: Any) -> Auth.types.AuthContext:
    user: Any = _User()  # what the handlers read of the server's user: fields by name
    return Auth.types.AuthContext(
        permissions=[PERMISSION_ADMIN], user=user, resource="crons", action=action
    )


# The decorators type the handlers for the server's keyword call; the tests call them plainly.
on_cron_create: Any = auth.on_cron_create
on_crons: Any = auth.on_crons


def _stamped(configurable: dict[str, Any]) -> None:
    assert configurable["langgraph_auth_permissions"] == [PERMISSION_ADMIN]
    assert configurable["langgraph_auth_user"]["identity"] == "ops"
    assert configurable["langgraph_auth_user"]["tenant_id"] == "acme"


async def test_a_created_cron_holds_its_context_in_configurable() -> None:
    payload: dict[str, Any] = {
        "assistant_id": "consolidate",
        "context": {"batch_size": 7, "cron_id": "forged", "langgraph_auth_permissions": ["x"]},
        "config": {"recursion_limit": 99, "configurable": {"cron_id": "c1", "batch_size": 1}},
    }
    value: dict[str, Any] = {"payload": payload, "metadata": {}}
    owner = await on_cron_create(_ctx("create"), value)
    assert owner == {"owner": "ops", "tenant_id": "acme"}
    assert "context" not in payload
    configurable = payload["config"]["configurable"]
    assert payload["config"]["recursion_limit"] == 99
    # The context wins over the legacy spelling; never over the server's keys or the identity.
    assert configurable["batch_size"] == 7 and configurable["cron_id"] == "c1"
    _stamped(configurable)


async def test_a_created_cron_without_context_is_only_stamped() -> None:
    payload: dict[str, Any] = {"assistant_id": "consolidate"}
    await on_cron_create(_ctx("create"), {"payload": payload, "metadata": {}})
    assert "context" not in payload
    _stamped(payload["config"]["configurable"])


async def test_an_update_with_a_context_merges_into_the_stored_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored: dict[str, Any] = {
        "assistant_id": "consolidate",
        "config": {"recursion_limit": 99, "configurable": {"cron_id": "c1", "batch_size": 7}},
    }

    async def lookup(cron_id: Any) -> dict[str, Any]:
        return stored

    monkeypatch.setattr(auth, "_stored_cron_payload", lookup)
    patch: dict[str, Any] = {"context": {"batch_size": 5}}
    await on_crons(_ctx("update"), {"cron_id": "c1", "payload": patch})
    # `context: {}` overrides the stored one in the server's shallow merge; the config replaces
    # the stored config whole, so it keeps what the stored one had.
    assert patch["context"] == {}
    assert patch["config"]["recursion_limit"] == 99
    assert patch["config"]["configurable"]["batch_size"] == 5
    assert patch["config"]["configurable"]["cron_id"] == "c1"
    _stamped(patch["config"]["configurable"])
    # The stored cron is not touched before the server accepts the update.
    assert stored["config"]["configurable"] == {"cron_id": "c1", "batch_size": 7}


async def test_an_update_of_other_fields_leaves_the_stored_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def lookup(cron_id: Any) -> dict[str, Any]:
        return {"assistant_id": "consolidate", "config": {"configurable": {}}}

    monkeypatch.setattr(auth, "_stored_cron_payload", lookup)
    patch: dict[str, Any] = {"schedule": "0 4 * * *"}
    await on_crons(_ctx("update"), {"cron_id": "c1", "payload": patch})
    assert patch == {"schedule": "0 4 * * *"}


async def test_an_update_checks_the_context_for_the_stored_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def lookup(cron_id: Any) -> dict[str, Any]:
        return {"assistant_id": "agent", "config": {"configurable": {}}}

    monkeypatch.setattr(auth, "_stored_cron_payload", lookup)
    # The server keeps the stored assistant: naming an admin graph in the patch exempts nothing.
    patch: dict[str, Any] = {"assistant_id": "consolidate", "context": {"model": "openai:x"}}
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        await on_crons(_ctx("update"), {"cron_id": "c1", "payload": patch})
    assert refused.value.status_code == 403 and "model" in str(refused.value.detail)
