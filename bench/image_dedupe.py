"""Perceptual-hash distances of resent images versus distinct ones: the dedupe threshold's basis.

Generates `--scenes` pictures with Pillow (tests/support/images.py), makes each one's
near-duplicates (rescaled, recompressed, brightened, cropped, blurred, noised), hashes every
image through the same `clean_image` the agent uses, and prints the distance distribution of
near-duplicate pairs and of distinct pairs, then the false-merge and missed-duplicate rates for
each candidate threshold. Run: `uv run python -m bench.image_dedupe [--scenes 60]`.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter

from memory.multimodal.image_input import ImageLimits, clean_image, hash_distance
from tests.support.images import encode, scene, variants


def _hash(data: bytes) -> str:
    return clean_image(data, ImageLimits()).features["phash"]


def measure(scenes: int, seed_base: int) -> dict[str, object]:
    """Distances of near-duplicate pairs (per variant) and of distinct pairs."""
    originals: list[str] = []
    near: dict[str, list[int]] = {}
    for seed in range(seed_base, seed_base + scenes):
        img = scene(seed)
        original = _hash(encode(img, "PNG"))
        originals.append(original)
        for name, variant in variants(img, seed):
            fmt = "JPEG" if name.startswith("jpeg") else "PNG"
            near.setdefault(name, []).append(hash_distance(original, _hash(encode(variant, fmt))))
    distinct = [hash_distance(a, b) for a, b in itertools.combinations(originals, 2)]
    all_near = [d for ds in near.values() for d in ds]
    rates = {}
    for threshold in range(0, 21, 2):
        missed = sum(d > threshold for d in all_near) / len(all_near)
        merged = sum(d <= threshold for d in distinct) / len(distinct)
        rates[threshold] = {"missed_duplicates": round(missed, 4), "false_merges": round(merged, 5)}
    return {
        "scenes": scenes,
        "near_duplicate_pairs": len(all_near),
        "distinct_pairs": len(distinct),
        "near_max_per_variant": {k: max(v) for k, v in near.items()},
        "near_histogram": dict(sorted(Counter(all_near).items())),
        "distinct_min": min(distinct),
        "distinct_p1": sorted(distinct)[len(distinct) // 100],
        "distinct_histogram_low": dict(sorted(Counter(d for d in distinct if d <= 20).items())),
        "threshold_rates": rates,
    }


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenes", type=int, default=60)
    parser.add_argument("--seed-base", type=int, default=1000)
    args = parser.parse_args()
    print(json.dumps(measure(args.scenes, args.seed_base), indent=2))


if __name__ == "__main__":
    main()
