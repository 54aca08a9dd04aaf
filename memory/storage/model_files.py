"""Where the local embedding model lives on disk, and the errors when it is missing.

Shared by `embedding` (which loads the model) and `model_fetch` (which downloads it), so
neither has to import the other to name a missing model.
"""

from __future__ import annotations

from pathlib import Path


class EmbeddingError(RuntimeError):
    """The embedding model is missing or failed."""


class ModelDownloadError(EmbeddingError):
    """The embedding model could not be obtained (offline, interrupted, corrupt)."""


def _both_ways(model_dir: Path) -> str:
    return (
        "Either let it download once on a machine with internet (source: "
        "MEMORY_EMBEDDING_MODEL_URL, checked against MEMORY_EMBEDDING_MODEL_SHA256), or set "
        "MEMORY_EMBEDDING_MODEL_DIR to a folder holding a copy of all-MiniLM-L6-v2 "
        f"(onnx/model.onnx and onnx/tokenizer.json); it is looked for at {model_dir}."
    )


def missing_model_error(model_dir: Path, reason: str) -> ModelDownloadError:
    """The error for a model that is neither present nor obtainable, naming both ways."""
    return ModelDownloadError(
        f"No ONNX embedding model at {model_dir}: {reason}. " + _both_ways(model_dir)
    )


def onnx_dir(model_dir: Path) -> Path | None:
    """The folder holding `model.onnx` and `tokenizer.json` (`onnx/` or `model_dir`), if any."""
    for candidate in (model_dir / "onnx", model_dir):
        if (candidate / "model.onnx").is_file() and (candidate / "tokenizer.json").is_file():
            return candidate
    return None


def has_onnx_model(model_dir: Path) -> bool:
    """Whether `model_dir` holds the ONNX model and its tokenizer (in `onnx/` or directly)."""
    return onnx_dir(model_dir) is not None
