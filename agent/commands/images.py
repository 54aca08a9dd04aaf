"""`remember --image`: store an image file through the agent's image path."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from agent.commands.output import print_json, say
from agent.images import image_limits
from agent.model import load_chat_model
from memory.multimodal import (
    ImageEmbedder,
    ImageInputError,
    clean_image,
    describe_image,
    remember_image,
)
from memory.settings import Settings
from memory.storage.store import open_store
from memory.types import Scope, Source


def _read(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:  # refuse before reading a huge file into memory
            raise ImageInputError(
                "too_large", f"image is {size:,} bytes; the limit is {max_bytes:,} bytes"
            )
        return path.read_bytes()
    except OSError as exc:
        raise ImageInputError("not_image", f"cannot read {path}: {exc.strerror}") from exc


async def remember_image_file(args: argparse.Namespace) -> int:
    """Decode, describe (vision model if given, else the caption or file name) and store."""
    settings = Settings.from_env()
    limits = image_limits(settings)
    path = Path(args.image)
    data = await asyncio.to_thread(_read, path, limits.max_bytes)
    image = await asyncio.to_thread(clean_image, data, limits, path.name)
    model = load_chat_model(args.vision_model) if args.vision_model else None
    hint = args.caption or args.text or ""
    description = await describe_image(image, model=model, hint=hint)
    async with open_store(settings) as store:
        result = await remember_image(
            store,
            Scope(args.tenant, args.user),
            image,
            description,
            source=Source.CHAT,
            provenance={"via": "cli"},
            keep="none" if settings.image_keep == "none" else "thumbnail",
            embedder=ImageEmbedder.from_settings(settings),
        )
    out: dict[str, Any] = {
        "action": result.action,
        "memory_id": result.memory_id,
        "reason": result.reason,
        "content": result.content,
        "described_by": description.source,
        "image": dict(result.features),
    }
    if args.json:
        print_json(out)
        return 0
    target = f" {result.memory_id}" if result.memory_id else ""
    say(f"{result.action}{target}: {result.reason}")
    if result.content:
        say(f"  {result.content}")
    f = result.features
    say(f"  {f['format']} {f['width']}x{f['height']}, {f['bytes']:,} bytes, phash {f['phash']}")
    return 0
