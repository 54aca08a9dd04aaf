"""Redaction: recall and precision on the project's labelled PII corpus.

    python -m bench.redaction [--split heldout|dev|all] [--show]

Reads `tests/data/pii_corpus.jsonl` (texts with the secrets they carry, and negatives that carry
none) and reports, per part: recall (texts whose every secret is gone after redaction) and
precision (of the texts the filter changed, those that did carry a secret), so a pattern that
widens recall by redacting ordinary text shows up as lost precision.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memory.gating.privacy import PrivacyFilter

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "pii_corpus.jsonl"


def report(split: str, show: bool) -> None:
    """Print recall and precision for one part of the corpus (or all of it)."""
    items = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]
    if split != "all":
        items = [i for i in items if (i.get("split") or "dev") == split]
    privacy = PrivacyFilter()
    found = missed = false_alarms = negatives = 0
    for item in items:
        text = privacy.clean(item["text"])
        if item["secrets"]:
            ok = all(s not in text for s in item["secrets"])
            found, missed = found + ok, missed + (not ok)
            if not ok and show:
                print(f"  missed: {item['text']!r} -> {text!r}")
        else:
            negatives += 1
            if text != item["text"]:
                false_alarms += 1
                if show:
                    print(f"  false positive: {item['text']!r} -> {text!r}")
    positives = found + missed
    precision = found / max(found + false_alarms, 1)
    recall = found / max(positives, 1)
    print(
        f"{split}: {positives} with secrets, {negatives} without; recall {recall:.1%}"
        f" ({found}/{positives}), precision {precision:.1%} ({false_alarms} negatives changed)"
    )


def main() -> None:
    """Parse the arguments and report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["heldout", "dev", "all"], default="heldout")
    parser.add_argument("--show", action="store_true", help="print each miss and false positive")
    args = parser.parse_args()
    report(args.split, args.show)


if __name__ == "__main__":
    main()
