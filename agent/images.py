"""The agent's image path: read images in `perceive`, remember them in `gate_and_store`.

`perceive` decodes each image block of the user's message (in a thread: decoding is CPU work),
refuses what is too large or not an allowed image with a clear reply, records the features in
state, and replaces the blocks with metadata-free re-encodings. The run's input was checkpointed
before perceive saw it, so `gate_and_store` first replaces those copies of the originals (EXIF
GPS, serials) with the clean ones, then describes each image once (a vision model when
`vision_model` is set, else the user's words) and stores it through `remember_image`: screened
like text, deduplicated by perceptual hash.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage

from agent.context import Context
from agent.model import load_chat_model
from memory.multimodal import (
    CleanImage,
    ImageEmbedder,
    ImageFeatures,
    ImageLimits,
    ImageMemoryResult,
    clean_image_held,
    describe_image,
    fetch_image,
    image_block,
    read_images,
    remember_image,
    replace_images,
    search_images,
    text_parts,
)
from memory.settings import Settings
from memory.storage.checkpoint_scrub import replace_in_checkpoints
from memory.storage.store import MemoryStore
from memory.types import MemoryRecord, Scope, Source, Status

log = logging.getLogger(__name__)


# Bytes at the end of an original image whose base64 finds its checkpointed copies: 30 bytes
# (40 characters) are unique to one file, and the end of a JPEG or PNG is pixel data, not EXIF.
_NEEDLE_BYTES = 30


@dataclass(frozen=True, slots=True)
class SeenImages:
    """A message's images after perceive: the cleaned content and each image's features."""

    content: list[Any]
    features: list[ImageFeatures]
    needles: list[str]  # per image: a fragment of the original's base64 ("" for a fetched URL)


# The turn text of a message that is only images (classification, task state, recall query).
IMAGE_ONLY_TEXT = "(image)"


def turn_text(human: HumanMessage, seen: SeenImages | None) -> str | bytes:
    """The words of a turn: its text blocks and audio transcripts; a placeholder for images."""
    if isinstance(human.content, str):
        return human.content
    text = text_parts(human.content)
    if seen is not None and not text.strip():
        return IMAGE_ONLY_TEXT  # an image alone is a turn; its words come from the image
    return text


def with_text(seen: SeenImages, text: str) -> list[Any]:
    """The message content to keep: the cleaned text first, then the non-text blocks."""
    rest = [b for b in seen.content if not (isinstance(b, Mapping) and b.get("type") == "text")]
    rest = [b for b in rest if not isinstance(b, str)]
    head = [] if text == IMAGE_ONLY_TEXT else [{"type": "text", "text": text}]
    return head + rest


def without_images(human: HumanMessage) -> HumanMessage:
    """`human` with only its text (same id): what a thread keeps of a refused image turn."""
    return HumanMessage(content=text_parts(human.content) or "(image refused)", id=human.id)


def _needle(data: bytes | None) -> str:
    """The base64 of the original's last bytes, aligned as it appears in the original's base64."""
    if not data:
        return ""
    start = max(len(data) - _NEEDLE_BYTES, 0) // 3 * 3
    return base64.b64encode(data[start:]).decode("ascii").rstrip("=")


def image_limits(settings: Settings) -> ImageLimits:
    """The deployment's image limits."""
    return ImageLimits(
        max_bytes=settings.image_max_bytes,
        max_pixels=settings.image_max_pixels,
        fetch_urls=settings.image_fetch_urls,
    )


async def perceive_images(
    human: HumanMessage, settings: Settings | None = None, owner: str = ""
) -> SeenImages | None:
    """Decode and clean the images of `human` (None when it has none; raises ImageInputError)."""
    content = human.content
    if not isinstance(content, list) or not any(
        isinstance(b, Mapping) and b.get("type") in ("image", "image_url") for b in content
    ):
        return None
    limits = image_limits(settings or Settings.from_env())
    found = await asyncio.to_thread(read_images, content, limits, fetch_image, owner)
    cleaned = {
        raw.index: image_block(image.data, image.mime_type, raw.name) for raw, image in found
    }
    return SeenImages(
        replace_images(content, cleaned),
        [image.features for _, image in found],
        [_needle(raw.data) for raw, _ in found],
    )


def _inline_images(content: Any) -> list[bytes]:
    """The bytes of the (already cleaned) inline image blocks of a message, in order."""
    if not isinstance(content, list):
        return []
    out: list[bytes] = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "image":
            encoded = block.get("base64")
            if isinstance(encoded, str):
                out.append(base64.b64decode(encoded))
    return out


def _redecode(
    data: Sequence[bytes], features: Sequence[ImageFeatures], limits: ImageLimits, owner: str
) -> list[CleanImage]:
    # Our own re-encodings, but state can also be written by a client (update_state): the same
    # pixel limit holds, and bytes get room for a GIF or WebP re-encoded as PNG.
    limits = ImageLimits(max_bytes=4 * limits.max_bytes, max_pixels=limits.max_pixels)
    out = []
    for blob, seen in zip(data, features, strict=False):
        image = clean_image_held(blob, limits, seen["name"], owner)
        # Features describe the image as the user sent it, not our re-encoding of it.
        out.append(CleanImage(seen, image.data, image.mime_type, image.thumbnail))
    return out


async def scrub_originals(
    store: MemoryStore, thread_id: str, human: HumanMessage, needles: Sequence[str]
) -> int:
    """Replace this turn's original images in the thread's checkpoints by their clean copies.

    The run's input was checkpointed before perceive cleaned it.
    """
    blocks = [
        b
        for b in (human.content if isinstance(human.content, list) else [])
        if isinstance(b, Mapping) and b.get("type") == "image" and isinstance(b.get("base64"), str)
    ]
    replacements = {}
    for needle, block in zip(needles, blocks, strict=False):
        if needle:
            clean, mime = str(block["base64"]), str(block.get("mime_type") or "image/png")
            replacements[needle] = _replacement(clean, mime)
    if not replacements:
        return 0
    async with store.pool.acquire() as conn:
        return await replace_in_checkpoints(conn, thread_id, replacements)


def _replacement(clean: str, mime: str) -> Callable[[str], str]:
    def make(original: str) -> str:
        return f"data:{mime};base64,{clean}" if original.startswith("data:") else clean

    return make


async def store_images(
    store: MemoryStore,
    scope: Scope,
    human: HumanMessage,
    features: Sequence[ImageFeatures],
    ctx: Context,
    provenance: Mapping[str, Any],
    settings: Settings | None = None,
) -> list[ImageMemoryResult]:
    """Describe and remember each image perceive accepted in `human`."""
    data = _inline_images(human.content)
    if not data or not features:
        return []
    settings = settings or Settings.from_env()
    limits = image_limits(settings)
    images = await asyncio.to_thread(_redecode, data, features, limits, scope.key)
    model = load_chat_model(ctx.vision_model) if ctx.vision_model else None
    hint = text_parts(human.content)
    results = []
    for image in images:
        description = await describe_image(image, model=model, hint=hint)
        if description.note and model is not None:
            log.warning("image described from the user's text: %s", description.note)
        results.append(
            await remember_image(
                store,
                scope,
                image,
                description,
                source=Source.CHAT,
                provenance=provenance,
                keep="none" if settings.image_keep == "none" else "thumbnail",
                embedder=ImageEmbedder.from_settings(settings),
            )
        )
    return results


async def image_evidence(
    store: MemoryStore, scope: Scope, query: str, k: int, settings: Settings | None = None
) -> list[tuple[MemoryRecord, float]]:
    """Image memories a text query finds by image vectors (empty without an image model)."""
    embedder = ImageEmbedder.from_settings(settings or Settings.from_env())
    if embedder is None or not query.strip():
        return []
    found = []
    for memory_id, similarity in await search_images(store.index, embedder, scope, query, k=k):
        record = await store.get(scope, memory_id)
        if record is not None and record.status is Status.ACTIVE:
            found.append((record, similarity))
    return found


__all__ = [
    "IMAGE_ONLY_TEXT",
    "SeenImages",
    "image_evidence",
    "image_limits",
    "perceive_images",
    "scrub_originals",
    "store_images",
    "turn_text",
    "with_text",
    "without_images",
]
