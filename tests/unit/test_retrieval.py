from __future__ import annotations

import random
from datetime import timedelta

import numpy as np
import pytest

from memory.recall.ranking import RankingWeights
from memory.recall.relevance import is_chatter
from memory.recall.representation import embed_text, index_text, indexed_memory
from memory.recall.retrieval import IndexedMemory, UserIndex, copy_key
from memory.types import MemoryKind, NewMemory
from tests.unit._index_helpers import DIM, NOW, filler, memory, unit

W = RankingWeights()


def _ids(index: UserIndex, query: str, vector: np.ndarray | None = None, k: int = 5,
         **kw: object) -> list[str]:  # fmt: skip
    qv = unit(999) if vector is None else vector
    return [m for m, _ in index.search(query, qv, k=k, now=NOW, weights=W, **kw)]  # type: ignore[arg-type]


def test_expired_memory_is_never_returned() -> None:
    index = UserIndex()
    index.upsert([memory("gone", "the door code is 4417", vector=unit(5),
                         expires_at=NOW - timedelta(seconds=1)),
                  memory("kept", "the bike lock code", vector=unit(6))])  # fmt: skip
    # Best on every signal, asked for more results than exist: still absent.
    assert _ids(index, "door code 4417", unit(5), k=10) == ["kept"]
    later = index.search("door code", unit(5), k=10, now=NOW - timedelta(days=1), weights=W)
    assert later[0][0] == "gone"  # before its expiry it was recallable


def test_lexical_only_match_finds_a_rare_name_and_a_number() -> None:
    index = UserIndex()
    index.upsert([*filler(60), memory("name", "dinner with Oyelaran on friday", vector=unit(7)),
                  memory("num", "invoice 880321 is overdue", vector=unit(8))])  # fmt: skip
    # The query vector points elsewhere (unit(999)): only BM25 can find them.
    assert _ids(index, "Oyelaran")[0] == "name"
    assert _ids(index, "what about 880321")[0] == "num"


def test_dense_similarity_finds_a_paraphrase_without_shared_words() -> None:
    index = UserIndex()
    target = unit(11)
    index.upsert([*filler(30), memory("para", "automobile repair", vector=target)])
    assert _ids(index, "fixing my car", target)[0] == "para"


def test_upsert_replaces_and_remove_deletes() -> None:
    index = UserIndex()
    index.upsert([memory("m1", "likes green tea"), memory("m2", "likes black coffee")])
    index.upsert([memory("m1", "likes oolong now")])
    assert len(index) == 2
    assert _ids(index, "oolong")[0] == "m1"
    replaced = dict(index.search("green tea", unit(0), k=2, now=NOW, weights=W))
    assert replaced["m1"].lexical == 0.0  # the old text is gone from the lexical index
    index.remove(["m1", "unknown"])
    assert len(index) == 1 and "m1" not in index
    assert _ids(index, "oolong") == ["m2"]
    index.upsert([memory("m3", "likes oolong again")])  # reuses the freed slot
    assert _ids(index, "oolong")[0] == "m3"


def _varied(count: int) -> list[IndexedMemory]:
    """Memories that differ in every field the index keeps: speakers, sessions, times, kinds."""
    kinds = list(MemoryKind)
    return [
        memory(f"v{i}", f"note {i}: the {['boat', 'train', 'flat'][i % 3]} on 1{i % 9} May",
               vector=unit(300 + i), days_ago=1.0 + 3 * i, importance=(i % 5) / 4,
               access_count=i % 4, kind=kinds[i % len(kinds)], speaker=["Ana", "Bo"][i % 2],
               group=f"s{i % 4}", context="we talked about travel" if i % 2 else "")
        for i in range(count)
    ]  # fmt: skip


def test_one_batch_ranks_as_the_same_memories_upserted_one_by_one() -> None:
    items = _varied(40)
    batch, single = UserIndex(), UserIndex()
    batch.upsert(items)
    for item in items:
        single.upsert([item])
    for query, vector in [("the boat in May", unit(305)), ("Ana travel", unit(999)),
                          ("what happened on 13 May?", unit(312))]:  # fmt: skip
        got = batch.search(query, vector, k=10, now=NOW, weights=W)
        want = single.search(query, vector, k=10, now=NOW, weights=W)
        assert [m for m, _ in got] == [m for m, _ in want]
        assert [b.total for _, b in got] == pytest.approx([b.total for _, b in want])


def test_the_order_memories_are_indexed_in_changes_no_ranking() -> None:
    # L1 indexes a user's rows in the order Postgres returns them, L2 a query's candidates
    # dense hits first: equally good word matches must not be told apart by that order.
    items = [*_varied(60), *filler(60)]
    first = UserIndex()
    first.upsert(items)
    queries = [
        ("the boat in May", unit(305)),
        ("Ana travel", unit(999)),
        ("what happened on 13 May?", unit(312)),
        ("Bo and the train", unit(320)),
    ]
    for seed in range(6):
        shuffled = items[:]
        random.Random(seed).shuffle(shuffled)
        other = UserIndex()
        other.upsert(shuffled)
        for query, vector in queries:
            got = other.search(query, vector, k=10, now=NOW, weights=W)
            want = first.search(query, vector, k=10, now=NOW, weights=W)
            assert [m for m, _ in got] == [m for m, _ in want], (seed, query)
            assert [b.total for _, b in got] == pytest.approx([b.total for _, b in want])


def test_a_batch_that_names_an_id_twice_keeps_the_last() -> None:
    index = UserIndex()
    index.upsert([memory("m1", "likes green tea"), memory("m2", "likes coffee"),
                  memory("m1", "likes oolong now")])  # fmt: skip
    assert len(index) == 2
    assert _ids(index, "oolong")[0] == "m1"
    assert dict(index.search("green tea", unit(0), k=2, now=NOW, weights=W))["m1"].lexical == 0.0


def test_a_bad_batch_leaves_the_index_as_it_was() -> None:
    index = UserIndex()
    index.upsert([memory("m1", "likes green tea")])
    before = index.search("green tea", unit(0), k=5, now=NOW, weights=W)
    wide = memory("m3", "a wider vector", vector=np.ones(DIM + 1, dtype=np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        index.upsert([memory("m2", "likes coffee"), wide])
    bad_kind = memory("m4", "no such kind", kind="nonsense")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        index.upsert([memory("m2", "likes coffee"), bad_kind])
    replacing = memory("m1", "likes oolong now", kind="nonsense")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        index.upsert([replacing])
    with pytest.raises(ValueError, match=f"holds {DIM}"):
        index.upsert([wide])
    assert len(index) == 1 and "m2" not in index
    assert index.search("green tea", unit(0), k=5, now=NOW, weights=W) == before
    index.upsert([memory("m2", "likes coffee")])  # and it still takes good ones
    assert _ids(index, "coffee")[0] == "m2"
    # Every memory replaced at once by vectors of another width (a new embedding model).
    wider = np.ones(DIM + 1, dtype=np.float32) / np.sqrt(DIM + 1)
    index.upsert([memory("m1", "likes green tea", vector=wider),
                  memory("m2", "likes coffee", vector=wider)])  # fmt: skip
    assert _ids(index, "coffee", wider)[0] == "m2"


def test_kinds_filter() -> None:
    index = UserIndex()
    index.upsert([memory("e", "uses vim", kind=MemoryKind.EPISODIC),
                  memory("p", "uses vim", kind=MemoryKind.PREFERENCE)])  # fmt: skip
    assert _ids(index, "vim", kinds={MemoryKind.PREFERENCE}) == ["p"]
    assert UserIndex().search("x", unit(1), k=3, now=NOW, weights=W) == []


def test_query_naming_a_speaker_favours_their_memories() -> None:
    index = UserIndex()
    index.upsert([memory("a", "Anna: I adopted a cat", speaker="Anna"),
                  memory("b", "Ben: I adopted a cat", speaker="Ben")])  # fmt: skip
    assert _ids(index, "What pet did Ben adopt?")[0] == "b"
    assert _ids(index, "What pet did Anna adopt?")[0] == "a"


def test_query_time_expression_matches_when_it_happened() -> None:
    index = UserIndex()
    index.upsert([memory("old", "went hiking", days_ago=70),
                  memory("recent", "went hiking", days_ago=8),
                  memory("said", "went hiking yesterday", days_ago=40)])  # fmt: skip
    flat = RankingWeights(beta=0.0)
    hits = index.search("hiking last week", unit(0), k=3, now=NOW, weights=flat)
    assert hits[0][0] == "recent" and hits[0][1].temporal > 0
    # "yesterday" said 40 days ago dates the event 41 days ago: the query's month matches it.
    month = index.search("hiking in April", unit(0), k=3, now=NOW, weights=flat)
    assert month[0][0] == "said"


def test_when_question_prefers_memories_that_state_a_time() -> None:
    index = UserIndex()
    index.upsert([memory("a", "moved to Porto"), memory("b", "moved to Porto two years ago")])
    assert _ids(index, "When did I move to Porto?", unit(0))[0] == "b"


def test_chinese_memories_are_found_lexically() -> None:
    index = UserIndex()
    index.upsert([*filler(20), memory("zh", "用户喜欢喝乌龙茶", vector=unit(3))])
    assert _ids(index, "我喜欢什么茶？")[0] == "zh"


def test_representation_feeds_the_index() -> None:
    mem = NewMemory(
        content="I adopted a cat",
        context="Ben: any news?",
        occurred_at=NOW - timedelta(days=2),
        ttl_days=30,
        provenance={"dia_ids": ["D1:2", "D1:3"], "speaker": "Anna", "session": "s1"},
    )
    assert index_text(mem.content, speaker="Anna") == "Anna: I adopted a cat"
    assert embed_text(mem.content, speaker="Anna", context=mem.context) == (
        "Anna: I adopted a cat\nBen: any news?"
    )
    item = indexed_memory("m1", mem, unit(1), now=NOW)
    assert (item.speaker, item.group, item.span) == ("Anna", "s1", 2)
    assert item.expires_at == NOW + timedelta(days=30)
    index = UserIndex()
    index.upsert([item, memory("m2", "Ben: I adopted a cat", speaker="Ben")])
    assert index.span("m1") == 2
    assert _ids(index, "did Anna adopt a cat")[0] == "m1"


def test_a_weak_lexical_leg_counts_by_its_strength() -> None:
    from memory.recall.lexical import LexicalIndex
    from memory.recall.retrieval_signals import LEXICAL_FLOOR, lexical

    index = LexicalIndex()
    for slot in range(40):
        index.add(slot, ["filler", f"w{slot}"] + (["trip", "plan"] if slot % 5 == 0 else []))
    index.add(3, ["oyelaran"])
    live = np.ones(40, dtype=np.bool_)
    common = index.scores(["trip"], 40)
    assert 0 < float(common.max()) < LEXICAL_FLOOR  # a word in 8 of 40 memories: weak
    plain = lexical([index], ["trip"], [], live)
    guarded = lexical([index], ["trip"], [], live, guard=True)
    assert np.allclose(guarded, plain * float(common.max()) / LEXICAL_FLOOR)
    assert np.argmax(guarded) == np.argmax(plain)  # the order within the leg is kept
    # A rare name below the floor is strong evidence all the same: left as it is.
    rare = lexical([index], ["oyelaran"], [], live, guard=True)
    assert np.allclose(rare, lexical([index], ["oyelaran"], [], live))


def test_the_guard_lets_dense_similarity_order_weak_word_matches() -> None:
    """A one-line fact beats long replies that share only a common word with the query."""
    query = unit(1)
    replies = [
        memory(
            f"r{i}",
            "When you plan a trip, book early, compare prices, check the transport and keep "
            "every booking in one place; trips are easier with a checklist.",
            vector=(v := query + 0.6 * unit(i + 10)) / np.linalg.norm(v),
        )
        for i in range(6)
    ]
    fact = memory("fact", "I booked a hotel in Lumiar for three nights.", vector=query)
    index = UserIndex()
    index.upsert([*replies, fact, *filler(30)])
    first = {}
    for guard in (False, True):
        # The dense leg at full weight (no trust ramp): this is the guard's effect alone.
        weights = RankingWeights(weak_leg_guard=guard, feedback_docs=0, dense_trust_high=0.0)
        found = index.search("where is my trip accommodation", query, k=3, now=NOW, weights=weights)
        first[guard] = found[0][0]
    assert first[True] == "fact"
    assert first[False] != "fact"  # without the guard, the shared common word wins


def _near(query: np.ndarray, noise: float, seed: int) -> np.ndarray:
    v = query + noise * unit(seed)
    return v / np.linalg.norm(v)


def test_copies_of_a_text_do_not_crowd_out_the_answer() -> None:
    """Three copies of a stock reply outscore the answer; the best copy stays, two follow it."""
    query = unit(1)
    reply = "Good gifts are personal or useful, something connected to the place."
    copies = [memory(f"c{i}", reply, vector=_near(query, 0.3 + 0.05 * i, 20 + i))
              for i in range(3)]  # fmt: skip
    answer = memory("answer", "For the gift we agreed on hand-painted tiles.",
                    vector=_near(query, 0.9, 30))  # fmt: skip
    index = UserIndex()
    distinct = [memory(f"f{i}", f"note {i} on subject{i}", vector=unit(100 + i)) for i in range(30)]
    index.upsert([*copies, answer, *distinct])
    weights = RankingWeights(feedback_docs=0, hop=0.0)
    ranked = index.search("what present are we giving", query, k=40, now=NOW, weights=weights)
    ids = [mid for mid, _ in ranked]
    scores = dict(ranked)
    # Every copy scores above the answer: plain sorting would put all three first.
    assert min(scores[f"c{i}"].total for i in range(3)) > scores["answer"].total
    assert ids[:2] == ["c0", "answer"]
    assert set(ids[-2:]) == {"c1", "c2"}  # nothing is lost: the copies come last
    assert _ids(index, "what present are we giving", query, k=2) == ["c0", "answer"]
    # Case and spacing do not make a different text.
    assert copy_key(reply) == copy_key("  " + reply.upper().replace(" ", "  "))


def test_chatter_borrows_no_similarity_from_its_context() -> None:
    """ "ok, thanks" embedded with a talk about knees matches a knee question; it ranks last."""
    query = unit(1)
    thanks = memory("thanks", "ok, thanks", vector=_near(query, 0.1, 40))
    answer = memory("answer", "I switched to Hoka shoes and the knee pain got better.",
                    vector=_near(query, 0.6, 41))  # fmt: skip
    index = UserIndex()
    index.upsert([thanks, answer, *filler(30)])
    weights = RankingWeights(feedback_docs=0, hop=0.0)
    found = dict(index.search("what helped my knee", query, k=40, now=NOW, weights=weights))
    assert found["thanks"].similarity == 0.0 < found["answer"].similarity
    assert next(iter(found)) == "answer"
    assert is_chatter("ok, thanks") and is_chatter("好的，谢谢") and is_chatter("Hey!")
    assert not is_chatter("thanks, the oboe lesson moved to Friday")
    assert not is_chatter("我爸下个月要做白内障手术")


def test_a_given_lowest_cosine_anchors_the_dense_scores_of_a_partial_index() -> None:
    """L2 indexes only a query's candidates: its nearest memories and its word matches. Scaled
    from the candidates' own lowest cosine, a word match far from the query in meaning got no
    similarity at all beside the nearest ones; anchored at the user's lowest it keeps its share.
    """
    query = unit(1)
    near = [memory(f"n{i}", f"weekly sync notes {i}", vector=_near(query, 0.4, 40 + i))
            for i in range(12)]  # fmt: skip
    named = memory("named", "Dr. Okonkwo-Baptiste recommended a second scan",
                   vector=_near(query, 3.0, 60))  # fmt: skip
    index = UserIndex()
    index.upsert([*near, named])
    cosine = float(named.vector @ query)
    assert cosine < min(float(m.vector @ query) for m in near)  # the candidates' lowest
    weights = RankingWeights(feedback_docs=0, hop=0.0, dense_trust_high=0.0, fallback=0.0)
    query_text = "when is the appointment with Okonkwo-Baptiste"
    alone = dict(index.search(query_text, query, k=20, now=NOW, weights=weights))
    anchored = dict(index.search(query_text, query, k=20, now=NOW, weights=weights,
                                 lowest=cosine - 0.5))  # fmt: skip
    assert alone["named"].similarity == 0.0
    assert anchored["named"].similarity > 0.1
    # The nearest keep their order and the best its full similarity.
    order = sorted(near, key=lambda m: -float(m.vector @ query))
    assert max(b.similarity for b in anchored.values()) == alone[order[0].id].similarity
    assert [m.id for m in order] == sorted(
        (m.id for m in near), key=lambda i: -anchored[i].similarity
    )
