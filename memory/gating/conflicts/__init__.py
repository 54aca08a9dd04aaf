"""Conflict detection and policy for a new memory against the user's similar active ones.

`frames` reads a statement as a predicate frame and its values (`vocab` holds the word lists),
`relation` says how two statements relate (duplicate, contradiction, list addition, unrelated),
and `policy.resolve` decides what the write path does about it (`resolve_by_reading` when a
model read the relation). Pure functions, no I/O.
"""

from memory.gating.conflicts.frames import Frame, analyse, frame_similarity, heads, merge_text
from memory.gating.conflicts.policy import (
    Action,
    Candidate,
    Existing,
    Resolution,
    Strategy,
    resolve,
    resolve_by_reading,
)
from memory.gating.conflicts.relation import EmbedFn, Relation, decisive, relate

__all__ = [
    "Action",
    "Candidate",
    "EmbedFn",
    "Existing",
    "Frame",
    "Relation",
    "Resolution",
    "Strategy",
    "analyse",
    "decisive",
    "frame_similarity",
    "heads",
    "merge_text",
    "relate",
    "resolve",
    "resolve_by_reading",
]
