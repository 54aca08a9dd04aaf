"""Obtaining the local embedding model once, verified by checksum, into the user's cache.

The source is the archive Chroma's default embedding function downloads, with its SHA-256.
The archive holds `onnx/` with all-MiniLM-L6-v2 as ONNX plus its tokenizer, so the vectors are
the very ones Chroma's own function computes. The download goes to a temporary file beside the
target, is checked against the checksum, unpacked into a temporary folder and moved into place
with one rename: an interrupted or corrupt download never leaves a half-written model, and a
file lock keeps two processes from downloading it twice.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from memory.storage.model_files import has_onnx_model, missing_model_error

log = logging.getLogger(__name__)

_CHUNK = 1 << 16
# Connecting may take a while on a slow link; a stalled transfer fails after a minute.
_TIMEOUT_S = 60.0


def ensure_model(model_dir: Path, url: str | None, sha256: str) -> Path:
    """Return `model_dir`, downloading the model into it first when it is not there.

    `url` None (downloads switched off) raises a clear error when the model is missing.
    Blocking: call it from a worker thread in async code.
    """
    if has_onnx_model(model_dir):
        return model_dir
    if not url:
        raise missing_model_error(model_dir, "downloading is switched off")
    from filelock import FileLock

    model_dir.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(model_dir.parent / f".{model_dir.name}.lock")):
        if has_onnx_model(model_dir):  # another process finished it while we waited
            return model_dir
        archive = _download(url, sha256, model_dir)
        try:
            _install(archive, model_dir)
        finally:
            archive.unlink(missing_ok=True)
    log.info("embedding model installed in %s", model_dir)
    return model_dir


def _download(url: str, sha256: str, model_dir: Path) -> Path:
    import httpx
    from tqdm import tqdm

    fd, name = tempfile.mkstemp(prefix=f".{model_dir.name}-", suffix=".tar.gz.part",
                                dir=model_dir.parent)  # fmt: skip
    part = Path(name)
    digest = hashlib.sha256()
    received = 0
    log.warning("downloading the embedding model (about 80 MB, once) from %s", url)
    try:
        with (
            os.fdopen(fd, "wb") as out,
            httpx.stream("GET", url, timeout=_TIMEOUT_S, follow_redirects=True) as response,
        ):
            if response.status_code != 200:
                raise missing_model_error(
                    model_dir, f"downloading {url} answered HTTP {response.status_code}"
                )
            length = response.headers.get("content-length")
            total = int(length) if length and length.isdigit() else None
            with tqdm(total=total, unit="B", unit_scale=True, desc="embedding model",
                      file=sys.stderr, disable=None) as bar:  # fmt: skip
                for chunk in response.iter_raw(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
            if total is not None and received != total:
                raise missing_model_error(
                    model_dir,
                    f"the download from {url} was interrupted ({received} of {total} bytes)",
                )
    except httpx.HTTPError as exc:
        part.unlink(missing_ok=True)
        raise missing_model_error(
            model_dir,
            f"the download from {url} failed or was interrupted ({type(exc).__name__}: {exc})",
        ) from exc
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    if digest.hexdigest() != sha256.strip().lower():
        part.unlink(missing_ok=True)
        raise missing_model_error(
            model_dir,
            f"the file downloaded from {url} is corrupt or not the expected archive (SHA-256 "
            f"{digest.hexdigest()}, expected {sha256}); it was deleted",
        )
    return part


def _extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Unpack `tar` into `dest`, refusing anything but plain files and folders inside it.

    Python 3.11.4+ has tarfile's "data" filter (absolute paths, links out of the folder and
    device files refused); 3.11.0-3.11.3, which `requires-python` allows (Debian 12 ships
    3.11.2), do not, and there the members are checked and copied here instead.
    """
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for member in tar.getmembers():
        target = (root / member.name).resolve()
        inside = target == root or root in target.parents
        if not inside or os.path.isabs(member.name) or not (member.isfile() or member.isdir()):
            raise tarfile.TarError(f"unsafe member {member.name!r} in the archive")
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(member)
        if source is None:
            raise tarfile.TarError(f"unreadable member {member.name!r} in the archive")
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)


def _install(archive: Path, model_dir: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{model_dir.name}-", dir=model_dir.parent))
    try:
        try:
            with tarfile.open(archive, "r:gz") as tar:
                _extract(tar, staging)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise missing_model_error(
                model_dir, f"the downloaded archive cannot be unpacked ({exc})"
            ) from exc
        source = staging / "onnx"
        if not has_onnx_model(staging):
            raise missing_model_error(
                model_dir, "the downloaded archive holds no onnx/model.onnx and onnx/tokenizer.json"
            )
        model_dir.mkdir(parents=True, exist_ok=True)
        target = model_dir / "onnx"
        if target.exists():  # a broken earlier copy: the lock says no one else is writing it
            shutil.rmtree(target)
        os.replace(source, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
