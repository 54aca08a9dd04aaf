"""CLI command implementations; `agent.cli` parses arguments and dispatches here."""

from __future__ import annotations

from agent.commands.basic import gate, recall, reindex, remember, why
from agent.commands.chat import chat
from agent.commands.consolidate import consolidate, rollback_run
from agent.commands.dev import dev
from agent.model import ModelConfigError
from memory.multimodal.image_input import ImageInputError
from memory.storage.embedding import EmbeddingError
from memory.storage.pg import DatabaseError
from memory.storage.store import MemoryInputError
from memory.types import ScopeError
from memory.working.sensory import InputError

# Failures with a message meant for the user: printed as one line, exit code 2.
EXPECTED_ERRORS: tuple[type[Exception], ...] = (
    DatabaseError,
    EmbeddingError,
    ImageInputError,
    InputError,
    MemoryInputError,
    ModelConfigError,
    ScopeError,
)

__all__ = ["EXPECTED_ERRORS", "chat", "dev", "gate", "recall", "reindex", "remember", "why"]
__all__ += ["consolidate", "rollback_run"]
