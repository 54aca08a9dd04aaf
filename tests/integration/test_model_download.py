"""The local embedding model is downloaded once, verified, atomically, from a URL that is a
setting; offline, corrupt and interrupted downloads fail clearly and leave nothing behind.

The archive is served by a real HTTP server on 127.0.0.1, built from the local model folder in
the layout of Chroma's `onnx.tar.gz`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memory.settings import DEFAULT_MODEL_SHA256, DEFAULT_MODEL_URL, Settings
from memory.storage.embedding import OnnxEmbedder, get_embedder
from memory.storage.model_fetch import ensure_model
from memory.storage.model_files import EmbeddingError, has_onnx_model
from tests.support.model_server import ModelServer, build_model_archive, serve_model_archive
from tests.support.ports import free_port


@pytest.fixture(scope="module")
def model_archive(
    tmp_path_factory: pytest.TempPathFactory, embedding_model_dir: Path
) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("archive") / "onnx.tar.gz"
    return out, build_model_archive(embedding_model_dir, out)


@pytest.fixture(scope="module")
def server(model_archive: tuple[Path, str]) -> Iterator[ModelServer]:
    with serve_model_archive(*model_archive) as srv:
        yield srv


def _leftovers(cache: Path) -> list[str]:
    # Anything but the lock file is a leftover of a failed download.
    return sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock"))


def test_downloads_once_and_embeds_like_the_local_copy(
    server: ModelServer, tmp_path: Path, embedding_model_dir: Path
) -> None:
    target = tmp_path / "cache" / "onnx_models" / "all-MiniLM-L6-v2"
    before = len(server.requests)
    ensure_model(target, f"{server.url}/onnx.tar.gz", server.sha256)
    assert has_onnx_model(target)
    assert sorted(p.name for p in (target / "onnx").iterdir()) == sorted(
        p.name for p in (embedding_model_dir / "onnx").iterdir()
    )
    ensure_model(target, f"{server.url}/onnx.tar.gz", server.sha256)  # present: no request
    assert len(server.requests) - before == 1
    assert _leftovers(target.parent) == ["all-MiniLM-L6-v2"]
    texts = ["I prefer tea over coffee", "的 deadline is Friday", ""]
    got = OnnxEmbedder(target).embed(texts)
    want = OnnxEmbedder(embedding_model_dir).embed(texts)
    assert np.allclose(got, want, atol=1e-6)


def test_settings_name_the_source_and_the_store_downloads_through_them(
    server: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "m" / "all-MiniLM-L6-v2"
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL_DIR", str(target))
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL_URL", f"{server.url}/onnx.tar.gz")
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL_SHA256", server.sha256)
    settings = Settings.from_env()
    embedder = get_embedder(
        settings.embedding_model,
        settings.embedding_model_dir,
        download_url=settings.embedding_model_url,
        sha256=settings.embedding_model_sha256,
    )
    assert embedder.embed(["hello"]).shape == (1, 384)
    assert has_onnx_model(target)


def test_defaults_are_chromas_archive_and_off_switches_it_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMORY_EMBEDDING_MODEL_URL", raising=False)
    monkeypatch.delenv("MEMORY_EMBEDDING_MODEL_SHA256", raising=False)
    s = Settings.from_env()
    assert s.embedding_model_url == DEFAULT_MODEL_URL
    assert s.embedding_model_sha256 == DEFAULT_MODEL_SHA256
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    # The same files as Chroma's default embedding function, hence the same vectors.
    assert DEFAULT_MODEL_URL == ONNXMiniLM_L6_V2.MODEL_DOWNLOAD_URL
    assert DEFAULT_MODEL_SHA256 == ONNXMiniLM_L6_V2._MODEL_SHA256
    for off in ("off", "OFF", "none", "0", "false"):
        monkeypatch.setenv("MEMORY_EMBEDDING_MODEL_URL", off)
        assert Settings.from_env().embedding_model_url is None


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/corrupt.tar.gz", "corrupt"),
        ("/truncated.tar.gz", "interrupted"),
        ("/missing.tar.gz", "HTTP 404"),
    ],
)
def test_bad_downloads_fail_clearly_and_leave_nothing(
    server: ModelServer, tmp_path: Path, path: str, words: str
) -> None:
    target = tmp_path / "cache" / "all-MiniLM-L6-v2"
    with pytest.raises(EmbeddingError) as info:
        ensure_model(target, f"{server.url}{path}", server.sha256)
    message = str(info.value)
    assert words in message
    assert "MEMORY_EMBEDDING_MODEL_DIR" in message and "MEMORY_EMBEDDING_MODEL_URL" in message
    assert not has_onnx_model(target)
    assert _leftovers(target.parent) == []
    # A later good download still works (nothing half-written blocks it).
    ensure_model(target, f"{server.url}/onnx.tar.gz", server.sha256)
    assert has_onnx_model(target)


def test_a_wrong_checksum_setting_refuses_the_archive(server: ModelServer, tmp_path: Path) -> None:
    target = tmp_path / "all-MiniLM-L6-v2"
    with pytest.raises(EmbeddingError, match="SHA-256"):
        ensure_model(target, f"{server.url}/onnx.tar.gz", "0" * 64)
    assert not target.exists() or not has_onnx_model(target)


def test_offline_names_both_ways(tmp_path: Path) -> None:
    target = tmp_path / "all-MiniLM-L6-v2"
    closed = f"http://127.0.0.1:{free_port()}/onnx.tar.gz"  # nobody listens there
    with pytest.raises(EmbeddingError) as info:
        ensure_model(target, closed, DEFAULT_MODEL_SHA256)
    message = str(info.value)
    assert "MEMORY_EMBEDDING_MODEL_DIR" in message and "MEMORY_EMBEDDING_MODEL_URL" in message
    assert "download" in message
    with pytest.raises(EmbeddingError, match="switched off"):
        ensure_model(target, None, DEFAULT_MODEL_SHA256)
    with pytest.raises(EmbeddingError, match="MEMORY_EMBEDDING_MODEL_DIR"):
        get_embedder("local:all-MiniLM-L6-v2", target)


def test_an_archive_with_unsafe_paths_is_refused(server: ModelServer, tmp_path: Path) -> None:
    import hashlib
    import io
    import tarfile

    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        data = b"x"
        info = tarfile.TarInfo("../escaped.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    sha = hashlib.sha256(evil.read_bytes()).hexdigest()
    with serve_model_archive(evil, sha) as srv:
        target = tmp_path / "x" / "all-MiniLM-L6-v2"
        with pytest.raises(EmbeddingError, match="unpacked"):
            ensure_model(target, f"{srv.url}/onnx.tar.gz", sha)
    assert not (tmp_path / "x" / "escaped.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()
    shutil.rmtree(tmp_path / "x")


def _evil_archive(path: Path, kind: str) -> str:
    import hashlib
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        data = b"x"
        if kind == "dotdot":
            info = tarfile.TarInfo("onnx/../../escaped.txt")
        elif kind == "absolute":
            info = tarfile.TarInfo(str(path.parent / "escaped.txt"))
        else:
            info = tarfile.TarInfo("onnx/model.onnx")
            info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.CHRTYPE
            info.linkname = "/etc/passwd"
        info.size = len(data) if info.isfile() else 0
        tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def python_3_11_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """tarfile as Python 3.11.0-3.11.3 have it: no `data_filter`, no `filter` argument."""
    import tarfile

    original = tarfile.TarFile.extractall

    def extractall(
        self: tarfile.TarFile, path: str | Path = ".", members: object = None, *,
        numeric_owner: bool = False,
    ) -> None:  # fmt: skip
        original(self, path, members, numeric_owner=numeric_owner)  # type: ignore[arg-type]

    monkeypatch.delattr(tarfile, "data_filter")
    monkeypatch.setattr(tarfile.TarFile, "extractall", extractall)


@pytest.mark.usefixtures("python_3_11_2")
def test_without_tarfiles_data_filter_the_model_still_installs(
    server: ModelServer, tmp_path: Path, embedding_model_dir: Path
) -> None:
    target = tmp_path / "old-python" / "all-MiniLM-L6-v2"
    ensure_model(target, f"{server.url}/onnx.tar.gz", server.sha256)
    got = OnnxEmbedder(target).embed(["I prefer tea over coffee"])
    want = OnnxEmbedder(embedding_model_dir).embed(["I prefer tea over coffee"])
    assert np.allclose(got, want, atol=1e-6)


@pytest.mark.usefixtures("python_3_11_2")
@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "device"])
def test_without_tarfiles_data_filter_unsafe_members_are_refused(tmp_path: Path, kind: str) -> None:
    evil = tmp_path / "pkg" / "evil.tar.gz"
    evil.parent.mkdir()
    sha = _evil_archive(evil, kind)
    with serve_model_archive(evil, sha) as srv:
        target = tmp_path / "x" / "all-MiniLM-L6-v2"
        with pytest.raises(EmbeddingError, match="unpacked"):
            ensure_model(target, f"{srv.url}/onnx.tar.gz", sha)
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not (target / "onnx").exists()
