"""Remember an image: screen its description like text, dedupe by perceptual hash, store.

An image memory is an episodic memory whose content is the image's description (so recall,
ranking, compose's citations, export and forget treat it like any memory) and whose provenance
carries the image's features. The perceptual hash and, when the keep setting allows, a
metadata-free thumbnail live in `memory_images`, deleted with the memory.

The description is untrusted: it goes through the gate's screen — secrets redacted, a
high-risk secret (a photographed card) or instruction-like text (a photographed "ignore previous
instructions" sign) refused — exactly as the same words typed would be.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from memory.gating.decision import GateDecision, GatePolicy
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules.decide import screen
from memory.multimodal.describe import ImageDescription
from memory.multimodal.image_embedding import ImageEmbedder, index_image
from memory.multimodal.image_input import CleanImage
from memory.storage.images import insert_image, nearest_image
from memory.storage.store import MemoryStore
from memory.types import Category, MemoryKind, NewMemory, Origin, Scope, Source

log = logging.getLogger(__name__)

ImageKeep = Literal["thumbnail", "none"]

# Perceptual-hash (64-bit pHash) distance at or below which an image counts as one already
# remembered. Chosen with `python -m bench.image_dedupe` on 60 generated scenes and 8
# near-duplicate variants each (rescaled, JPEG q35, brightness, contrast, 3% crop, blur, noise):
# every variant but the crop stays within 2-4 bits, crops reach 14; the closest two distinct
# scenes are 16 apart (1% of distinct pairs are <= 22). At 8, 1.7% of near-duplicates (crops)
# are missed and no distinct pair merges; a false merge would lose a memory, a miss only keeps
# a second copy, so the bound sits well below the distinct floor.
DEDUPE_MAX_DISTANCE = 8
_PHASH = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True, slots=True)
class ImageMemoryResult:
    """What happened to one image."""

    action: Literal["stored", "reinforced", "dropped", "no_consent"]
    memory_id: str | None
    reason: str
    content: str  # the redacted description as stored ("" when nothing was)
    features: Mapping[str, Any]
    decision: GateDecision  # the gate's view, as the text path records it


def memory_text(description: ImageDescription, redacted: str) -> str:
    """The memory's content: the (redacted) description, marked when no model described it."""
    if description.described:
        return f"Image: {redacted}"
    return f"Image (undescribed): {redacted}"


async def remember_image(
    store: MemoryStore,
    scope: Scope,
    image: CleanImage,
    description: ImageDescription,
    *,
    source: Source = Source.CHAT,
    provenance: Mapping[str, Any] | None = None,
    occurred_at: datetime | None = None,
    keep: ImageKeep = "thumbnail",
    policy: GatePolicy | None = None,
    privacy: PrivacyFilter | None = None,
    max_distance: int = DEDUPE_MAX_DISTANCE,
    embedder: ImageEmbedder | None = None,
) -> ImageMemoryResult:
    """Store `image` as a memory of `scope`, or reinforce the same image already stored.

    With an `embedder`, the image is also indexed for text-to-image search (`search_images`).
    """
    policy = policy or GatePolicy()
    privacy = privacy or PrivacyFilter()
    phash = image.features["phash"]
    if not _PHASH.match(phash):
        raise ValueError(f"perceptual hash must be 16 hex digits, got {phash!r}")
    features: dict[str, Any] = {**image.features, "name": privacy.clean(image.features["name"])}
    content, findings, verdict = screen(description.text, "user", policy, privacy)
    if verdict is not None and not verdict.keep:
        await _log_drop(store, scope, verdict.reason, description.text)
        return ImageMemoryResult("dropped", None, verdict.reason, "", features, verdict)
    low_trust = verdict is not None  # instruction-like text kept by policy, as a low-trust episode
    decision = verdict or GateDecision(
        keep=True,
        category=Category.FACT,
        kind=MemoryKind.EPISODIC,
        # A shared image is an event worth recalling, as a fact of medium weight.
        importance=0.5,
        confidence=0.7 if description.described else 0.5,
        origin=Origin.EXPLICIT,
        reason="image remembered",
        content=content,
        ttl_days=policy.ttl_for(Category.FACT),
        findings=findings,
    )
    if not await store.consent(scope):
        why = "no consent to store memories"
        return ImageMemoryResult("no_consent", None, why, "", features, decision)
    same = await nearest_image(store, scope, phash, max_distance)
    if same is not None:
        memory_id, distance = same
        why = f"same image sent again (perceptual hash distance {distance})"
        if await store.reinforce(scope, memory_id, reason=why) is not None:
            return ImageMemoryResult("reinforced", memory_id, why, "", features, decision)
    tags = ["image"]
    if not description.described:
        tags.append("undescribed")
    if findings:
        tags.append("pii-redacted")
    item = NewMemory(
        content=memory_text(description, content),
        kind=MemoryKind.EPISODIC,
        source=source,
        origin=decision.origin,
        category=Category.FACT,
        importance=decision.importance,
        confidence=decision.confidence,
        ttl_days=decision.ttl_days,
        occurred_at=occurred_at,
        provenance={
            **(provenance or {}),
            "trust": "low" if low_trust else "normal",
            "image": features,
            "description_source": description.source,
        },
        tags=tags,
    )
    record = await store.write(scope, item, reason="image remembered")
    thumbnail = image.thumbnail if keep == "thumbnail" else None
    await insert_image(
        store,
        scope,
        record.id,
        phash=phash,
        features=features,
        thumbnail=thumbnail,
        thumbnail_mime="image/jpeg" if thumbnail is not None else None,
    )
    if embedder is not None:  # cross-modal recall; a failure leaves the text path intact
        await index_image(store.index, embedder, scope, record.id, (image.data, image.mime_type))
    return ImageMemoryResult("stored", record.id, decision.reason, item.content, features, decision)


async def _log_drop(store: MemoryStore, scope: Scope, reason: str, raw: str) -> None:
    # Like the text gate: the audit log keeps why, and a hash to match a complaint, never the text.
    detail = {"category": "image", "digest": store.index.text_digest(raw)}
    await store.record_event(scope, None, "gate_drop", reason, detail)


__all__ = ["DEDUPE_MAX_DISTANCE", "ImageKeep", "ImageMemoryResult", "memory_text", "remember_image"]
