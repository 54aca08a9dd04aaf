"""Multimodal memory: images read safely, described, deduplicated and remembered as text."""

from memory.multimodal.describe import ImageDescription, describe_image
from memory.multimodal.image_embedding import ImageEmbedder, search_images
from memory.multimodal.image_fetch import fetch_image
from memory.multimodal.image_input import (
    CleanImage,
    ImageFeatures,
    ImageInputError,
    ImageLimits,
    RawImage,
    clean_image,
    clean_image_held,
    find_images,
    image_block,
    read_images,
    replace_images,
    text_parts,
)
from memory.multimodal.image_memory import (
    DEDUPE_MAX_DISTANCE,
    ImageKeep,
    ImageMemoryResult,
    remember_image,
)

__all__ = [
    "DEDUPE_MAX_DISTANCE",
    "CleanImage",
    "ImageDescription",
    "ImageEmbedder",
    "ImageFeatures",
    "ImageInputError",
    "ImageKeep",
    "ImageLimits",
    "ImageMemoryResult",
    "RawImage",
    "clean_image",
    "clean_image_held",
    "describe_image",
    "fetch_image",
    "find_images",
    "image_block",
    "read_images",
    "remember_image",
    "replace_images",
    "search_images",
    "text_parts",
]
