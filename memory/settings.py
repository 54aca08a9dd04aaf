"""Infrastructure settings, read from the environment in one place.

Per-run behaviour (model, weights, budgets) lives in `agent.context.Context`; this module only
knows where things are. Every variable read here is listed in `.env.example`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# Privacy by default: nothing phones home unless the user turns it on (DESIGN §7).
_PRIVACY_DEFAULTS = {
    "ANONYMIZED_TELEMETRY": "False",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "LANGSMITH_TRACING": "false",
    "HF_HUB_OFFLINE": "1",
}


def apply_privacy_defaults() -> None:
    """Switch off telemetry for this process unless the user chose otherwise."""
    for key, value in _PRIVACY_DEFAULTS.items():
        os.environ.setdefault(key, value)


def _default_model_dir() -> Path:
    # Chroma's own download location: on a machine with internet, Chroma fills it.
    return Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2"


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the stores and models are. Empty URLs mean the embedded defaults."""

    database_url: str | None = None
    chroma_url: str | None = None
    data_dir: Path = field(default_factory=lambda: Path(".data"))
    embedding_model: str = "local:all-MiniLM-L6-v2"
    embedding_model_dir: Path = field(default_factory=_default_model_dir)
    chroma_prefix: str = "lma"
    default_tenant: str = "default"
    # Protects the server, so it is the operator's setting, never a run's: 64,000 characters is
    # ~16k tokens of English, beyond which an input is a document rather than a turn.
    max_input_chars: int = 64_000

    @classmethod
    def from_env(cls) -> Settings:
        """Read the settings from `MEMORY_*`, `DATABASE_URL` and `CHROMA_URL`."""
        data_dir = Path(_env("MEMORY_DATA_DIR") or ".data")
        return cls(
            database_url=_env("DATABASE_URL") or _env("POSTGRES_URI"),
            chroma_url=_env("CHROMA_URL"),
            data_dir=data_dir,
            embedding_model=_env("MEMORY_EMBEDDING_MODEL") or "local:all-MiniLM-L6-v2",
            embedding_model_dir=Path(_env("MEMORY_EMBEDDING_MODEL_DIR") or _default_model_dir()),
            chroma_prefix=_env("MEMORY_CHROMA_PREFIX") or "lma",
            default_tenant=_env("MEMORY_DEFAULT_TENANT") or "default",
            max_input_chars=_positive_int("MEMORY_MAX_INPUT_CHARS", 64_000),
        )


def _positive_int(name: str, default: int) -> int:
    raw = _env(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {raw[:40]!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return value
