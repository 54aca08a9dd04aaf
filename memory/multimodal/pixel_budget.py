"""Decoded image pixels in flight, bounded per process and per user.

What an image costs the server is its decoded pixels, not its upload: a 20 KB PNG of one colour
can claim 7,000 x 7,000 pixels, ~150 MB per copy of the pixels, and decoding, converting and
re-encoding hold several copies at once. The per-image limit (`MEMORY_IMAGE_MAX_PIXELS`) bounds
one image; this bounds how many are being decoded at the same time. Three concurrent turns of
four 49-megapixel PNGs each raised server memory by 0.9-1.7 GB before it.

The budget is per process because memory is: each worker spends its own. It never waits: an
image that does not fit is refused at once with a clear message (the turn answers it, the
user can send it again), because a waiting decode would hold one of the few worker threads the
event loop hands CPU work to, and a flood of image turns would stall every other request.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from PIL import Image

from memory.multimodal.image_refusal import ALLOWED_FORMATS, ImageInputError
from memory.settings import ServiceLimits


def header_pixels(data: bytes) -> int:
    """Width x height as the image's header claims them (nothing decoded); 0 when unreadable.

    Unreadable data is left to the decoder, which refuses it with the right message.
    """
    try:
        with Image.open(io.BytesIO(data), formats=ALLOWED_FORMATS) as opened:
            width, height = opened.size
    except Exception:
        return 0
    return max(0, int(width)) * max(0, int(height))


class PixelBudget:
    """Pixels being decoded now, in total and per owner; `hold` refuses what does not fit."""

    def __init__(self, total: int, per_owner: int) -> None:
        """Limits in pixels."""
        self.total = total
        self.per_owner = per_owner
        self._lock = threading.Lock()
        self._in_flight = 0
        self._by_owner: dict[str, int] = {}
        self.peak = 0  # the most pixels ever held at once, for tests and benchmarks

    @property
    def in_flight(self) -> int:
        """Pixels held right now."""
        return self._in_flight

    @contextmanager
    def hold(self, owner: str, pixels: int) -> Iterator[None]:
        """Reserve `pixels` for `owner` while the block decodes; ImageInputError if no room."""
        with self._lock:
            mine = self._by_owner.get(owner, 0)
            if mine + pixels > self.per_owner:
                raise ImageInputError(
                    "busy",
                    f"your other images are still being read ({mine + pixels:,} pixels at once; "
                    f"the limit is {self.per_owner:,}); send this one again in a moment",
                )
            if self._in_flight + pixels > self.total:
                raise ImageInputError(
                    "busy",
                    "the server is reading too many images right now; send it again in a moment",
                )
            self._in_flight += pixels
            self._by_owner[owner] = mine + pixels
            self.peak = max(self.peak, self._in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= pixels
                left = self._by_owner[owner] - pixels
                if left:
                    self._by_owner[owner] = left
                else:
                    del self._by_owner[owner]


_BUDGET: PixelBudget | None = None
_BUDGET_LOCK = threading.Lock()


def process_budget() -> PixelBudget:
    """The process budget, read from `MEMORY_MAX_IMAGE_PIXELS_IN_FLIGHT[_PER_USER]` once."""
    global _BUDGET
    with _BUDGET_LOCK:
        if _BUDGET is None:
            limits = ServiceLimits.from_env()
            _BUDGET = PixelBudget(
                limits.image_pixels_in_flight, limits.image_pixels_in_flight_per_user
            )
        return _BUDGET


__all__ = ["PixelBudget", "header_pixels", "process_budget"]
