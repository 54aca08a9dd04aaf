"""A prebuilt LangChain agent with LangMem's memory tools, for tests of the governed store.

Compiled without a store: under `langgraph dev` the server supplies its store (the governed
one from `langgraph.json`) as `runtime.store`; tests outside the server pass their own. The
namespace names the tenant and the authenticated user, so the store's caller check and the
auth handler decide whose memory a run reaches, never the model.
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore
from langmem import create_manage_memory_tool, create_search_memory_tool

SERVER_NAMESPACE = ("acme", "{langgraph_auth_user_id}", "memories")


def build(
    model: BaseChatModel,
    namespace: tuple[str, ...] = SERVER_NAMESPACE,
    store: BaseStore | None = None,
) -> Any:
    """A `create_agent` graph whose only tools are LangMem's manage and search tools."""
    tools = [create_manage_memory_tool(namespace), create_search_memory_tool(namespace)]
    return create_agent(model, tools=tools, store=store)


def _server_model() -> BaseChatModel:
    return init_chat_model(os.environ.get("MEMORY_AGENT_MODEL", "openai:stub-model"), temperature=0)


# Built at import only where a model is configured (the server's env); tests call `build`.
graph = build(_server_model()) if os.environ.get("MEMORY_AGENT_MODEL") else None
