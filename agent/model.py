"""The chat model, from a "provider:model" string, with a clear error when it cannot be loaded.

An empty model name, or `memory-only`, selects the built-in memory-only responder
(`agent.memory_only`): no key, no download, replies that only report what recall returned.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseChatModel

MEMORY_ONLY = "memory-only"

# Providers whose integration package is an optional extra of this project
# (`uv sync --extra NAME`); the rest install with pip/uv under the printed package name.
_EXTRAS = {"anthropic": "anthropic", "ollama": "ollama"}

_HELP = (
    "Set MEMORY_AGENT_MODEL to a 'provider:model' string (e.g. 'openai:gpt-4o-mini', "
    "'anthropic:claude-sonnet-4-5', 'ollama:llama3.1') and the provider's key (OPENAI_API_KEY, "
    "ANTHROPIC_API_KEY, ...), or to 'memory-only' for the built-in responder that needs no "
    "model. Any OpenAI-compatible server works with MEMORY_AGENT_MODEL=openai:<model> and "
    "OPENAI_BASE_URL=http://host:port/v1."
)

# "langchain_anthropic" in init_chat_model's ImportError; the name is bounded, so linear.
_MODULE = re.compile(r"\b(langchain_[a-z0-9_]{1,40})\b")


class ModelConfigError(RuntimeError):
    """The configured chat model cannot be used."""


def default_model_name() -> str:
    """The model named by MEMORY_AGENT_MODEL, or empty (the memory-only responder)."""
    return os.environ.get("MEMORY_AGENT_MODEL", "").strip()


def is_memory_only(spec: str) -> bool:
    """Whether `spec` selects the built-in memory-only responder (empty or 'memory-only')."""
    return spec.strip().lower() in ("", MEMORY_ONLY)


def _normalise(spec: str) -> str:
    spec = spec.strip()
    if ":" not in spec and "/" in spec:
        spec = spec.replace("/", ":", 1)
    return spec


def _missing_package(spec: str, provider: str, exc: ImportError) -> ModelConfigError:
    found = _MODULE.search(str(exc))
    module = found.group(1) if found else f"langchain_{provider.replace('-', '_')}"
    package = module.replace("_", "-")
    extra = _EXTRAS.get(provider)
    how = f"`uv sync --extra {extra}`" if extra else f"`uv add {package}`"
    return ModelConfigError(
        f"Model {spec!r} needs the package {package}, which is not installed: run {how} "
        f"(or `pip install {package}`), or choose another model."
    )


@lru_cache(maxsize=16)
def load_chat_model(spec: str) -> BaseChatModel:
    """Build the chat model for `spec` ("provider:model"; "provider/model" also accepted).

    Empty or 'memory-only' gives the memory-only responder with nothing recalled; the agent's
    respond node builds it per turn with what recall returned.
    """
    if is_memory_only(spec):
        from agent.memory_only import MemoryOnlyChatModel

        return MemoryOnlyChatModel()
    spec = _normalise(spec)
    provider = spec.split(":", 1)[0].strip().lower()
    if ":" not in spec or not provider or not spec.split(":", 1)[1].strip():
        raise ModelConfigError(f"Model {spec!r} is not a 'provider:model' string. {_HELP}")
    if provider == "openai" and not (
        os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")
    ):
        raise ModelConfigError(f"Model {spec!r} needs OPENAI_API_KEY (or OPENAI_BASE_URL). {_HELP}")
    kwargs: dict[str, Any] = {"temperature": 0}
    if provider == "openai" and not os.environ.get("OPENAI_API_KEY"):
        # Local OpenAI-compatible servers (vLLM, llama.cpp, Ollama) ignore the key but the
        # client insists on one.
        kwargs["api_key"] = "not-needed"
    from langchain.chat_models import init_chat_model

    try:
        model: BaseChatModel = init_chat_model(spec, **kwargs)
    except ImportError as exc:
        raise _missing_package(spec, provider, exc) from exc
    except ValueError as exc:
        raise ModelConfigError(f"Cannot load chat model {spec!r}: {exc}. {_HELP}") from exc
    return model
