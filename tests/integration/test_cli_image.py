"""`memory-agent remember --image` as a user runs it: a subprocess on real Postgres + Chroma."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.integration.test_cli import _cli
from tests.support.images import encode, jpeg_with_gps, scene


@pytest.fixture
def env(pg_db_url: str, tmp_data_dir: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": pg_db_url, "MEMORY_DATA_DIR": str(tmp_data_dir)}


def test_remember_an_image_recall_why_export_and_forget(
    env: dict[str, str], tmp_path: Path
) -> None:
    photo = tmp_path / "IMG_2041.jpg"
    photo.write_bytes(jpeg_with_gps(scene(41)))
    user = ("--user", "cli-img")
    out = _cli(env, "remember", "--image", str(photo), "--caption", "Our new sofa, teal velvet.",
               *user, "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    stored = json.loads(out.stdout)
    assert stored["action"] == "stored" and stored["described_by"] == "user_text"
    assert stored["content"] == "Image (undescribed): Our new sofa, teal velvet."
    assert stored["image"]["captured_at"] == "2024-05-17T09:30:00+00:00"

    again = tmp_path / "sofa.png"
    again.write_bytes(encode(scene(41), "PNG"))
    out = _cli(env, "remember", "--image", str(again), *user, "--json")
    assert json.loads(out.stdout)["action"] == "reinforced", out.stdout

    out = _cli(env, "recall", "what colour is the sofa?", *user, "--explain")
    assert "teal velvet" in out.stdout
    assert "image: JPEG 320x240" in out.stdout and "file IMG_2041.jpg" in out.stdout

    out = _cli(env, "why", stored["memory_id"], *user)
    assert "image: JPEG 320x240" in out.stdout and "update: same image sent again" in out.stdout

    exported = json.loads(_cli(env, "export", *user).stdout)
    assert exported["images"][0]["memory_id"] == stored["memory_id"]

    out = _cli(env, "forget", "--memory", stored["memory_id"], *user, "--yes", "--json")
    assert out.returncode == 0, out.stderr
    receipt = json.loads(out.stdout)
    assert receipt["memories"] == 1 and receipt["images"] == 1


def test_an_oversize_image_is_refused_with_a_clear_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(encode(scene(42, size=(640, 480)), "PNG"))
    out = _cli({**env, "MEMORY_IMAGE_MAX_BYTES": "1000"}, "remember", "--image", str(big),
               "--user", "cli-img")  # fmt: skip
    assert out.returncode == 2 and "the limit is 1,000 bytes" in out.stderr
