"""Infrastructure settings, read from the environment in one place.

Per-run behaviour (model, weights, budgets) lives in `agent.context.Context`; this module only
knows where things are. Every variable read here is listed in `.env.example`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# Privacy by default: nothing phones home unless the user turns it on.
_PRIVACY_DEFAULTS = {
    "ANONYMIZED_TELEMETRY": "False",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "LANGSMITH_TRACING": "false",
    "HF_HUB_OFFLINE": "1",
}


def apply_privacy_defaults() -> None:
    """Switch off telemetry for this process unless the user chose otherwise."""
    for key, value in _PRIVACY_DEFAULTS.items():
        os.environ.setdefault(key, value)


def _default_model_dir() -> Path:
    # Chroma's own download location: a model Chroma already fetched is reused, and ours is
    # downloaded there (same files) when it is missing.
    return Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2"


class SettingsError(ValueError):
    """A setting (an environment variable) has a value the code cannot use; says which."""


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


# The archive Chroma's default embedding function downloads (the same ONNX files, so the same
# vectors) and the SHA-256 it verifies (chromadb 1.x, ONNXMiniLM_L6_V2).
DEFAULT_MODEL_URL = "https://chroma-onnx-models.s3.amazonaws.com/all-MiniLM-L6-v2/onnx.tar.gz"
DEFAULT_MODEL_SHA256 = "913d7300ceae3b2dbc2c50d1de4baacab4be7b9380491c27fab7418616a16ec3"
_NO_DOWNLOAD = ("off", "none", "0", "false", "no")


def _server_pg_url(name: str) -> str | None:
    # The names the LangGraph server documents for its database. `langgraph dev` sets
    # DATABASE_URI=":memory:" for its in-memory runtime: only a PostgreSQL URL counts.
    value = _env(name)
    if value and value.lower().startswith(("postgresql://", "postgres://")):
        return value
    return None


def _url_env(name: str, schemes: tuple[str, ...], example: str) -> str | None:
    """A URL setting with one of `schemes`; the value is never echoed (it may hold a password)."""
    value = _env(name)
    if value is not None and not value.lower().startswith(tuple(f"{s}://" for s in schemes)):
        wanted = " or ".join(f"{s}://" for s in schemes)
        raise SettingsError(f"{name} must be a URL starting with {wanted} (e.g. {example})")
    return value


def _download_url() -> str | None:
    value = _env("MEMORY_EMBEDDING_MODEL_URL")
    if value is None:
        return DEFAULT_MODEL_URL
    return None if value.lower() in _NO_DOWNLOAD else value


def _int_env(name: str, default: int, *, maximum: int | None = None) -> int:
    value = _env(name)
    if value is None:
        return default
    wanted = "a positive integer" if maximum is None else f"an integer from 1 to {maximum:,}"
    try:
        number = int(value.replace("_", ""))
    except ValueError as exc:
        raise SettingsError(f"{name} must be {wanted}, got {value!r}") from exc
    if number <= 0 or (maximum is not None and number > maximum):
        raise SettingsError(f"{name} must be {wanted}, got {value!r}")
    return number


# Upper bounds of settings that reach Postgres or Chroma as numbers. Past them a value is a
# mistake, not a choice: every L2 recall reads and indexes its candidates (~36 us each to index,
# so 10,000 is already ~0.4 s of a turn), and a budget past Postgres's 32-bit integers made every
# such recall fail with a DataError instead of refusing the setting at start-up. Shards are
# collections per layer (each user's entries live in one), recorded in a 32-bit column.
MAX_L2_CANDIDATES = 10_000
MAX_CHROMA_SHARDS = 1_024


def _bool_env(name: str, default: bool) -> bool:
    value = _env(name)
    if value is None:
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be 1 or 0 (true/false, yes/no, on/off), got {value!r}")


def _share_env(name: str, default: float) -> float:
    value = _env(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError as exc:
        raise SettingsError(f"{name} must be a number in (0, 1], got {value!r}") from exc
    if not 0.0 < number <= 1.0:
        raise SettingsError(f"{name} must be a number in (0, 1], got {value!r}")
    return number


def _choice_env(name: str, choices: tuple[str, ...]) -> str:
    value = (_env(name) or choices[0]).lower()
    if value not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the stores and models are. Empty URLs mean the embedded defaults."""

    database_url: str | None = None
    chroma_url: str | None = None
    data_dir: Path = field(default_factory=lambda: Path(".data"))
    embedding_model: str = "local:all-MiniLM-L6-v2"
    embedding_model_dir: Path = field(default_factory=_default_model_dir)
    # Where a missing local model is downloaded from (None: never download) and its checksum.
    embedding_model_url: str | None = DEFAULT_MODEL_URL
    embedding_model_sha256: str = DEFAULT_MODEL_SHA256
    chroma_prefix: str = "lma"
    # Collections per Chroma text layer, a user's entries in the one their id hashes to (see
    # `memory.storage.vector`); 1 is one collection per layer. Measured at 100,000 vectors of
    # 1,000 users: 16 shards answer a user's top 200 in p50 64 ms against 212 ms for one
    # collection, and ingest 3.3x faster, at the same memory. A change moves the index at the
    # next start (`memory-agent reindex --rebuild` does it by hand).
    chroma_shards: int = 16
    default_tenant: str = "default"
    # The persist directory of a Chroma server on this host (`chroma run --path`): lets deletion
    # purge the deleted texts from the server's write-ahead log too (embedded Chroma: automatic).
    chroma_server_path: Path | None = None
    # Protects the server, so it is the operator's setting, never a run's: 64,000 characters is
    # ~16k tokens of English, beyond which an input is a document rather than a turn.
    max_input_chars: int = 64_000
    # The in-process recall cache (L1): a byte budget per process, measured over each entry's
    # vectors, lexical index and records. 512 MiB holds ~32,000 memories at the ~16.7 KB each
    # measured for short conversational memories: a small share of a 24 GB machine running
    # several workers. A user whose memories would take more than `recall_cache_user_share` of
    # it, or more than `recall_cache_user_max` memories, is never loaded whole: Chroma and
    # Postgres (L2) answer for them.
    recall_cache_bytes: int = 512 * 1024 * 1024
    recall_cache_user_share: float = 0.25
    recall_cache_user_max: int = 20_000
    # L2's candidates per leg (Chroma's nearest, Postgres's lexical matches, rows Chroma has
    # not indexed yet) before the common ranking; 4 x the top-k an agent injects, times 25.
    recall_l2_candidates: int = 200
    # Of those, the lexical leg's word matches for a user above that budget: half the dense
    # leg's. Each costs ~35 us to index for the query, and the fused top 8 hardly need the
    # weaker matches: for `bench.big_user --corpus sentences` (200,000 memories) 100 against
    # 200 gave p50 / p95 32.3 / 41.9 ms against 35.6 / 43.8, and 0.897 against 0.892 of a
    # 400-candidate ranking's top 8; the 900-memory development history through L2 kept R@5 /
    # R@10 of 74.4 / 81.9 against 73.4 / 81.0.
    recall_l2_lexical_candidates: int = 100
    # Whether a write returns before Chroma has indexed it (a queue upserts it in batches, see
    # `memory.storage.indexer`): the ~40 ms upsert leaves the turn, and nothing is lost (rows
    # are recalled from Postgres until indexed; a crash leaves them to the start-up catch-up).
    # Off for stores built in code (tools, tests that inspect Chroma right after a write); on
    # for processes configured from the environment unless MEMORY_INDEX_IN_BACKGROUND=0.
    index_in_background: bool = False
    # How long the queue waits after the first write before upserting, so concurrent turns
    # share one Chroma call.
    index_linger_ms: int = 20
    # Set by the LangGraph server: "local_dev" under `langgraph dev`, something else when deployed.
    server_variant: str | None = None

    # Images in messages: the largest accepted (bytes as sent, pixels as decoded), what an image
    # memory keeps of the bytes ("thumbnail": a metadata-free JPEG of at most 256 px a side;
    # "none": only the description and features), and whether remote image URLs are fetched.
    image_max_bytes: int = 10 * 1024 * 1024
    image_max_pixels: int = 50_000_000
    image_keep: str = "thumbnail"
    image_fetch_urls: bool = False
    # An OpenAI-compatible multimodal embeddings endpoint for cross-modal recall (optional).
    image_embedding_url: str | None = None
    image_embedding_model: str | None = None
    image_embedding_api_key: str | None = None

    @property
    def embedded_allowed(self) -> bool:
        """Whether a missing database URL may start the embedded PostgreSQL.

        Deployed (a server variant other than local_dev), each worker would start its own empty
        database in its container and lose it on restart: that must be an error instead.
        """
        return self.server_variant in (None, "local_dev")

    @classmethod
    def from_env(cls) -> Settings:
        """Read the settings from `MEMORY_*`, `DATABASE_URL` and `CHROMA_URL`."""
        data_dir = Path(_env("MEMORY_DATA_DIR") or ".data")
        return cls(
            database_url=_url_env(
                "DATABASE_URL", ("postgresql", "postgres"), "postgresql://user:pw@localhost:5432/db"
            )
            or _server_pg_url("DATABASE_URI")
            or _server_pg_url("POSTGRES_URI"),
            server_variant=_env("LANGSMITH_LANGGRAPH_API_VARIANT"),
            chroma_url=_url_env("CHROMA_URL", ("http", "https"), "http://localhost:8000"),
            data_dir=data_dir,
            embedding_model=_env("MEMORY_EMBEDDING_MODEL") or "local:all-MiniLM-L6-v2",
            embedding_model_dir=Path(_env("MEMORY_EMBEDDING_MODEL_DIR") or _default_model_dir()),
            embedding_model_url=_download_url(),
            embedding_model_sha256=_env("MEMORY_EMBEDDING_MODEL_SHA256") or DEFAULT_MODEL_SHA256,
            chroma_prefix=_env("MEMORY_CHROMA_PREFIX") or "lma",
            chroma_shards=_int_env("MEMORY_CHROMA_SHARDS", 16, maximum=MAX_CHROMA_SHARDS),
            default_tenant=_env("MEMORY_DEFAULT_TENANT") or "default",
            chroma_server_path=Path(p) if (p := _env("MEMORY_CHROMA_SERVER_PATH")) else None,
            image_max_bytes=_int_env("MEMORY_IMAGE_MAX_BYTES", 10 * 1024 * 1024),
            image_max_pixels=_int_env("MEMORY_IMAGE_MAX_PIXELS", 50_000_000),
            image_keep=_choice_env("MEMORY_IMAGE_KEEP", ("thumbnail", "none")),
            image_embedding_url=_env("MEMORY_IMAGE_EMBEDDING_URL"),
            image_embedding_model=_env("MEMORY_IMAGE_EMBEDDING_MODEL"),
            image_embedding_api_key=_env("MEMORY_IMAGE_EMBEDDING_API_KEY"),
            image_fetch_urls=_bool_env("MEMORY_IMAGE_FETCH_URLS", False),
            max_input_chars=_int_env("MEMORY_MAX_INPUT_CHARS", 64_000),
            recall_cache_bytes=_int_env("MEMORY_RECALL_CACHE_BYTES", 512 * 1024 * 1024),
            recall_cache_user_share=_share_env("MEMORY_RECALL_CACHE_USER_SHARE", 0.25),
            recall_cache_user_max=_int_env("MEMORY_RECALL_CACHE_USER_MAX", 20_000),
            recall_l2_candidates=_int_env(
                "MEMORY_RECALL_L2_CANDIDATES", 200, maximum=MAX_L2_CANDIDATES
            ),
            recall_l2_lexical_candidates=_int_env(
                "MEMORY_RECALL_L2_LEXICAL_CANDIDATES", 100, maximum=MAX_L2_CANDIDATES
            ),
            index_in_background=_bool_env("MEMORY_INDEX_IN_BACKGROUND", True),
            index_linger_ms=_int_env("MEMORY_INDEX_LINGER_MS", 20),
        )


_OFF = ("0", "off", "none", "false", "no")


def _limit_env(name: str, default: int | None) -> int | None:
    """A positive limit, or None when the operator switched it off (`0` or `off`)."""
    value = _env(name)
    if value is not None and value.lower() in _OFF:
        return None
    if value is None:
        return default
    return _int_env(name, default or 1)


@dataclass(frozen=True, slots=True)
class ServiceLimits:
    """Per-user rate limits and quotas of a hosted server; None switches one off.

    Protects the operator's machines and bills, so it is the operator's setting and never a
    run's. Rates are per (tenant, user) per minute, shared by every worker through Postgres;
    quotas count what Postgres holds. The defaults are far above what one person chatting
    does (a turn takes seconds) and far below what a script can send (the issue's 2,279
    threads in 16 s).
    """

    runs_per_minute: int | None = 30
    threads_per_minute: int | None = 20
    writes_per_minute: int | None = 60
    # Store searches, memory searches and the MCP `recall` tool: each ranks the user's memories
    # (CPU in the server process), so a script looping on them slows every user's requests.
    searches_per_minute: int | None = 120
    max_threads: int | None = 1_000
    max_memories: int | None = 10_000
    # Text of a user's kept memories plus image thumbnails: 10,000 memories of ~1 kB each,
    # plus room for a few thousand ~10 kB thumbnails.
    max_bytes: int | None = 64 * 1024 * 1024
    # Decoded pixels of images being read at once in one server process, and by one user: a
    # 49-megapixel PNG costs ~150 MB per copy of its pixels and decoding holds several copies.
    image_pixels_in_flight: int = 100_000_000
    image_pixels_in_flight_per_user: int = 50_000_000

    @staticmethod
    def serves_users() -> bool:
        """True in a process that verifies users' tokens (`MEMORY_AUTH_SECRET` set).

        The memory quotas of the write path hold only there: the local CLI and open mode are
        the operator's own, and a long-lived single user past 10,000 memories must not find
        every new memory dropped.
        """
        return bool(os.environ.get("MEMORY_AUTH_SECRET", "").strip())

    @classmethod
    def from_env(cls) -> ServiceLimits:
        """Read `MEMORY_RATE_LIMIT_*`, `MEMORY_QUOTA_*` and `MEMORY_MAX_IMAGE_PIXELS_IN_FLIGHT*`."""
        d = cls()
        return cls(
            runs_per_minute=_limit_env("MEMORY_RATE_LIMIT_RUNS_PER_MINUTE", d.runs_per_minute),
            threads_per_minute=_limit_env(
                "MEMORY_RATE_LIMIT_THREADS_PER_MINUTE", d.threads_per_minute
            ),
            writes_per_minute=_limit_env(
                "MEMORY_RATE_LIMIT_WRITES_PER_MINUTE", d.writes_per_minute
            ),
            searches_per_minute=_limit_env(
                "MEMORY_RATE_LIMIT_SEARCHES_PER_MINUTE", d.searches_per_minute
            ),
            max_threads=_limit_env("MEMORY_QUOTA_THREADS", d.max_threads),
            max_memories=_limit_env("MEMORY_QUOTA_MEMORIES", d.max_memories),
            max_bytes=_limit_env("MEMORY_QUOTA_BYTES", d.max_bytes),
            image_pixels_in_flight=_int_env(
                "MEMORY_MAX_IMAGE_PIXELS_IN_FLIGHT", d.image_pixels_in_flight
            ),
            image_pixels_in_flight_per_user=_int_env(
                "MEMORY_MAX_IMAGE_PIXELS_IN_FLIGHT_PER_USER", d.image_pixels_in_flight_per_user
            ),
        )
