"""A strict little parser of the Prometheus text exposition format, for tests."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
HELP = re.compile(rf"^# HELP ({_NAME}) (.*)$")
TYPE = re.compile(rf"^# TYPE ({_NAME}) (counter|gauge|histogram|summary|untyped)$")
SAMPLE = re.compile(rf"^({_NAME})(?:\{{({_LABEL}(?:,{_LABEL})*)?\}})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
_HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass
class Family:
    name: str
    type: str = ""
    help: str = ""
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)

    def value(self, **labels: str) -> float:
        found = [v for n, lab, v in self.samples if n == self.name and lab == labels]
        assert len(found) == 1, (self.name, labels, self.samples)
        return found[0]


def _value(text: str) -> float:
    if text in ("+Inf", "-Inf", "NaN"):
        return {"+Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}[text]
    return float(text)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def _family_of(name: str, families: dict[str, Family]) -> Family:
    if name in families:
        return families[name]
    for suffix in _HISTOGRAM_SUFFIXES:
        base = name.removesuffix(suffix)
        if base != name and families.get(base, Family("")).type == "histogram":
            return families[base]
    raise ValueError(f"sample {name} has no TYPE line before it")


def _check_histogram(family: Family) -> None:
    buckets = [
        (float(_value(lab["le"])), v) for n, lab, v in family.samples if n.endswith("_bucket")
    ]
    assert buckets and buckets[-1][0] == math.inf, f"{family.name}: no +Inf bucket"
    assert [b for b, _ in buckets] == sorted(b for b, _ in buckets), f"{family.name}: le order"
    counts = [c for _, c in buckets]
    assert counts == sorted(counts), f"{family.name}: buckets are not cumulative"
    total = [v for n, _, v in family.samples if n == f"{family.name}_count"]
    assert total == [counts[-1]], f"{family.name}: _count differs from the +Inf bucket"
    assert any(n == f"{family.name}_sum" for n, _, _ in family.samples), f"{family.name}: _sum"


def parse_prometheus(text: str) -> dict[str, Family]:
    """Parse and validate; raises on any line that is not HELP, TYPE, a sample or blank."""
    assert text.endswith("\n"), "the exposition must end with a newline"
    families: dict[str, Family] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        if m := HELP.match(line):
            family = families.setdefault(m.group(1), Family(m.group(1)))
            assert not family.help and not family.samples, f"line {number}: late or second HELP"
            family.help = m.group(2)
        elif m := TYPE.match(line):
            family = families.setdefault(m.group(1), Family(m.group(1)))
            assert not family.type and not family.samples, f"line {number}: late or second TYPE"
            family.type = m.group(2)
        elif m := SAMPLE.match(line):
            labels = {k: _unescape(v) for k, v in LABEL.findall(m.group(2) or "")}
            _family_of(m.group(1), families).samples.append(
                (m.group(1), labels, _value(m.group(3)))
            )
        else:
            raise ValueError(f"line {number} is not valid exposition text: {line!r}")
    for family in families.values():
        assert family.type and family.help, f"{family.name}: HELP and TYPE are required"
        if family.type == "histogram":
            _check_histogram(family)
    return families
