"""Optional cross-modal recall: image vectors from an embeddings endpoint, in their own collection.

With `MEMORY_IMAGE_EMBEDDING_URL` (an OpenAI-compatible base URL, e.g. `http://host:8000/v1`)
and `MEMORY_IMAGE_EMBEDDING_MODEL` set, each stored image is embedded by that model and indexed in
the Chroma collection `<prefix>_images`, and a turn's text query is embedded by the same model
to search it: a photo of a red kayak is found by "the boat I showed you" even when its
description never says "boat". The request is the `/embeddings` call of OpenAI-compatible
multimodal servers (vLLM, Jina, Infinity): `{"model": M, "input": [{"image": "data:…"}]}` for
images and `{"model": M, "input": [{"text": "…"}]}` for queries; the answer is
`{"data": [{"embedding": [...]}]}`. Nothing is sent anywhere unless the URL is configured.

The image vectors are an index like the text ones: entries carry their owner's keyed hash,
queries filter on it, and deleting a memory or a user deletes them. They cannot be rebuilt from
Postgres when no bytes are kept (`MEMORY_IMAGE_KEEP=none`); with thumbnails they could be.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from memory.settings import Settings
from memory.storage.vector import IMAGE_LAYER, VectorIndex, VectorIndexError
from memory.types import Scope

log = logging.getLogger(__name__)

# One embedding call should answer in well under a second; a slow endpoint must not hold a turn.
TIMEOUT_SECONDS = 15.0


class ImageEmbeddingError(RuntimeError):
    """The image embeddings endpoint failed or answered malformed data."""


@dataclass(frozen=True, slots=True)
class ImageEmbedder:
    """Client of an OpenAI-compatible multimodal `/embeddings` endpoint."""

    base_url: str
    model: str
    api_key: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> ImageEmbedder | None:
        """The configured embedder, or None when no endpoint is configured."""
        if not settings.image_embedding_url or not settings.image_embedding_model:
            return None
        return cls(
            settings.image_embedding_url.rstrip("/"),
            settings.image_embedding_model,
            settings.image_embedding_api_key,
        )

    async def _embed(self, inputs: list[dict[str, str]]) -> np.ndarray:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
                response = await client.post(
                    f"{self.base_url}/embeddings",
                    json={"model": self.model, "input": inputs},
                    headers=headers,
                )
            response.raise_for_status()
            rows: Any = response.json()["data"]
            vectors = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            raise ImageEmbeddingError(f"image embedding failed: {type(exc).__name__}") from exc
        if vectors.ndim != 2 or len(vectors) != len(inputs) or not np.isfinite(vectors).all():
            raise ImageEmbeddingError("image embedding answer has the wrong shape")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)

    async def embed_images(self, images: Sequence[tuple[bytes, str]]) -> np.ndarray:
        """One L2-normalised vector per (bytes, MIME type)."""
        inputs = [
            {"image": f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"}
            for data, mime in images
        ]
        return await self._embed(inputs)

    async def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised vector per text, in the images' space."""
        return await self._embed([{"text": t} for t in texts])


async def index_image(
    index: VectorIndex,
    embedder: ImageEmbedder,
    scope: Scope,
    memory_id: str,
    image: tuple[bytes, str],
) -> bool:
    """Embed one image memory's image and index it; False (logged) when that failed."""
    try:
        vector = (await embedder.embed_images([image]))[0]
        await index.upsert_vectors(IMAGE_LAYER, scope, [memory_id], vector[None, :])
    except (ImageEmbeddingError, VectorIndexError) as exc:
        log.warning("image %s not indexed for cross-modal recall: %s", memory_id, exc)
        return False
    return True


async def search_images(
    index: VectorIndex, embedder: ImageEmbedder, scope: Scope, query: str, *, k: int
) -> list[tuple[str, float]]:
    """Image memories of `scope` nearest to a text query: (memory id, cosine similarity)."""
    try:
        vector = (await embedder.embed_texts([query]))[0]
        return await index.query(scope, vector, k=k, layers=(IMAGE_LAYER,))
    except (ImageEmbeddingError, VectorIndexError) as exc:
        log.warning("cross-modal image search skipped: %s", exc)
        return []


__all__ = [
    "ImageEmbedder",
    "ImageEmbeddingError",
    "index_image",
    "search_images",
]
