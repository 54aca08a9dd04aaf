"""The `memory_images` table: an image memory's perceptual hash, features and kept bytes.

Every query is scoped by tenant and user like the rest of the storage API. A row belongs to one
memory and is deleted with it (foreign key, ON DELETE CASCADE), so deleting a memory or
forgetting a user removes the bytes too.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory.storage.store import MemoryStore
from memory.types import Scope

__all__ = ["ImageRow", "image_rows", "insert_image", "nearest_image"]


@dataclass(frozen=True, slots=True)
class ImageRow:
    """One stored image of a memory (bytes only when a setting kept them)."""

    memory_id: str
    phash: str
    features: dict[str, Any]
    thumbnail: bytes | None
    thumbnail_mime: str | None

    def as_dict(self, *, with_bytes: bool = True) -> dict[str, Any]:
        """JSON-ready form; the thumbnail as base64 when present and asked for."""
        out: dict[str, Any] = {
            "memory_id": self.memory_id,
            "phash": self.phash,
            "features": self.features,
            "thumbnail_mime": self.thumbnail_mime,
            "thumbnail_bytes": len(self.thumbnail) if self.thumbnail else 0,
        }
        if with_bytes:
            thumb = self.thumbnail
            out["thumbnail_base64"] = base64.b64encode(thumb).decode("ascii") if thumb else None
        return out


def _row(record: Mapping[str, Any]) -> ImageRow:
    features = record["features"]
    if isinstance(features, str):
        features = json.loads(features)  # asyncpg hands jsonb over as text
    return ImageRow(
        memory_id=record["memory_id"],
        phash=record["phash"],
        features=dict(features or {}),
        thumbnail=bytes(record["thumbnail"]) if record["thumbnail"] is not None else None,
        thumbnail_mime=record["thumbnail_mime"],
    )


async def insert_image(
    store: MemoryStore,
    scope: Scope,
    memory_id: str,
    *,
    phash: str,
    features: Mapping[str, Any],
    thumbnail: bytes | None,
    thumbnail_mime: str | None,
) -> None:
    """Attach an image's hash, features and (optional) thumbnail to a memory of `scope`."""
    async with store.pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO memory_images"
            " (memory_id, tenant_id, user_id, phash, features, thumbnail, thumbnail_mime)"
            " SELECT id, tenant_id, user_id, $4, $5::jsonb, $6, $7 FROM memories"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
            scope.tenant_id,
            scope.user_id,
            memory_id,
            phash,
            json.dumps(dict(features), ensure_ascii=False, default=str),
            thumbnail,
            thumbnail_mime if thumbnail is not None else None,
        )


async def nearest_image(
    store: MemoryStore, scope: Scope, phash: str, max_distance: int
) -> tuple[str, int] | None:
    """The active image memory of `scope` whose hash is closest to `phash`, within the bound.

    The Hamming distance is computed in Postgres (`bit_count` of the XOR of the 64-bit
    hashes), so only the winner crosses the wire.
    """
    async with store.pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT i.memory_id, bit_count(('x' || i.phash)::bit(64) # ('x' || $3)::bit(64))"
            " AS distance FROM memory_images i JOIN memories m ON m.id = i.memory_id"
            " WHERE i.tenant_id = $1 AND i.user_id = $2 AND m.status = 'active'"
            " AND length(i.phash) = 16 ORDER BY distance, i.created_at LIMIT 1",
            scope.tenant_id,
            scope.user_id,
            phash,
        )
    if row is None or int(row["distance"]) > max_distance:
        return None
    return str(row["memory_id"]), int(row["distance"])


async def image_rows(
    store: MemoryStore, scope: Scope, memory_ids: list[str] | None = None
) -> list[ImageRow]:
    """The images of `scope` (or of the given memories of `scope`), oldest first."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT memory_id, phash, features, thumbnail, thumbnail_mime FROM memory_images"
            " WHERE tenant_id = $1 AND user_id = $2"
            " AND ($3::text[] IS NULL OR memory_id = ANY($3::text[])) ORDER BY created_at",
            scope.tenant_id,
            scope.user_id,
            memory_ids,
        )
    return [_row(r) for r in rows]
