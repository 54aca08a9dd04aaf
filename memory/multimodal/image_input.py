"""Images in a message: find them, decode them safely, strip their metadata, featurise them.

Every image is hostile input. It is decoded by Pillow restricted to an allow-list of formats
(the declared MIME type is never trusted), its dimensions are checked from the header before any
pixel is decoded (a 50 kB PNG can claim 100,000 x 100,000 pixels), and what is kept — the copy
that stays in the conversation and the thumbnail a memory may keep — is re-encoded from raw
pixels, so no EXIF (GPS, camera serials), XMP, ICC or text chunk of the original survives.

All functions here are synchronous CPU work: callers on an event loop run them in a thread.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from PIL import ExifTags, Image, ImageOps
from typing_extensions import TypedDict

from memory.multimodal.image_refusal import ALLOWED_FORMATS, ImageInputError
from memory.multimodal.pixel_budget import header_pixels, process_budget

__all__ = [
    "ALLOWED_FORMATS",
    "CleanImage",
    "ImageFeatures",
    "ImageInputError",
    "ImageLimits",
    "RawImage",
    "clean_image",
    "clean_image_held",
    "find_images",
    "hash_distance",
    "image_block",
    "read_images",
    "replace_images",
    "text_parts",
]

_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+)?((?:;[\w.+-]+=[\w.+-]+)*);base64,", re.ASCII)
_NAME_KEYS = ("filename", "name", "alt", "alt_text", "title")
# Longest side of the thumbnail a memory keeps: enough to recognise a photo in a list, about
# 5-15 kB as JPEG, so a user's thousand images cost ~10 MB of Postgres.
THUMBNAIL_SIDE = 256


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What an image may weigh; the defaults suit photos from phones (12-50 MP, a few MB)."""

    max_bytes: int = 10 * 1024 * 1024
    max_pixels: int = 50_000_000
    max_images: int = 4
    fetch_urls: bool = False
    fetch_private: bool = False  # allow fetching from loopback/private addresses (tests, LANs)


@dataclass(frozen=True, slots=True)
class RawImage:
    """One image block of a message, before decoding."""

    index: int  # position of the block in the message content
    data: bytes | None  # the bytes, when inline
    url: str | None  # a remote URL, when not inline
    name: str  # file name or alt text the client sent, if any ("" otherwise)


class ImageFeatures(TypedDict):
    """What sensory memory records about an image (plain data: graph state and metadata)."""

    format: str
    mime_type: str
    width: int
    height: int
    bytes: int
    phash: str
    captured_at: str | None
    name: str
    had_metadata: bool


@dataclass(frozen=True, slots=True)
class CleanImage:
    """A decoded image: its features and metadata-free re-encodings."""

    features: ImageFeatures
    data: bytes  # the whole image, re-encoded without metadata
    mime_type: str
    thumbnail: bytes  # at most THUMBNAIL_SIDE pixels a side, JPEG, no metadata


_AUDIO_BLOCKS = ("audio", "input_audio")


def text_parts(content: Any) -> str:
    """The text of a message's content: the string, or its text blocks joined by newlines.

    An audio block's `transcript` (as clients that transcribe speech send it) counts as the
    user's words; audio without a transcript contributes nothing (it is not transcribed here).
    """
    if isinstance(content, str):
        return content
    if isinstance(content, bytes | bytearray):
        return bytes(content).decode("utf-8", errors="replace")
    if not isinstance(content, list):
        return str(content)
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in (None, "text"):
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
        elif isinstance(part, dict) and part.get("type") in _AUDIO_BLOCKS:
            transcript = part.get("transcript")
            if isinstance(transcript, str):
                texts.append(transcript)
    return "\n".join(t for t in texts if t)


def _name(block: Mapping[str, Any]) -> str:
    for holder in (block, block.get("metadata"), block.get("extras")):
        if isinstance(holder, Mapping):
            for key in _NAME_KEYS:
                value = holder.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()[:200]
    return ""


def _decode_b64(text: str) -> bytes:
    try:
        return base64.b64decode(re.sub(r"\s+", "", text), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageInputError("not_image", "image data is not valid base64") from exc


def _from_url(url: str, limits: ImageLimits) -> tuple[bytes | None, str | None]:
    match = _DATA_URL.match(url)
    if match:
        encoded = url[match.end() :]
        # base64 inflates by 4/3: refuse before decoding what would exceed the byte limit.
        if len(encoded) * 3 // 4 > limits.max_bytes:
            raise _too_large(len(encoded) * 3 // 4, limits)
        return _decode_b64(encoded), None
    if url.startswith("data:"):
        raise ImageInputError("not_image", "only base64 data: URLs are accepted for images")
    return None, url


def _raw(index: int, block: Mapping[str, Any], limits: ImageLimits) -> RawImage | None:
    kind = block.get("type")
    if kind == "image_url":  # OpenAI chat format
        spec = block.get("image_url")
        url = spec.get("url") if isinstance(spec, Mapping) else spec
        if not isinstance(url, str):
            raise ImageInputError("not_image", "image_url block without a url")
        data, remote = _from_url(url.strip(), limits)
        return RawImage(index, data, remote, _name(block))
    if kind != "image":
        return None
    # LangChain standard blocks: v1 {"base64"| "url", "mime_type"} and v0 {"source_type", "data"}.
    encoded = block.get("base64")
    if encoded is None and block.get("source_type") == "base64":
        encoded = block.get("data")
    if isinstance(encoded, str):
        if len(encoded) * 3 // 4 > limits.max_bytes:
            raise _too_large(len(encoded) * 3 // 4, limits)
        return RawImage(index, _decode_b64(encoded), None, _name(block))
    url = block.get("url")
    if url is None and block.get("source_type") == "url":
        url = block.get("data") or block.get("url")
    if isinstance(url, str):
        data, remote = _from_url(url.strip(), limits)
        return RawImage(index, data, remote, _name(block))
    raise ImageInputError("not_image", "image block has neither base64 data nor a url")


def find_images(content: Any, limits: ImageLimits) -> list[RawImage]:
    """The image blocks of a message's content, in order (raises `ImageInputError`)."""
    if not isinstance(content, list):
        return []
    found = [
        raw
        for index, block in enumerate(content)
        if isinstance(block, Mapping) and (raw := _raw(index, block, limits)) is not None
    ]
    if len(found) > limits.max_images:
        raise ImageInputError(
            "too_many", f"{len(found)} images in one message; the limit is {limits.max_images}"
        )
    return found


def _too_large(size: int, limits: ImageLimits) -> ImageInputError:
    return ImageInputError(
        "too_large", f"image is {size:,} bytes; the limit is {limits.max_bytes:,} bytes"
    )


def _captured_at(image: Image.Image) -> str | None:
    exif = image.getexif()
    raw = exif.get_ifd(ExifTags.IFD.Exif).get(ExifTags.Base.DateTimeOriginal) or exif.get(
        ExifTags.Base.DateTime
    )
    if not isinstance(raw, str):
        return None
    try:
        # EXIF times carry no zone; reported as written, marked UTC only for a stable format.
        return (
            datetime.strptime(raw.strip()[:19], "%Y:%m:%d %H:%M:%S").replace(tzinfo=UTC).isoformat()
        )
    except ValueError:
        return None


def _pixels_only(image: Image.Image) -> Image.Image:
    """A new image holding only the pixels: no info dict, EXIF, ICC, XMP or text chunks."""
    mode = "RGBA" if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info else "RGB"
    converted = image.convert(mode)
    if converted is image:  # convert() may hand back the image itself; never alias the original
        converted = image.copy()
    # Pasted into a fresh image rather than through tobytes()/frombytes(): the same clean copy
    # without a third full copy of the pixels (~150 MB at 49 megapixels) alive at the peak.
    clean = Image.new(mode, converted.size)
    clean.paste(converted)
    return clean


def _encode(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        image.convert("RGB").save(out, "JPEG", quality=88, optimize=True)
    else:
        image.save(out, "PNG", optimize=True)
    return out.getvalue()


def clean_image(data: bytes, limits: ImageLimits, name: str = "") -> CleanImage:
    """Decode `data` as an allowed image within `limits`; features and metadata-free copies."""
    if len(data) > limits.max_bytes:
        raise _too_large(len(data), limits)
    if not data:
        raise ImageInputError("not_image", "image data is empty")
    try:
        with Image.open(io.BytesIO(data), formats=ALLOWED_FORMATS) as opened:
            width, height = opened.size  # from the header: nothing decoded yet
            if width * height > limits.max_pixels:
                raise ImageInputError(
                    "too_many_pixels",
                    f"image is {width:,}x{height:,} pixels; the limit is "
                    f"{limits.max_pixels:,} pixels",
                )
            fmt = str(opened.format)
            captured = _captured_at(opened)
            had_metadata = (
                bool(opened.getexif())
                or any(
                    k in opened.info for k in ("exif", "xmp", "icc_profile", "XML:com.adobe.xmp")
                )
                or any(isinstance(v, str) for v in opened.info.values())
            )
            opened.seek(0)  # first frame of an animation
            opened.load()
            # In place: a transposed copy beside the original is one more full copy at the peak.
            ImageOps.exif_transpose(opened, in_place=True)
            pixels = _pixels_only(opened)
    except ImageInputError:
        raise
    except Image.DecompressionBombError as exc:
        raise ImageInputError("too_many_pixels", f"image refused: {exc}") from exc
    except MemoryError:
        raise
    except Exception as exc:
        # Pillow's decoders report malformed data as UnidentifiedImageError, OSError,
        # SyntaxError or ValueError, but a crafted file can also surface struct.error,
        # IndexError, ZeroDivisionError ...: all of them mean "not a usable image".
        allowed = ", ".join(ALLOWED_FORMATS)
        raise ImageInputError(
            "not_image", f"data is not a readable image (allowed formats: {allowed})"
        ) from exc
    import imagehash  # lazily: it loads scipy (~0.3 s), which only image turns need

    out_fmt = "JPEG" if fmt == "JPEG" and pixels.mode == "RGB" else "PNG"
    data_out = _encode(pixels, out_fmt)
    phash = str(imagehash.phash(pixels))
    # Last, in place: the full-size pixels are not needed after this, so no copy of them is made.
    thumb = pixels
    thumb.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
    features = ImageFeatures(
        format=fmt,
        mime_type=_MIME[fmt],
        width=width,
        height=height,
        bytes=len(data),
        phash=phash,
        captured_at=captured,
        name=name,
        had_metadata=had_metadata,
    )
    return CleanImage(features, data_out, _MIME[out_fmt], _encode(thumb, "JPEG"))


def read_images(
    content: Any,
    limits: ImageLimits,
    fetch: Callable[[str, ImageLimits], bytes] | None = None,
    owner: str = "",
) -> list[tuple[RawImage, CleanImage]]:
    """Every image of a message's content, decoded and cleaned (raises `ImageInputError`).

    A remote URL is fetched only when `limits.fetch_urls` allows it and a `fetch` is given;
    otherwise it is refused: fetching makes the server send requests where the user points.
    Each image is decoded within the process's pixel budget for `owner` (`pixel_budget`).
    """
    out: list[tuple[RawImage, CleanImage]] = []
    for raw in find_images(content, limits):
        data = raw.data
        if data is None:
            if not limits.fetch_urls or fetch is None or raw.url is None:
                raise ImageInputError(
                    "url",
                    "remote image URLs are not fetched; send the image inline (base64)",
                )
            data = fetch(raw.url, limits)
        out.append((raw, clean_image_held(data, limits, raw.name, owner)))
    return out


def clean_image_held(
    data: bytes, limits: ImageLimits, name: str = "", owner: str = ""
) -> CleanImage:
    """`clean_image` with the pixels its header claims held in the process's pixel budget."""
    pixels = header_pixels(data) if len(data) <= limits.max_bytes else 0
    if pixels > limits.max_pixels:
        return clean_image(data, limits, name)  # refused by the per-image limit, undecoded
    with process_budget().hold(owner, pixels):
        return clean_image(data, limits, name)


def hash_distance(a: str, b: str) -> int:
    """Hamming distance between two perceptual hashes (hex strings of equal length)."""
    return bin(int(a, 16) ^ int(b, 16)).count("1")


def image_block(data: bytes, mime_type: str, name: str = "") -> dict[str, Any]:
    """A LangChain standard image block carrying `data` (what providers' adapters convert)."""
    block: dict[str, Any] = {
        "type": "image",
        "base64": base64.b64encode(data).decode("ascii"),
        "mime_type": mime_type,
    }
    if name:
        block["extras"] = {"filename": name}
    return block


def replace_images(content: Sequence[Any], cleaned: Mapping[int, dict[str, Any]]) -> list[Any]:
    """`content` with the blocks at the given indexes replaced."""
    return [cleaned.get(i, block) for i, block in enumerate(content)]
