"""The measured cosine scales in Postgres: one row per embedding model and reference version."""

from __future__ import annotations

import asyncio
import json
import logging

from memory.storage.calibration import (
    CosineScale,
    held_scale,
    measure,
    reference_set,
    remember_scale,
)
from memory.storage.db import Database
from memory.storage.embedding import Embedder

log = logging.getLogger(__name__)


async def load_scale(pool: Database, model: str) -> CosineScale | None:
    """The stored scale of `model` at the current reference version, if measured."""
    version = reference_set().version
    async with pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT model_quantiles, reference_quantiles, separation, background,"
            " background_quantiles, measured_at"
            " FROM embedding_calibrations WHERE model = $1 AND version = $2",
            model,
            version,
        )
    if row is None:
        return None
    separation, background, quantiles = (
        json.loads(v) if isinstance(v, str) else dict(v)
        for v in (row["separation"], row["background"], row["background_quantiles"])
    )
    return CosineScale(
        model=model,
        version=version,
        model_quantiles=tuple(row["model_quantiles"]),
        reference_quantiles=tuple(row["reference_quantiles"]),
        measured_at=row["measured_at"],
        separation=separation,
        background={str(k): (float(m), float(sd)) for k, (m, sd) in background.items()},
        background_quantiles={
            str(k): tuple(float(x) for x in values) for k, values in quantiles.items()
        },
    )


async def save_scale(pool: Database, scale: CosineScale) -> None:
    """Store a measured scale (the first one measured for a model and version stays)."""
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO embedding_calibrations (model, version, model_quantiles,"
            " reference_quantiles, separation, background, background_quantiles, measured_at)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (model, version) DO NOTHING",
            scale.model,
            scale.version,
            list(scale.model_quantiles),
            list(scale.reference_quantiles),
            json.dumps(scale.separation),
            json.dumps(scale.background),
            json.dumps(scale.background_quantiles),
            scale.measured_at,
        )


async def ensure_scale(pool: Database, embedder: Embedder) -> CosineScale:
    """The embedder's scale: held in this process, stored in Postgres, or measured and stored.

    The reference model needs neither (its map is the identity). Another model's first opening
    embeds the ~300 reference texts once; every later process reads the row.
    """
    held = held_scale(embedder.name)
    if held is not None:
        return held
    scale = await load_scale(pool, embedder.name)
    if scale is None:
        log.info("measuring the cosine scale of embedding model %s", embedder.name)
        scale = await asyncio.to_thread(measure, embedder)
        await save_scale(pool, scale)
        scale = await load_scale(pool, embedder.name) or scale  # another process may have won
    remember_scale(scale)
    return scale
