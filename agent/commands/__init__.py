"""CLI command implementations; `agent.cli` parses arguments and dispatches here.

One module per group of commands (`basic`, `chat`, `consolidate`, `dev`, `privacy`, `stats`),
imported only when its command runs: importing them all would cost every command seconds.
"""

from __future__ import annotations


def expected_errors() -> tuple[type[Exception], ...]:
    """Failures with a message meant for the user: printed as one line, exit code 2."""
    from agent.model import ModelConfigError
    from memory.multimodal.image_input import ImageInputError
    from memory.settings import SettingsError
    from memory.storage.chroma_lock import ChromaInUseError
    from memory.storage.model_files import EmbeddingError
    from memory.storage.pg import DatabaseError
    from memory.storage.store import MemoryInputError
    from memory.types import ScopeError
    from memory.working.sensory import InputError

    return (ChromaInUseError, DatabaseError, EmbeddingError, ImageInputError, InputError,
            MemoryInputError, ModelConfigError, ScopeError, SettingsError)  # fmt: skip


__all__ = ["expected_errors"]
