"""The write path: a gated turn, an edit, or an imported history, written under the conflict policy.

`write_back.ingest_text` gates a turn and writes what it keeps; `apply` resolves one memory
against the user's similar ones under the per-user write lock; `edit` corrects a stored memory
through the same governance; `history` imports past conversations in bulk; `pastes` bounds
what one message may write and turns pasted machine text into one account of itself.
"""

from memory.gating.ingest.apply import (
    ConflictStrategy,
    Outcome,
    apply_resolution,
    decide,
    supersede,
    write_with_policy,
)
from memory.gating.ingest.edit import EditRefused, EditResult, edit_memory
from memory.gating.ingest.history import (
    ImportFileError,
    ImportReport,
    Message,
    file_digest,
    import_messages,
    read_messages,
    to_memories,
    to_memory,
)
from memory.gating.ingest.pastes import (
    MAX_AUDIT_EVENTS_PER_MESSAGE,
    MAX_MEMORIES_PER_MESSAGE,
    MAX_MEMORIES_PER_PASTE,
    bounded,
    paste_decision,
)
from memory.gating.ingest.write_back import IngestResult, ingest_text, to_new_memory

__all__ = [
    "MAX_AUDIT_EVENTS_PER_MESSAGE",
    "MAX_MEMORIES_PER_MESSAGE",
    "MAX_MEMORIES_PER_PASTE",
    "ConflictStrategy",
    "EditRefused",
    "EditResult",
    "ImportFileError",
    "ImportReport",
    "IngestResult",
    "Message",
    "Outcome",
    "apply_resolution",
    "bounded",
    "decide",
    "edit_memory",
    "file_digest",
    "import_messages",
    "ingest_text",
    "paste_decision",
    "read_messages",
    "supersede",
    "to_memories",
    "to_memory",
    "to_new_memory",
    "write_with_policy",
]
