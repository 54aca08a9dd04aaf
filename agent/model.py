"""The chat model, from a "provider:model" string, with a clear error when none is configured."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel


class ModelConfigError(RuntimeError):
    """No usable chat model is configured."""


_HELP = (
    "No chat model is configured. Set MEMORY_AGENT_MODEL to a 'provider:model' string "
    "(e.g. 'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5') and the provider's key "
    "(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). Any OpenAI-compatible server works with "
    "MEMORY_AGENT_MODEL=openai:<model> and OPENAI_BASE_URL=http://host:port/v1."
)


def default_model_name() -> str:
    """The model named by MEMORY_AGENT_MODEL, or empty."""
    return os.environ.get("MEMORY_AGENT_MODEL", "").strip()


@lru_cache(maxsize=16)
def load_chat_model(spec: str) -> BaseChatModel:
    """Build the chat model for `spec` ("provider:model"; "provider/model" also accepted)."""
    spec = spec.strip()
    if not spec:
        raise ModelConfigError(_HELP)
    if ":" not in spec and "/" in spec:
        spec = spec.replace("/", ":", 1)
    provider = spec.split(":", 1)[0]
    if provider == "openai" and not (
        os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")
    ):
        raise ModelConfigError(f"Model {spec!r} needs OPENAI_API_KEY (or OPENAI_BASE_URL). {_HELP}")
    kwargs: dict[str, Any] = {"temperature": 0}
    if provider == "openai" and not os.environ.get("OPENAI_API_KEY"):
        # Local OpenAI-compatible servers (vLLM, llama.cpp, Ollama) ignore the key but the
        # client insists on one.
        kwargs["api_key"] = "not-needed"
    try:
        model: BaseChatModel = init_chat_model(spec, **kwargs)
    except (ImportError, ValueError) as exc:
        raise ModelConfigError(f"Cannot load chat model {spec!r}: {exc}. {_HELP}") from exc
    return model
