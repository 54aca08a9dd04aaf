"""Which images the server decodes at all, and the error for one it will not use.

Below both `image_input` (validation and cleaning) and `pixel_budget` (decoded pixels in flight),
which each refuse images with it.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["ALLOWED_FORMATS", "ImageInputError"]

# Decoders Pillow may try. Everything else (TIFF, BMP, PSD, EPS via Ghostscript ...) is refused:
# fewer parsers exposed to hostile bytes, and these four are what chat clients send.
ALLOWED_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")


class ImageInputError(ValueError):
    """An image that cannot be used: too large, not an allowed image, or not fetchable."""

    def __init__(
        self,
        reason: Literal["too_large", "too_many_pixels", "not_image", "url", "too_many", "busy"],
        message: str,
    ) -> None:
        super().__init__(message)
        self.reason = reason
