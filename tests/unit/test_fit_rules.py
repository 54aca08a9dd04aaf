"""The acceptance rules of the weight searches on the development sets."""

from __future__ import annotations

from bench.fit_gate_weights import Score
from bench.fit_ranking import SetScore, admissible, objective

NAMES = ["a", "b", "c", "d", "e"]


def _sets(**sums: tuple[float, float]) -> dict[str, SetScore]:
    base = dict.fromkeys(NAMES, (5.0, 8.0))
    base.update(sums)
    return {name: (r5, r10, 10) for name, (r5, r10) in base.items()}


def test_objective_is_the_mean_over_sets_of_r5_plus_r10() -> None:
    assert objective(_sets(), NAMES) == 1.3
    assert objective(_sets(a=(10.0, 10.0)), NAMES) == (2.0 + 4 * 1.3) / 5


def test_a_move_that_gains_on_three_sets_and_hurts_none_is_taken() -> None:
    new = _sets(a=(6.0, 8.0), b=(5.0, 9.0), c=(6.0, 9.0))
    assert admissible(new, _sets(), NAMES, 3)


def test_gains_on_two_sets_are_not_enough() -> None:
    new = _sets(a=(7.0, 9.0), b=(7.0, 9.0))
    assert not admissible(new, _sets(), NAMES, 3)


def test_losing_more_than_one_question_on_any_set_vetoes_the_move() -> None:
    # Large gains on four sets, but set e loses 1.5 questions at R@5.
    new = _sets(a=(9.0, 9.0), b=(9.0, 9.0), c=(9.0, 9.0), d=(9.0, 9.0), e=(3.5, 8.0))
    assert not admissible(new, _sets(), NAMES, 3)
    # Losing exactly one question is tolerated.
    new = _sets(a=(9.0, 9.0), b=(9.0, 9.0), c=(9.0, 9.0), d=(9.0, 9.0), e=(4.0, 8.0))
    assert admissible(new, _sets(), NAMES, 3)


def test_a_tie_keeps_the_current_value() -> None:
    assert not admissible(_sets(), _sets(), NAMES, 0)


def test_gate_objective_is_corpus_f1_plus_youden_j_on_cited_turns() -> None:
    score = Score(
        precision=1.0, recall=0.9, f1=0.95, evidence_kept=9, evidence=10, other_kept=25, other=100
    )
    assert abs(score.j - (0.9 - 0.25)) < 1e-12
    assert abs(score.objective - (0.95 + 0.65)) < 1e-12
