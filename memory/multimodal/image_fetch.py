"""Fetch a remote image, only where the operator allowed it, within size and time limits.

Off by default (`MEMORY_IMAGE_FETCH_URLS`): a server that fetches what users point at can be
made to probe its own network. When allowed: http(s) only; hosts that resolve to a loopback,
private, link-local or otherwise non-public address are refused (the cloud metadata service at
169.254.169.254 among them) unless `fetch_private` is set; no redirects (a redirect could lead
to an address the URL did not name); the byte limit enforced while streaming; one timeout for
connect and each read, and a deadline for the whole fetch (a server that sends a byte now and
then would otherwise hold the fetch, and the run waiting on it, for as long as it likes). The
deadline is checked as bytes arrive, so a fetch ends at the latest one read timeout after it;
a message's images are fetched one after another, at most `ImageLimits.max_images` of them.
The address check and the connection resolve the name separately, so a DNS server that answers
differently the second time (rebinding) is not stopped by this.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from urllib.parse import urlsplit

import httpx

from memory.multimodal.image_input import ImageInputError, ImageLimits

FETCH_TIMEOUT_SECONDS = 10.0
"""Connecting, and each read: a server silent for longer is given up on."""
FETCH_DEADLINE_SECONDS = 20.0
"""The whole fetch, from resolving the host to the last byte (checked as bytes arrive)."""


def _check_deadline(deadline: float) -> float:
    """The seconds left before `deadline` (a `time.monotonic()` value), or `ImageInputError`."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise ImageInputError(
            "url",
            f"image URL took longer than {FETCH_DEADLINE_SECONDS:g} s to fetch; "
            "send the image inline (base64)",
        )
    return left


def fetch_image(url: str, limits: ImageLimits) -> bytes:
    """The bytes at `url`, or `ImageInputError` (not http(s), failed, redirected, too big/slow)."""
    deadline = time.monotonic() + FETCH_DEADLINE_SECONDS
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImageInputError("url", "image URLs must be http(s) URLs with a host")
    if not limits.fetch_private:
        _refuse_private(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    # No read waits past the deadline by more than one read timeout; none starts after it.
    timeout = min(FETCH_TIMEOUT_SECONDS, _check_deadline(deadline))
    try:
        with (
            httpx.Client(timeout=timeout, follow_redirects=False) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise ImageInputError("url", f"image URL answered HTTP {response.status_code}")
            data = bytearray()
            for chunk in response.iter_bytes():
                _check_deadline(deadline)
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


def _refuse_private(host: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise ImageInputError("url", "image URL host could not be resolved") from exc
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not address.is_global:
            raise ImageInputError("url", "image URLs may not point at a non-public address")


__all__ = ["FETCH_DEADLINE_SECONDS", "FETCH_TIMEOUT_SECONDS", "fetch_image"]
