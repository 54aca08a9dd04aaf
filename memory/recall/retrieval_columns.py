"""Column storage behind `UserIndex`: one row (slot) per memory, numpy arrays per field.

Scoring reads whole columns at once (one matrix-vector product for 10,000 memories is ~1 ms),
so a memory's fields live in arrays rather than objects; freed slots are reused.
"""

from __future__ import annotations

import math
import mmap
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from memory.recall.temporal import TimeRange

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


_A = TypeVar("_A", bound=npt.NDArray[Any])

# A vector matrix this large or larger gets pages of its own from the OS (an anonymous map),
# returned the moment the matrix is dropped. The cache loads and evicts users' matrices all
# the time (100 memories: 150 KB), and from the heap glibc keeps what an evicted one leaves:
# touching 3,000 users of 100 memories under a 512 MiB budget measured 41 MiB of resident
# memory above what the cache held, 5 MiB with the matrices mapped. glibc's own threshold for
# mapping (128 KiB at first) rises to the size of any mapped block freed, so it stops mapping
# them by itself after the first eviction.
_MAPPED_FROM_BYTES = 128 * 1024


def _zeros(shape: tuple[int, ...], dtype: Any) -> npt.NDArray[Any]:
    """A zero-filled array; from its own anonymous map when it is large (see above)."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if nbytes < _MAPPED_FROM_BYTES:
        return np.zeros(shape, dtype=dtype)
    try:
        # Anonymous maps come zero-filled; the map is unmapped when its last view is freed.
        pages = mmap.mmap(-1, nbytes)
    except OSError:  # out of maps (vm.max_map_count) or not allowed: the heap will do
        return np.zeros(shape, dtype=dtype)
    return np.frombuffer(pages, dtype=dtype).reshape(shape)


def _grow(array: _A, size: int, fill: float | int | bool) -> _A:
    out = _zeros((size, *array.shape[1:]), array.dtype)
    if fill:
        out[len(array) :] = fill
    out[: len(array)] = array
    return cast(_A, out)


class Columns:
    """Per-slot arrays. `size` is one past the highest slot ever used."""

    def __init__(self, dim: int = 0, capacity: int = 64) -> None:
        self.dim = dim
        self.size = 0
        self.free: list[int] = []
        self.vectors: F32 = cast(F32, _zeros((capacity, dim), np.float32))
        self.alive: Bools = np.zeros(capacity, dtype=np.bool_)
        self.occurred: F64 = np.zeros(capacity, dtype=np.float64)
        self.expires: F64 = np.full(capacity, np.inf, dtype=np.float64)
        self.importance: F32 = np.zeros(capacity, dtype=np.float32)
        self.access: F32 = np.zeros(capacity, dtype=np.float32)
        self.half_life: F32 = np.ones(capacity, dtype=np.float32)
        self.kind: I32 = np.zeros(capacity, dtype=np.int32)
        self.speaker: I32 = np.full(capacity, -1, dtype=np.int32)
        self.role: I32 = np.full(capacity, -1, dtype=np.int32)  # `retrieval._ROLES`; -1 unknown
        self.group: I32 = np.full(capacity, -1, dtype=np.int32)
        self.dated: Bools = np.zeros(capacity, dtype=np.bool_)
        self.copy: I64 = np.zeros(capacity, dtype=np.int64)  # key of its words: equal = copies
        self.chatter: Bools = np.zeros(capacity, dtype=np.bool_)  # own words carry no content
        self.events: dict[int, list[TimeRange]] = {}
        self._event_arrays: tuple[F64, F64, npt.NDArray[np.int64]] | None = None

    _FIELDS = (
        ("alive", False),
        ("occurred", 0.0),
        ("expires", np.inf),
        ("importance", 0.0),
        ("access", 0.0),
        ("half_life", 1.0),
        ("kind", 0),
        ("speaker", -1),
        ("role", -1),
        ("group", -1),
        ("dated", False),
        ("copy", 0),
        ("chatter", False),
    )

    def allocate_many(self, n: int) -> list[int]:
        """`n` free slots (freed ones first), growing the arrays (doubling) at most once."""
        reused = [self.free.pop() for _ in range(min(n, len(self.free)))]
        first = self.size
        self.size += n - len(reused)
        if self.size > len(self.alive):
            capacity = max(2 * len(self.alive), self.size)
            self.vectors = _grow(self.vectors, capacity, 0.0)
            for name, fill in self._FIELDS:
                setattr(self, name, _grow(getattr(self, name), capacity, fill))
        return [*reused, *range(first, self.size)]

    def set_dim(self, dim: int) -> None:
        """Fix the vector width on the first insert."""
        if self.dim == dim:
            return
        if self.alive.any():
            raise ValueError(f"vector has {dim} dimensions; this index holds {self.dim}")
        self.dim = dim
        self.vectors = cast(F32, _zeros((len(self.alive), dim), np.float32))

    def release(self, slot: int) -> None:
        """Mark a slot empty and make it reusable."""
        for name, fill in self._FIELDS:
            getattr(self, name)[slot] = fill
        self.vectors[slot] = 0.0
        self.set_events(slot, [])
        self.free.append(slot)

    def set_events(self, slot: int, ranges: list[TimeRange]) -> None:
        """The times a memory's events happened (see `memory.recall.temporal.event_ranges`)."""
        if ranges:
            self.events[slot] = ranges
        else:
            self.events.pop(slot, None)
        self._event_arrays = None

    def event_arrays(self) -> tuple[F64, F64, npt.NDArray[np.int64]]:
        """All event ranges flattened: (starts, ends, owning slots), epoch seconds."""
        if self._event_arrays is None:
            flat = [
                (r.start.timestamp(), r.end.timestamp(), s)
                for s, rs in self.events.items()
                for r in rs
            ]
            starts = np.array([f[0] for f in flat], dtype=np.float64)
            ends = np.array([f[1] for f in flat], dtype=np.float64)
            owners = np.array([f[2] for f in flat], dtype=np.int64)
            self._event_arrays = (starts, ends, owners)
        return self._event_arrays
