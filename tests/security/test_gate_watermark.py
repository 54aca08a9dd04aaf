"""The gate's watermark: every human message not yet gated, whatever happened in between."""

from __future__ import annotations

import asyncpg
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from agent.nodes.gate_and_store import MAX_CATCH_UP, ungated_humans
from agent.state import State
from memory.storage.availability import MemoryStoreUnavailable, is_unavailable


def _thread(kinds: list[bool]) -> list[AnyMessage]:
    return [
        HumanMessage(f"h{i}", id=f"h{i}") if human else AIMessage(f"a{i}", id=f"a{i}")
        for i, human in enumerate(kinds)
    ]


@given(kinds=st.lists(st.booleans(), min_size=1, max_size=30), data=st.data())
def test_the_gate_catches_up_on_every_message_after_its_watermark(
    kinds: list[bool], data: st.DataObject
) -> None:
    messages = _thread(kinds)
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    if not humans:
        assert ungated_humans({"messages": messages}) == []
        return
    mark = data.draw(st.integers(0, len(humans) - 1))
    state: State = {"messages": messages, "gate": [], "gated_upto": str(humans[mark].id)}
    assert ungated_humans(state) == humans[mark + 1 :][-MAX_CATCH_UP:]
    # Never gated at all (a first turn that failed): everything, newest MAX_CATCH_UP.
    assert ungated_humans({"messages": messages}) == humans[-MAX_CATCH_UP:]
    # A thread from before the watermark existed: only its newest message is new.
    assert ungated_humans({"messages": messages, "gate": []}) == humans[-1:]


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(111, "Connect call failed"),
        OSError("Multiple exceptions: [Errno 111] Connect call failed, [Errno 99] ..."),
        asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.CannotConnectNowError("the database system is shutting down"),
        asyncpg.InterfaceError("connection is closed"),
        psycopg.OperationalError("connection failed"),
        RuntimeError("wrapped"),
    ],
)
def test_an_outage_is_recognised_whatever_the_driver_raises(exc: BaseException) -> None:
    if isinstance(exc, RuntimeError):
        exc.__cause__ = ConnectionResetError(104, "reset by peer")
    assert is_unavailable(exc)
    assert "memory store unavailable" in str(MemoryStoreUnavailable(type(exc).__name__))


@pytest.mark.parametrize(
    "exc", [ValueError("bad"), KeyError("x"), FileNotFoundError(2, "no such file")]
)
def test_a_bug_is_not_mistaken_for_an_outage(exc: BaseException) -> None:
    assert not is_unavailable(exc)
