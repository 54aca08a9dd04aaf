"""Ranked recall in two tiers, one ranking (the hot path of every turn).

Storage keeps rows and vectors; this module ranks them. A `Recaller` holds one store and that
store's `RecallCache`. A recall checks the user's data version (one indexed lookup), then:

- L1 (path "l1"): the user's whole index is in the in-process cache; search it.
- L2 (path "l2"): the user is not cached (cold) or too large to be: Chroma gives the dense leg's
  nearest memories, Postgres the lexical leg's matches and every row Chroma has not indexed yet;
  their union (records and stored vectors from Postgres) is indexed for this query only and
  ranked by the same `UserIndex.search`, so the scores and breakdowns mean the same. A user with
  no more memories than the candidate budget is ranked over all of them (no Chroma call needed).
  For a larger user the lexical query runs while the dense hits' rows are read and indexed.
  A cold user who fits the cache is loaded into it in the background, off the hot path.
- L2 fallback (path "l2-fallback"): Chroma is down. The dense leg is replaced by the user's most
  recent and most important rows, scored in-process with their stored vectors; the store logs
  the outage once, probes for Chroma's return and then indexes what was written meanwhile.

There is one Recaller per store: it registers its cache on `store.cache`, so the store's own
writes update it in place and its changes drop stale entries. `recaller_for(store)` returns that
Recaller, creating it on first use; the composition point (`agent/resources.py`) creates it
first with `on_latency` (the metrics histogram), so this module imports no observability code.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

import numpy as np

from memory.attribute_meaning import SlotReader, reader
from memory.attributes import asked_attributes
from memory.recall.attribute_match import Meaning, asks_for_an_attribute, promote
from memory.recall.cache import RecallCache, ScopeEntry, measure
from memory.recall.clauses import split_clauses
from memory.recall.features import decode, encode, features_key
from memory.recall.history import earlier_value, from_replaced, past_question, with_history
from memory.recall.lexical import raw_words, stem, tokenize, word_forms
from memory.recall.lexical_stopwords import ENGLISH_STOPWORDS
from memory.recall.ranking import RankingWeights
from memory.recall.relevance import background_for
from memory.recall.representation import dense_vectors, indexed_from_record
from memory.recall.retrieval import Clause, IndexedMemory, UserIndex, features_of
from memory.storage.cache_sync import Change
from memory.storage.calibration import CosineScale
from memory.storage.embedding import MEMO_MAX_CHARS, Vectors
from memory.storage.store import MAX_LEXICAL_TERMS, Candidates, MemoryStore
from memory.storage.timeline import replaced_recent, replaced_values
from memory.storage.vector import LAYERS, Nearest, VectorIndexError
from memory.types import MemoryKind, MemoryRecord, Scope, ScoredMemory

log = logging.getLogger(__name__)

LatencyObserver = Callable[[float], None]  # seconds one ranked recall took

# A process's own write reaches its own cache listener too, possibly before the writer has
# moved its cache entry to the new version in place (`written` runs one pool-release round-trip,
# ~1 ms, after the commit). An entry exactly one version behind is re-checked after this grace
# instead of dropped at once, so a writer does not reload its user's memories after each of its
# writes. Another process's write is thus dropped ~50 ms after its commit; recalls never wait
# for it (their version check already refuses a stale entry).
OWN_WRITE_GRACE_S = 0.05

PATHS = ("l1", "l2", "l2-fallback")

# L2 judges relevance against the spread of the query's cosine with a random sample of the
# user's memories: 64 vectors (96 KB) give the mean with a standard error of ~0.01 at the ~0.08
# deviation MiniLM's cosines have; kept for up to 256 users (~25 MB) for ten minutes.
SAMPLE_SIZE = 64
SAMPLE_USERS = 256
SAMPLE_TTL_S = 600.0
# Users known to have more rows than the candidate budget (their L2 recall asks Chroma at
# once); ~100 bytes a key, so at most ~1 MB.
LARGE_USERS = 10_000
FILTERED_SEARCH_MAX = 5_000
"""A layer with more of the user's entries than this is never searched with the owner filter.

A filtered search is slow and grows with the entries the filter matches. Embedded Chroma, one
60,000-entry collection, 200 nearest: 53 / 46 / 70 ms p50 for 1,000 / 5,000 / 20,000 matching
entries, against 5 ms for an unfiltered search of 400. On the Chroma server with a million other
entries, a 200,000-memory user whose query neighbourhood was mostly other users' paid over two
seconds on every query (`bench.scale --scale 1m`). A user's small layer (their long-term memories
beside everyone's) still needs the filter to be found at all."""
LAYER_SIZES_TTL_S = 300.0
SAMPLED_LEXICAL_ABOVE = 20_000
"""A user with more active memories than this gets the sampled lexical leg (exact word forms).

A prefix lookup reads every match of the stem: for a user with 200,000 memories, ~4 ms for a
common word (one in 20 of their memories), five words 25 ms, on the critical path of their
recall. At 20,000 memories the same word has a tenth of the matches, and prefix matching (which
also finds compounds: `book*` finds `bookshelf`) is kept."""


COMMON_WORDS_TTL_S = LAYER_SIZES_TTL_S
COMMON_WORDS_PER_USER = 128
COMMON_WORDS_USERS = 1_000
COMMON_WORD_MAX_CHARS = 256
"""A sampled-lexical user's words with a lookup's worth of matches (`MemoryStore.candidates`,
`saturated`) are not looked up again for `COMMON_WORDS_TTL_S`: each such lookup added 3-6 ms
to the lexical statement of the 200,000-memory user (timed alone), Postgres work that runs
beside the dense rows' read, and it yields nothing alone.
Held for the `COMMON_WORDS_PER_USER` words learnt last of the `COMMON_WORDS_USERS` users seen
last, each (with its inflections) of at most `COMMON_WORD_MAX_CHARS`: under ~50 MB (~370 bytes
an entry at the longest), however long the words a user's memories repeat (a longer one is
looked up every time). A word the
user deletes most memories of is looked up again once its time is up; until then only the
dense leg finds its remaining matches."""


_V = TypeVar("_V")


def _keep_recent(
    held: OrderedDict[str, _V], key: str, value: _V, *, most: int = LARGE_USERS
) -> None:
    """Hold `value` under `key` as the most recent; the oldest go past `most` users."""
    held[key] = value
    held.move_to_end(key)
    while len(held) > most:
        held.popitem(last=False)


def _fetch_for(limit: int, share: float) -> int:
    """How many of an unfiltered layer's nearest entries hold `limit` of the user's.

    From the share of the last search's hits that were theirs, with a tenth to spare. A user
    who holds nearly all of a layer is asked for ~1.1 x `limit`, not 2 x: a smaller search, and
    fewer ids for Postgres to look up and drop (200,000 memories: Chroma 5.0-5.7 against 6.5-7.1
    ms, the rows 9-12 against 10-24 ms, p50).
    """
    if share <= 0.0:
        return 2 * limit
    return min(2 * limit, math.ceil(1.1 * limit / min(share, 1.0)))


@dataclass(frozen=True, slots=True)
class TurnRecall:
    """One turn's recall: evidence hits, long-term rules, and the user's data version."""

    hits: list[ScoredMemory]
    rules: list[MemoryRecord]
    version: int
    path: str = "l1"  # which tier served it: "l1", "l2" or "l2-fallback"


@dataclass(frozen=True, slots=True)
class Recalled:
    """Ranked memories and the tier that served them ("l1", "l2" or "l2-fallback")."""

    hits: list[ScoredMemory]
    path: str
    questions: tuple[str, ...] = ()
    """The separate questions the query was ranked by, beside itself (none: it asks one)."""


@dataclass(slots=True)
class _Source:
    """What one recall searches: an index (the cached entry or the query's candidates)."""

    entry: ScopeEntry
    path: str
    # The query's candidates are no fair sample of the user's memories (they are the nearest
    # ones), so the relevance floor's cosine spread, and the lowest cosine the dense scores are
    # scaled from, come from a random sample instead.
    spread: tuple[float, float] | None = None
    lowest: float | None = None


def _lexical_terms(query: str, *, exact: bool = False) -> tuple[list[str], list[str]]:
    """The query's words for Postgres: stems for a prefix match, and CJK runs as bigrams.

    Postgres's `simple` text-search configuration splits on spaces and punctuation only, so a
    Chinese sentence is one token there: CJK bigrams are matched as substrings instead. With
    `exact`, each word is looked up as its inflections (`word_forms`, `a|b|c`) instead of a
    prefix: lookups Postgres can sample (see `MemoryStore.candidates`).
    """
    words: list[str] = []
    phrases: list[str] = []
    for word in raw_words(query):
        if word in ENGLISH_STOPWORDS:
            continue
        if word.isalnum() and word.isascii():
            base = stem(word)
            if exact:
                # Postgres is asked for the first MAX_LEXICAL_TERMS words only: a pasted
                # page's thousands of words get no forms computed on the event loop.
                if len(words) < MAX_LEXICAL_TERMS:
                    forms = "|".join(word_forms(word))
                    if forms not in words:
                        words.append(forms)
            else:
                words.append(f"{base}*" if len(base) >= 3 else base)
        elif word.isalnum():
            grams = [t for t in tokenize(word) if len(t) == 2]
            phrases.extend(grams or [word])
    return words, list(dict.fromkeys(phrases))


def _entry_of(
    records: Sequence[MemoryRecord],
    vectors: Vectors,
    version: int,
    stored: Sequence[object] | None = None,
    scale: CosineScale | None = None,
) -> tuple[ScopeEntry, list[tuple[str, str]]]:
    """An index of `records`, and the (id, features JSON) pairs it had to compute.

    `stored` are the rows' `recall_features`: used when they match the row's text, so indexing
    a candidate needs no tokenising or time parsing; the rest are computed (and returned, for
    the caller to store).
    """
    entry = ScopeEntry(version=version, index=UserIndex(scale=scale))
    fresh: list[tuple[str, str]] = []
    _index_into(entry, fresh, records, vectors, stored)
    return entry, fresh


def _index_into(
    entry: ScopeEntry,
    fresh: list[tuple[str, str]],
    records: Sequence[MemoryRecord],
    vectors: Vectors,
    stored: Sequence[object] | None,
) -> None:
    """Add `records` that `entry` lacks (`_entry_of`), noting computed features in `fresh`."""
    added: dict[str, tuple[MemoryRecord, IndexedMemory]] = {}
    for i, (record, vector) in enumerate(zip(records, vectors, strict=True)):
        if record.id in entry.records or record.id in added:
            continue
        item = indexed_from_record(record, vector)
        key = features_key(item.text, item.context, item.occurred_at)
        features = decode(stored[i], key) if stored is not None else None
        if features is None:
            features = features_of(item)
            fresh.append((record.id, encode(features, key)))
        item.features = features
        added[record.id] = (record, item)
    entry.put_many([r for r, _ in added.values()], [item for _, item in added.values()])


@dataclass(frozen=True, slots=True)
class _Pending:
    """A query's embeddings under way: row 0 the whole query's, then each clause's.

    `whole`'s row 0 is the whole query's embedding: `every` itself when all are embedded in one
    batch, or the query embedded on its own, ahead of its clauses, which a large user's L2
    recall asks Chroma with while the clauses are embedded.
    """

    every: asyncio.Future[np.ndarray]
    whole: asyncio.Future[np.ndarray]

    @classmethod
    def batch(cls, every: asyncio.Future[np.ndarray]) -> _Pending:
        """All the query's embeddings computed together."""
        return cls(every, every)

    def cancel(self) -> None:
        """Stop what is still running (a recall that failed needs none of it)."""
        self.every.cancel()
        self.whole.cancel()


# A query's embeddings, or their computation under way (the Postgres legs do not need them):
# row 0 is the whole query's, the rows after it its clauses' (`memory.recall.clauses`).
QueryVector = np.ndarray | _Pending


async def _every(vectors: QueryVector) -> np.ndarray:
    """The query's embeddings: the whole query's, then each clause's."""
    return vectors if isinstance(vectors, np.ndarray) else await vectors.every


async def _ready(vectors: QueryVector) -> np.ndarray:
    """The whole query's embedding (what Chroma is asked with)."""
    first: np.ndarray = (vectors if isinstance(vectors, np.ndarray) else await vectors.whole)[0]
    return first


def _merged(first: Candidates, second: Candidates) -> Candidates:
    """The rows of both, each once (the first's copy when both have it)."""
    have = {r.id for r in first.records}
    keep = [i for i, r in enumerate(second.records) if r.id not in have]
    if not keep:
        return first
    first_own = first.vectors if first.own is None else first.own
    second_own = second.vectors if second.own is None else second.own
    return Candidates(
        [*first.records, *(second.records[i] for i in keep)],
        np.vstack([first.vectors, second.vectors[keep]]),
        [*first.features, *(second.features[i] for i in keep)],
        False,
        np.vstack([first_own, second_own[keep]]),
    )


def _ranked(rows: Candidates) -> Vectors:
    """The rows' vectors as recall ranks by them (`dense_vectors`)."""
    return dense_vectors(rows.vectors, rows.own)


def _strongest_long_term(entry: ScopeEntry, limit: int) -> list[MemoryRecord]:
    now = datetime.now(UTC)
    rows = [
        r
        for r in entry.records.values()
        if r.kind is not MemoryKind.EPISODIC and (r.expires_at is None or r.expires_at > now)
    ]
    rows.sort(key=lambda r: (r.pinned, r.confidence, r.importance, r.occurred_at), reverse=True)
    return rows[:limit]


class Recaller:
    """Recall, similarity and long-term lookups for one user: L1 when cached, else L2."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        cache: RecallCache | None = None,
        on_latency: LatencyObserver | None = None,
    ) -> None:
        settings = store.index.settings
        self.store = store
        self.cache = cache or RecallCache(
            settings.recall_cache_bytes,
            user_share=settings.recall_cache_user_share,
            user_max=settings.recall_cache_user_max,
        )
        self.on_latency = on_latency
        self.candidates = settings.recall_l2_candidates
        self.lexical_candidates = settings.recall_l2_lexical_candidates
        # Load a cold user into L1 in the background after an L2 recall (off for one-shot
        # processes such as a CLI command, which would only pay for the load).
        self.preload_on_miss = True
        self._slot_reader: SlotReader | None = None
        self.paths: dict[str, int] = dict.fromkeys(PATHS, 0)
        self._loading: set[str] = set()
        self._too_large: dict[str, int] = {}  # user key -> the version found too large for L1
        self._samples: OrderedDict[str, tuple[float, np.ndarray]] = OrderedDict()
        # Users with more rows than the candidate budget -> the layers of their Chroma shard
        # they do not hold most of (searched with the owner filter; the others without it).
        self._large: OrderedDict[str, frozenset[str]] = OrderedDict()
        # Large users' entries per layer, when counted: is a filtered search affordable?
        self._sizes: OrderedDict[str, tuple[float, dict[str, int]]] = OrderedDict()
        self.filtered_search_max = FILTERED_SEARCH_MAX
        self._counting: set[str] = set()  # users whose layer sizes are being counted
        # Large users -> per unfiltered layer, the share of its nearest entries that were theirs.
        self._shares: OrderedDict[str, dict[str, float]] = OrderedDict()
        # Sampled-lexical users -> their common words, each with when it was learnt.
        self._common: OrderedDict[str, dict[str, float]] = OrderedDict()
        self._samples_lock = threading.Lock()
        # Query embeddings started ahead of their recall (held so none is collected mid-run).
        self._prefetching: set[asyncio.Task[np.ndarray]] = set()
        self.prefetch_queries = True
        store.cache.add(self)

    async def recall(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 8,
        weights: RankingWeights | None = None,
        kinds: Collection[MemoryKind] | None = None,
        now: datetime | None = None,
        record_access: bool = True,
        relevant_only: bool = True,
    ) -> list[ScoredMemory]:
        """Ranked memories of this user for `query`, each with its score breakdown.

        Only memories that pass the absolute relevance floor (`weights.floor`) are returned,
        so an unrelated query gets nothing; `relevant_only=False` returns the ranked top k with
        each verdict (for `recall --explain`).
        """
        found = await self.recall_traced(
            scope,
            query,
            k=k,
            weights=weights,
            kinds=kinds,
            now=now,
            record_access=record_access,
            relevant_only=relevant_only,
        )
        return found.hits

    async def recall_traced(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 8,
        weights: RankingWeights | None = None,
        kinds: Collection[MemoryKind] | None = None,
        now: datetime | None = None,
        record_access: bool = True,
        relevant_only: bool = True,
        query_vector: np.ndarray | None = None,
    ) -> Recalled:
        """`recall`, also saying which tier served it (for `recall --explain`).

        `query_vector` is the query's embedding when the caller has it already (a query that
        asks several things still has its clauses embedded here).
        """
        started = time.perf_counter()
        # The query is embedded while Postgres is asked for its candidates (a thread of its own).
        parts = split_clauses(query)
        wanted = (
            self._embedding(query, parts, apart=scope.key in self._large)
            if query_vector is None
            else _Pending.batch(asyncio.ensure_future(self._with_clauses(parts, query_vector)))
        )
        try:
            source = await self._source(scope, query, wanted)
            vectors = await _every(wanted)
        finally:
            wanted.cancel()  # done by now, unless the tier failed
        clauses = await self._clauses(scope, source, parts, vectors)
        slots = await self._slots()
        hits = await self._rank_off_loop(source, scope, query, vectors[0], k, weights, kinds, now,
                                         record_access, relevant_only, clauses, slots)  # fmt: skip
        hits = await self._with_history(scope, query, hits, now)
        self._observe(started)
        return Recalled(hits, source.path, tuple(c.text for c in clauses))

    async def recall_turn(
        self, scope: Scope, query: str, *, k: int, weights: RankingWeights, rules: int = 12
    ) -> TurnRecall:
        """What one agent turn needs: ranked evidence, long-term rules and the user's version.

        One freshness check serves all three (the version also keys the profile cache).
        """
        started = time.perf_counter()
        parts = split_clauses(query)
        # In one batch, as `prefetch` embeds it: the turn's perceive step has usually begun it.
        pending = self._embedding(query, parts)
        try:
            version = await self.store.scope_version(scope)
            cached = self.cache.get(scope, version)
            if cached is not None:
                source = _Source(cached, "l1")
                strongest = _strongest_long_term(cached, rules)
            else:
                source, strongest = await asyncio.gather(
                    self._l2(scope, query, pending, version),
                    self.store.strongest_long_term(scope, rules),
                )
            vectors = await _every(pending)
        finally:
            pending.cancel()  # done by now, unless a step failed
        clauses = await self._clauses(scope, source, parts, vectors)
        slots = await self._slots()
        hits = await self._rank_off_loop(source, scope, query, vectors[0], k, weights, None, None,
                                         True, True, clauses, slots)  # fmt: skip
        hits = await self._with_history(scope, query, hits, None)
        self._observe(started)
        return TurnRecall(hits, strongest, version, source.path)

    async def _slots(self) -> SlotReader | None:
        """The attribute reader of this store's embedder, built once off the event loop.

        It embeds its examples; None while the embedder cannot serve it (recall goes on).
        """
        if self._slot_reader is None:
            try:
                self._slot_reader = await asyncio.to_thread(reader, self.store.embedder.embed)
            except Exception:  # an embedder error: recall goes on without the reader
                log.warning("attribute reader unavailable; recall reads attributes by patterns")
                return None
        return self._slot_reader

    def prefetch(self, query: str) -> None:
        """Start embedding a query that a recall will ask for in a moment.

        The agent knows its recall query when it has read the turn, one graph step before
        recall runs; embedding it from then on overlaps the embedding's few milliseconds with
        the checkpoint write between the steps. The recall finds the vector in the embedder's memo
        of recent texts, or joins the computation still under way: never computed twice. A
        query too long for the memo is not prefetched (it would be computed again).
        """
        if not self.prefetch_queries or not query.strip() or len(query) > MEMO_MAX_CHARS:
            return
        task = asyncio.ensure_future(self._embed(query, split_clauses(query)))
        self._prefetching.add(task)
        task.add_done_callback(self._prefetched)

    def _prefetched(self, task: asyncio.Task[np.ndarray]) -> None:
        self._prefetching.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # The recall embeds the query again and reports a real failure itself.
            log.debug("prefetching a query embedding failed: %s", task.exception())

    def _embedding(self, text: str, parts: list[str], *, apart: bool = False) -> _Pending:
        """The query's embeddings (`QueryVector`), started now and awaited where needed.

        In one batch; with `apart` (a user known to be large), a query that has clauses is
        embedded alone first, then its clauses: Chroma needs only the whole query's vector, and
        the clauses are needed only for ranking, once the candidates are read. A batch of three
        texts took 10.8 ms where the query alone took 6.1 (the 2-core machine): the dense leg
        starts that much sooner, and the clauses are embedded while Chroma searches.
        """
        if not (apart and parts):
            return _Pending.batch(asyncio.ensure_future(self._embed(text, parts)))
        whole = asyncio.ensure_future(self.store.embedder.aembed([text]))

        async def every() -> np.ndarray:
            # Shielded: cancelling this task must not cancel the whole query's embedding,
            # which the dense leg awaits on its own.
            first = await asyncio.shield(whole)
            clauses = await self.store.embedder.aembed(parts)
            return np.vstack([first, clauses])

        return _Pending(asyncio.ensure_future(every()), whole)

    async def _embed(self, text: str, parts: list[str]) -> np.ndarray:
        """The query and each of its clauses (`parts`), in one batch."""
        vectors: np.ndarray = await self.store.embedder.aembed([text, *parts])
        return vectors

    async def _with_clauses(self, parts: list[str], vector: np.ndarray) -> np.ndarray:
        """A given query embedding, with the query's clauses embedded beneath it."""
        rows = [vector.reshape(1, -1)]
        if parts:
            rows.append(await self.store.embedder.aembed(parts))
        return np.vstack(rows)

    async def _clauses(
        self, scope: Scope, source: _Source, parts: list[str], vectors: np.ndarray
    ) -> list[Clause]:
        """The query's clauses for ranking, each with its own cosine spread where L2 needs one.

        A large user's L2 candidates are the whole query's (Chroma is not asked again for each
        clause): they are its nearest rows and the rows with any of its words, which include
        each clause's words.
        """
        out = []
        for text, vector in zip(parts, vectors[1:], strict=True):
            if source.spread is None:
                out.append(Clause(text, vector))
            else:
                mean, std, lowest = await self._spread(scope, vector, text)
                out.append(Clause(text, vector, (mean, std), lowest))
        return out

    def _observe(self, started: float) -> None:
        if self.on_latency is not None:
            self.on_latency(time.perf_counter() - started)

    async def _source(self, scope: Scope, query: str, vector: QueryVector) -> _Source:
        version = await self.store.scope_version(scope)
        cached = self.cache.get(scope, version)
        if cached is not None:
            self.paths["l1"] += 1
            return _Source(cached, "l1")
        return await self._l2(scope, query, vector, version)

    async def _l2(
        self, scope: Scope, query: str, vector: QueryVector, version: int, *, count: bool = True
    ) -> _Source:
        """The query's candidates from Chroma and Postgres, indexed for this query only.

        `count` adds it to `paths` (recalls are counted; similarity lookups are not).
        """
        if self.preload_on_miss:
            self._spawn_preload(scope, version)
        limit = self.candidates
        words, phrases = _lexical_terms(query)
        path = "l2"
        found = lexical = None
        if scope.key not in self._large:
            # A user within the candidate budget is ranked over all their rows: exactly L1's
            # ranking, found in one round trip and with no Chroma call.
            found = await self.store.candidates(
                scope, terms=words, phrases=phrases, limit=limit,
                lexical_limit=self.lexical_candidates,
            )  # fmt: skip
            if not found.complete:
                # Larger: these are already the lexical leg's rows; the dense leg is added.
                self._remember_large(scope)
                lexical, found = found, None
        if found is not None:
            self.paths[path] += count
            entry, fresh = _entry_of(
                found.records, _ranked(found), version, found.features, self.store.scale
            )
            self._store_features(scope, fresh)
            # Every row is indexed: its spread is the user's own, as L1 measures it.
            return _Source(entry, path)
        indexed = await self._large_candidates(
            scope, query, vector, words, phrases, lexical, version
        )
        if indexed is None:
            path = "l2-fallback"
            found = await self.store.candidates(
                scope, terms=words, phrases=phrases, limit=limit, recent=limit, whole=False
            )
            indexed = _entry_of(
                found.records, _ranked(found), version, found.features, self.store.scale
            )
        self.paths[path] += count
        entry, fresh = indexed
        self._store_features(scope, fresh)
        mean, std, lowest = await self._spread(scope, await _ready(vector), query)
        return _Source(entry, path, spread=(mean, std), lowest=lowest)

    async def _large_candidates(
        self,
        scope: Scope,
        query: str,
        vector: QueryVector,
        words: list[str],
        phrases: list[str],
        lexical: Candidates | None,
        version: int,
    ) -> tuple[ScopeEntry, list[tuple[str, str]]] | None:
        """Chroma's nearest rows and Postgres's lexical matches, indexed; None if Chroma is down.

        The legs share the machine with the local model, Chroma and Postgres, so each step
        starts when it competes least with the step every later one waits for: the query is
        embedded first (the model runs on both cores of a small machine); the lexical query is
        sent once Chroma has answered, and runs while the dense hits' rows are read and indexed
        (Python work, one core). Its rows are indexed after the dense rows, into the same
        index: the order memories are indexed in changes no ranking. Measured on the
        200,000-memory user (`bench.big_user`, 4 alternating rounds each, p50): sent beside
        the embedding, the lexical query slowed it from 8 to 11 ms; sent beside Chroma's
        search, it slowed that from 8.9 to 12.1 ms.
        """
        if self.store.index_health.down:
            return None
        limit = self.candidates
        sampled = lexical is None and (self._row_count(scope) or 0) > SAMPLED_LEXICAL_ABOVE

        async def lexical_rows() -> Candidates:
            if lexical is not None:
                return lexical
            if not sampled:
                return await self.store.candidates(
                    scope, terms=words, phrases=phrases, limit=limit, whole=False,
                    lexical_limit=self.lexical_candidates,
                )  # fmt: skip
            found = await self.store.candidates(
                scope, terms=_lexical_terms(query, exact=True)[0], phrases=phrases, limit=limit,
                whole=False, sampled=True, lexical_limit=self.lexical_candidates,
                common=self._common_words(scope),
            )  # fmt: skip
            self._learn_common(scope, found.saturated)
            return found

        pending: list[asyncio.Future[Candidates]] = []

        def searched() -> None:
            if not pending:
                pending.append(asyncio.ensure_future(lexical_rows()))

        query_vector = await _ready(vector)
        try:
            dense = await self._dense(scope, query_vector, limit, searched=searched)
        except VectorIndexError as exc:
            self.store.index_failed(exc)
            dense = None
        except BaseException:
            await asyncio.gather(*pending, return_exceptions=True)  # no orphaned query
            raise
        if dense is None:
            await asyncio.gather(*pending)
            return None
        searched()  # `_dense` calls it as Chroma answers; this is a no-op then
        try:
            entry, fresh = _entry_of(
                dense.records, _ranked(dense), version, dense.features, self.store.scale
            )
            rows = await pending[0]
        except BaseException:
            await asyncio.gather(*pending, return_exceptions=True)
            raise
        _index_into(entry, fresh, rows.records, _ranked(rows), rows.features)
        return entry, fresh

    async def _dense(
        self,
        scope: Scope,
        vector: np.ndarray,
        limit: int,
        *,
        searched: Callable[[], None] | None = None,
    ) -> Candidates:
        """The user's `limit` nearest rows of each layer: Chroma's ids, then rows from Postgres.

        Each layer of the user's shard is searched without the owner filter while they hold
        most of it (`VectorIndex.nearest`), and Postgres keeps, layer by layer, the nearest
        `limit` of those hits that are the user's. A layer where fewer than that are theirs
        among all it returned (the long-term layer, shared and small, typically) is searched
        again with the filter, and from then on for this user, if the filter is affordable:
        a filtered search is slow and grows with the user's entries in the layer (over two
        seconds for 200,000), so a layer with more than `filtered_search_max` of them keeps the
        unfiltered hits. Those are still exactly the user's nearest entries down to the
        similarity of the last entry returned (anyone's); what is missing is further away,
        and the lexical leg still finds any row that shares the query's words. A layer is asked
        for as many hits as held `limit` of the user's last time, with a tenth to spare
        (`_fetch_for`), up to 2 x `limit`. `searched` is called once Chroma has answered,
        before the rows are read.
        """
        index = self.store.index
        filtered = self._large.get(scope.key, frozenset())
        unfiltered = [x for x in LAYERS if x not in filtered]
        shares = self._shares.get(scope.key, {})
        fetch = {x: _fetch_for(limit, shares[x]) for x in unfiltered if x in shares}
        found = await index.nearest(scope, vector, k=limit, unfiltered=unfiltered, fetch=fetch)
        if searched is not None:
            searched()
        checked = [mid for layer in found if not layer.unchecked for mid, _ in layer.hits]
        unchecked = [layer for layer in found if layer.unchecked]
        seen = [[mid for mid, _ in layer.hits] for layer in unchecked]
        rows = await self.store.nearest_rows(scope, ids=checked, nearest=seen, limit=limit)
        have = {r.id for r in rows.records}
        self._learn_shares(scope, unchecked, seen, have, limit)
        # A layer asked for fewer than 2 x `limit` (`fetch`) that came back short is asked for
        # more next time (its share was just learnt), not searched with the filter for good.
        short = [layer.layer for layer, ids in zip(unchecked, seen, strict=True)
                 if layer.full and len(have.intersection(ids)) < limit
                 and fetch.get(layer.layer, 2 * limit) >= 2 * limit]  # fmt: skip
        if short:
            sizes = await self._layer_sizes(scope)
            short = [x for x in short if sizes.get(x, 0) <= self.filtered_search_max]
        if not short:  # enough of theirs in each layer, the layer was seen whole, or too large
            return rows
        self._large[scope.key] = filtered | set(short)
        again = await index.query(scope, vector, k=limit, layers=short)
        more = await self.store.nearest_rows(scope, ids=[mid for mid, _ in again], limit=limit)
        return _merged(rows, more)

    def _row_count(self, scope: Scope) -> int | None:
        """The user's active memories as last counted; None before the first count.

        Never waits: a missing or stale count is taken in the background (`_layer_sizes`).
        """
        held = self._sizes.get(scope.key)
        stale = held is None or time.monotonic() - held[0] >= LAYER_SIZES_TTL_S
        if stale and scope.key not in self._counting:
            self._counting.add(scope.key)

            async def count() -> None:
                try:
                    await self._layer_sizes(scope)
                except Exception as exc:  # only a cost: the next recall counts again
                    log.info("could not count a user's memories: %s", exc)
                finally:
                    self._counting.discard(scope.key)

            self.store.spawn(count())
        return None if held is None else sum(held[1].values())

    def _learn_shares(
        self,
        scope: Scope,
        layers: Sequence[Nearest],
        seen: Sequence[Sequence[str]],
        have: set[str],
        limit: int,
    ) -> None:
        """Note, per unfiltered layer, the share of its nearest entries that are the user's.

        The rows kept are the first `limit` of the user's among the hits, nearest first, so
        the share is `limit` over the hits it took to find them (or theirs over all the hits
        when fewer were theirs). `_fetch_for` then asks Chroma for no more than that needs.
        """
        shares = self._shares.get(scope.key, {})
        for layer, ids in zip(layers, seen, strict=True):
            if not ids:
                continue
            mine = [i for i, mid in enumerate(ids) if mid in have]
            share = limit / (mine[limit - 1] + 1) if len(mine) >= limit else len(mine) / len(ids)
            shares[layer.layer] = share
        _keep_recent(self._shares, scope.key, shares)

    async def _layer_sizes(self, scope: Scope) -> dict[str, int]:
        """The user's entries per layer, counted at most every `LAYER_SIZES_TTL_S` seconds."""
        now = time.monotonic()
        held = self._sizes.get(scope.key)
        if held is not None and now - held[0] < LAYER_SIZES_TTL_S:
            return held[1]
        sizes = await self.store.count_active_by_layer(scope)
        _keep_recent(self._sizes, scope.key, (now, sizes))
        return sizes

    def filtered_layers(self, scope: Scope) -> frozenset[str]:
        """The Chroma layers this user's L2 recall searches with the owner filter."""
        return self._large.get(scope.key, frozenset())

    def _common_words(self, scope: Scope) -> frozenset[str]:
        """The user's words learnt to be common (`COMMON_WORDS_TTL_S`) and not yet expired."""
        held = self._common.get(scope.key)
        if not held:
            return frozenset()
        now = time.monotonic()
        return frozenset(w for w, at in held.items() if now - at < COMMON_WORDS_TTL_S)

    def _learn_common(self, scope: Scope, words: Collection[str]) -> None:
        """Note words the user has a lookup's worth of matches of (`COMMON_WORDS_TTL_S`)."""
        if not words:
            return
        now = time.monotonic()
        held = self._common.get(scope.key, {})
        held = {w: at for w, at in held.items() if now - at < COMMON_WORDS_TTL_S}
        held.update(dict.fromkeys((w for w in words if len(w) <= COMMON_WORD_MAX_CHARS), now))
        while len(held) > COMMON_WORDS_PER_USER:
            del held[next(iter(held))]  # learnt first
        _keep_recent(self._common, scope.key, held, most=COMMON_WORDS_USERS)

    def _remember_large(self, scope: Scope) -> None:
        """Note a user with more rows than the candidate budget (bounded: most recent first)."""
        _keep_recent(self._large, scope.key, self._large.get(scope.key, frozenset()))

    def _store_features(self, scope: Scope, fresh: list[tuple[str, str]]) -> None:
        """Keep computed features in Postgres, off the hot path, so no query computes them again."""
        if not fresh:
            return

        async def save() -> None:
            try:
                await self.store.save_recall_features(scope, fresh)
            except Exception as exc:  # only a cost: the next query computes them again
                log.info("could not store recall features: %s", exc)

        self.store.spawn(save())

    async def backfill_features(self, *, batch: int = 1000) -> int:
        """Compute and store the recall features of every row that lacks current ones. Admin.

        For rows written before features were stored (or by a process with no Recaller), and
        rows whose features no longer match (computed before the tokeniser changed: `FORMAT`).
        Recall computes such features itself too, so this only moves that cost off queries.
        Every kept row is read (its key is computed from its text); how many were computed.
        """
        done, after = 0, ""
        while True:
            rows = await self.store.rows_with_feature_keys(after=after, limit=batch)
            if not rows:
                return done
            by_scope: dict[Scope, list[tuple[str, str]]] = {}
            for scope, record, stored in rows:
                item = indexed_from_record(record, np.zeros(0, dtype=np.float32))
                key = features_key(item.text, item.context, item.occurred_at)
                if stored != key:
                    pair = (record.id, encode(features_of(item), key))
                    by_scope.setdefault(scope, []).append(pair)
            for scope, pairs in by_scope.items():
                await self.store.save_recall_features(scope, pairs)
                done += len(pairs)
            after = rows[-1][1].id
            await asyncio.sleep(0)  # a long backfill shares the loop

    async def _spread(
        self, scope: Scope, vector: np.ndarray, query: str
    ) -> tuple[float, float, float | None]:
        """Mean, spread and lowest of the query's cosine with a sample of the user's memories.

        The sample is kept per user (a user's spread moves little with a few writes) and
        refreshed after the cache's TTL; too small a sample gives the background spread in
        the query's language (`background_for`).
        Samples are held as float16 (48 KB a user) and their bytes are charged to the L1
        budget (`RecallCache.charge`), so what L2 keeps is bounded by the same setting.
        """
        floor = RankingWeights().floor
        now = time.monotonic()
        with self._samples_lock:
            held = self._samples.get(scope.key)
        if held is None or now - held[0] > SAMPLE_TTL_S:
            vectors, own = await self.store.sample_vectors(scope, SAMPLE_SIZE)
            sample = dense_vectors(vectors, own).astype(np.float16)
            held = (now, sample)
            with self._samples_lock:
                old = self._samples.pop(scope.key, None)
                self._samples[scope.key] = held
                delta = sample.nbytes - (old[1].nbytes if old is not None else 0)
                while len(self._samples) > SAMPLE_USERS:
                    _, dropped = self._samples.popitem(last=False)
                    delta -= dropped[1].nbytes
            self.cache.charge(delta)
        sample = held[1]
        if len(sample) < floor.min_population:
            return (*background_for(floor, self.store.scale, query), None)
        sims = self.store.scale.to_reference(sample.astype(np.float32) @ vector.astype(np.float32))
        return float(sims.mean()), float(sims.std()), float(sims.min())

    async def _rank_off_loop(
        self,
        source: _Source,
        scope: Scope,
        query: str,
        vector: np.ndarray,
        k: int,
        weights: RankingWeights | None,
        kinds: Collection[MemoryKind] | None,
        now: datetime | None,
        record_access: bool,
        relevant_only: bool,
        clauses: Sequence[Clause] = (),
        slots: SlotReader | None = None,
    ) -> list[ScoredMemory]:
        """`_rank` in a worker thread, then the access statistics written from the event loop.

        Ranking is CPU work that grows with k and the user's memories (a store search of a
        3,000-memory user ranking 10,100 held the loop for up to 1.1 s): in a thread, other
        requests are served between the interpreter's switches. The entry is counted as read
        meanwhile, so a write of this user drops it rather than change it under the ranking.
        """
        entry = source.entry
        entry.readers += 1
        try:
            results = await asyncio.to_thread(
                self._rank, source, query, vector, k, weights, kinds, now, relevant_only,
                clauses, slots,
            )  # fmt: skip
        finally:
            entry.readers -= 1
        used = [r.record.id for r in results if r.breakdown.relevance is None
                or r.breakdown.relevance.passed]  # fmt: skip
        if record_access and used:
            # Access statistics are written off the hot path: a recall never waits for a write.
            self.store.spawn(self._record_access(scope, used, query))
        return results

    def _rank(
        self,
        source: _Source,
        query: str,
        vector: np.ndarray,
        k: int,
        weights: RankingWeights | None,
        kinds: Collection[MemoryKind] | None,
        now: datetime | None,
        relevant_only: bool,
        clauses: Sequence[Clause] = (),
        slots: SlotReader | None = None,
    ) -> list[ScoredMemory]:
        entry = source.entry
        weights = weights or RankingWeights()
        hits = entry.index.search(
            query,
            vector,
            k=k,
            now=now or datetime.now(UTC),
            weights=weights,
            kinds=kinds,
            spread=source.spread,
            lowest=source.lowest,
            clauses=clauses,
        )
        meaning = None if slots is None else Meaning(slots, vector, entry.vectors)
        hits = promote(query, hits, entry.records, meaning, now)
        return [
            ScoredMemory(record=entry.records[mid], score=b.total, breakdown=b)
            for mid, b in hits
            if mid in entry.records
            and (not relevant_only or b.relevance is None or b.relevance.passed)
        ]

    async def _with_history(
        self, scope: Scope, query: str, hits: list[ScoredMemory], now: datetime | None
    ) -> list[ScoredMemory]:
        """For a question about the past, the earlier value of a recalled fact above it.

        Costs one indexed query, and only for a question that asks about the past.
        """
        now = now or datetime.now(UTC)
        question = past_question(query, now)
        if question is None:
            return hits
        earlier = await replaced_values(self.store, scope, [h.record.id for h in hits])
        if earlier:
            reader = await self._slots()
            first = await asyncio.to_thread(asks_for_an_attribute, query, reader)
            out = with_history(hits, earlier, question, now, first=first)
        else:
            out = hits
        if len(out) > len(hits):
            return out
        # No recalled value led back to the asked one: read the replaced values directly.
        asked = asked_attributes(query)
        if not asked:
            return hits
        chosen = from_replaced(question, asked, await replaced_recent(self.store, scope), now)
        if chosen is None or any(h.record.id == chosen.id for h in hits):
            return hits
        return [earlier_value(chosen, hits, asked), *hits]

    async def similar(
        self, scope: Scope, text: str, *, k: int = 5, kinds: Collection[MemoryKind] | None = None
    ) -> list[tuple[MemoryRecord, float]]:
        """Active memories of this user nearest to `text` by cosine (for dedupe and conflicts).

        The cosines are on the reference scale (`memory.storage.calibration`).
        """
        vector: np.ndarray = (await self.store.embedder.aembed([text]))[0]
        version = await self.store.scope_version(scope)
        entry = self.cache.get(scope, version)
        if entry is None:
            entry = (await self._l2(scope, text, vector[None, :], version, count=False)).entry
        if not entry.records:
            return []
        ids = list(entry.records)
        matrix = np.vstack([entry.vectors[i] for i in ids])
        sims = self.store.scale.to_reference(matrix @ vector)
        order = np.argsort(-sims)
        out: list[tuple[MemoryRecord, float]] = []
        for pos in order:
            record = entry.records[ids[pos]]
            if kinds and record.kind not in kinds:
                continue
            out.append((record, float(sims[pos])))
            if len(out) >= k:
                break
        return out

    async def preload(self, scope: Scope) -> int:
        """Load the user's active memories into L1 if they fit; how many were loaded.

        Call it (without awaiting, e.g. `store.spawn`) when a session starts so the first turns
        are served from L1. A user too large for L1 is not loaded (0): L2 serves them.
        """
        version = await self.store.scope_version(scope)
        cached = self.cache.peek(scope)  # not `get`: a preload is no lookup, counts no miss
        if cached is not None and cached.version == version:
            return cached.size()
        if self._too_large.get(scope.key) == version:
            return 0
        if not self.cache.admits(await self.store.count_active(scope)):
            self._too_large[scope.key] = version
            return 0
        rows = await self.store.active_with_features(scope)
        entry, fresh = _entry_of(
            rows.records, _ranked(rows), version, rows.features, self.store.scale
        )
        self._store_features(scope, fresh)
        # Measuring walks every object of the entry; in slices, so recalls keep being served.
        entry.nbytes = await measure(entry)
        # A change made while loading leaves this entry a version behind: `cache.get` then
        # refuses it, so a racing load is never served stale.
        if self.cache.put(scope, entry):
            return entry.size()
        self._too_large[scope.key] = version
        return 0

    def warm(self, scope: Scope) -> None:
        """Start loading the user into L1 in the background (when their session starts).

        Returns at once; a load already under way for the user is not started twice.
        """
        self._spawn_preload(scope, None)

    def _spawn_preload(self, scope: Scope, version: int | None) -> None:
        if scope.key in self._loading:
            return
        if version is not None and self._too_large.get(scope.key) == version:
            return
        self._loading.add(scope.key)

        async def load() -> None:
            try:
                await self.preload(scope)
            except Exception as exc:  # a failed preload only means L2 serves a while longer
                log.warning("preloading recall cache failed: %s", exc)
            finally:
                self._loading.discard(scope.key)

        self.store.spawn(load())

    async def long_term(self, scope: Scope, *, limit: int = 12) -> list[MemoryRecord]:
        """Return the user's strongest long-term memories (pinned first, then by confidence)."""
        version = await self.store.scope_version(scope)
        entry = self.cache.get(scope, version)
        if entry is not None:
            return _strongest_long_term(entry, limit)
        return await self.store.strongest_long_term(scope, limit)

    async def _record_access(self, scope: Scope, ids: list[str], query: str) -> None:
        try:
            await self.store.record_access(scope, ids, query)
            entry = self.cache.peek(scope)
            if entry is not None:
                for mid in ids:
                    if mid in entry.records:
                        entry.records[mid].access_count += 1
        except Exception as exc:  # statistics must never break a turn
            log.warning("could not record access statistics: %s", exc)

    # -- the store's change notices (`RowCache`) ---------------------------------------------

    def written(
        self,
        scope: Scope,
        records: Sequence[MemoryRecord],
        vectors: Vectors,
        version: int,
        own: Vectors | None = None,
    ) -> None:
        """Add this process's new memories to the cached entry without a reload.

        Only if nothing else changed the user in between (then the next recall reloads).
        """
        vectors = dense_vectors(vectors, own)
        # This process wrote them: compute their recall features once, for the cached entry and
        # for Postgres (stored off the hot path), so no later query, here or in another
        # process, tokenises them.
        items, fresh = [], []
        for record, vector in zip(records, vectors, strict=True):
            item = indexed_from_record(record, vector)
            key = features_key(item.text, item.context, item.occurred_at)
            item.features = features_of(item)
            fresh.append((record.id, encode(item.features, key)))
            items.append(item)
        self._store_features(scope, fresh)
        entry = self.cache.peek(scope)
        if entry is None or entry.version != version - 1 or entry.readers:
            # Behind, or being ranked in a worker thread right now: the next recall reloads.
            self.cache.invalidate(scope)
            return
        for record, item in zip(records, items, strict=True):
            if record.status.value == "active":
                entry.put(record, item)
        self.cache.bump(scope, version, delta_size=len(records))

    def invalidate(self, scope: Scope) -> None:
        """Drop the user's cached entry."""
        self.cache.invalidate(scope)

    def clear(self) -> None:
        """Drop every cached entry."""
        self.cache.clear()

    # -- another process's changes (`CacheSync` listener) ------------------------------------

    def on_change(self, change: Change) -> None:
        """Drop the entry a notified change made stale (memories only, not settings)."""
        if change.settings_only:  # the recall cache holds memories only
            return
        entry = self.cache.peek(change.scope)
        version = change.version
        if entry is not None and version is not None and entry.version == version - 1:
            loop = asyncio.get_running_loop()
            loop.call_later(OWN_WRITE_GRACE_S, self._drop_if_behind, change.scope, version)
        else:
            self._drop_if_behind(change.scope, version)

    def _drop_if_behind(self, scope: Scope, version: int | None) -> None:
        entry = self.cache.peek(scope)
        if entry is not None and (version is None or entry.version < version):
            self.cache.invalidate(scope)


def recaller_for(store: MemoryStore, *, on_latency: LatencyObserver | None = None) -> Recaller:
    """The store's Recaller, created (and registered on `store.cache`) on first use.

    `on_latency` is set on it if given, so the composition point can attach the metrics
    histogram whether or not something recalled first.
    """
    for cache in store.cache.caches:
        if isinstance(cache, Recaller):
            if on_latency is not None:
                cache.on_latency = on_latency
            return cache
    return Recaller(store, on_latency=on_latency)


__all__ = [
    "OWN_WRITE_GRACE_S",
    "PATHS",
    "LatencyObserver",
    "Recalled",
    "Recaller",
    "TurnRecall",
    "recaller_for",
]
