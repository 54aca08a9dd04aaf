"""Fetch a remote image, only where the operator allowed it, within size and time limits.

Off by default (`MEMORY_IMAGE_FETCH_URLS`): a server that fetches what users point at can be
made to probe its own network. When allowed: http(s) only, no redirects (a redirect could lead
to an internal address the URL did not name), the byte limit enforced while streaming, and one
timeout for connect and each read.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from memory.multimodal.image_input import ImageInputError, ImageLimits

FETCH_TIMEOUT_SECONDS = 10.0


def fetch_image(url: str, limits: ImageLimits) -> bytes:
    """The bytes at `url`, or `ImageInputError` (not http(s), failed, redirected, too large)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImageInputError("url", "image URLs must be http(s) URLs with a host")
    try:
        with (
            httpx.Client(timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=False) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise ImageInputError("url", f"image URL answered HTTP {response.status_code}")
            data = bytearray()
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > limits.max_bytes:
                    raise ImageInputError(
                        "too_large",
                        f"image at the URL exceeds the limit of {limits.max_bytes:,} bytes",
                    )
    except httpx.HTTPError as exc:
        raise ImageInputError(
            "url", f"image URL could not be fetched ({type(exc).__name__})"
        ) from exc
    return bytes(data)


__all__ = ["FETCH_TIMEOUT_SECONDS", "fetch_image"]
