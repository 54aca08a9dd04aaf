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


def _int_env(name: str, default: int) -> int:
    value = _env(name)
    if value is None:
        return default
    try:
        number = int(value.replace("_", ""))
    except ValueError as exc:
        raise ValueError(f"{name} must be a positive integer, got {value!r}") from exc
    if number <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return number


def _choice_env(name: str, choices: tuple[str, ...]) -> str:
    value = (_env(name) or choices[0]).lower()
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


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
    # Images in messages: the largest accepted (bytes as sent, pixels as decoded), what an image
    # memory keeps of the bytes ("thumbnail": a metadata-free JPEG of at most 256 px a side;
    # "none": only the description and features), and whether remote image URLs are fetched.
    image_max_bytes: int = 10 * 1024 * 1024
    image_max_pixels: int = 50_000_000
    image_keep: str = "thumbnail"
    image_fetch_urls: bool = False
    # An OpenAI-compatible multimodal embeddings endpoint for cross-modal recall (optional).
    image_embedding_url: str | None = None
    image_embedding_model: str | None = None
    image_embedding_api_key: str | None = None

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
            image_max_bytes=_int_env("MEMORY_IMAGE_MAX_BYTES", 10 * 1024 * 1024),
            image_max_pixels=_int_env("MEMORY_IMAGE_MAX_PIXELS", 50_000_000),
            image_keep=_choice_env("MEMORY_IMAGE_KEEP", ("thumbnail", "none")),
            image_embedding_url=_env("MEMORY_IMAGE_EMBEDDING_URL"),
            image_embedding_model=_env("MEMORY_IMAGE_EMBEDDING_MODEL"),
            image_embedding_api_key=_env("MEMORY_IMAGE_EMBEDDING_API_KEY"),
            image_fetch_urls=(_env("MEMORY_IMAGE_FETCH_URLS") or "0").lower()
            in ("1", "true", "yes"),
        )
