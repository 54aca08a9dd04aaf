import json

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from memory.working.task_state import (
    MAX_CONSTRAINTS,
    extract_constraints,
    new_task_state,
    record_outcome,
    record_step,
    task_state_lines,
    update_task_from_turn,
)


def test_first_instruction_sets_goal_and_constraints() -> None:
    ts = update_task_from_turn(
        None, "New task: generate the weekly report. It must be in Chinese. 不得泄露内部仓库地址。"
    )
    assert ts["goal"] == "generate the weekly report."
    assert ts["constraints"] == ["It must be in Chinese.", "不得泄露内部仓库地址。"]
    assert ts["turns"] == 1 and ts["steps"] == 0


def test_later_instruction_is_a_step_and_constraints_persist() -> None:
    ts = update_task_from_turn(None, "Build the export job. Never email customers.")
    ts = update_task_from_turn(ts, "Now add a CSV writer")
    ts = update_task_from_turn(ts, "What does the writer do?")
    assert ts["goal"] == "Build the export job."
    assert ts["current_step"] == "Now add a CSV writer"
    assert ts["constraints"] == ["Never email customers."]
    assert ts["turns"] == 3


def test_constraint_before_goal_is_kept() -> None:
    ts = update_task_from_turn(None, "Always answer in English.")
    assert ts["goal"] is None and ts["constraints"] == ["Always answer in English."]
    ts = update_task_from_turn(ts, "Write a release note for version 2.1")
    assert ts["goal"] == "Write a release note for version 2.1"
    assert ts["constraints"] == ["Always answer in English."]


def test_new_task_resets_counters_and_constraints() -> None:
    ts = update_task_from_turn(None, "Fix the login bug. Don't touch the session store.")
    ts = record_step(ts, tokens=500)
    ts = record_outcome(ts, action="run_tests", ok=False, error="3 tests failed")
    ts = update_task_from_turn(ts, "New task: write the changelog for 3.0")
    assert ts["goal"] == "write the changelog for 3.0"
    assert ts["constraints"] == [] and ts["steps"] == 0 and ts["tokens_used"] == 0
    assert ts["retries"] == {} and ts["last_error"] is None
    ts2 = update_task_from_turn(ts, "新任务：翻译文档，必须保留格式")
    assert ts2["goal"] == "翻译文档"
    assert ts2["constraints"] == ["必须保留格式"]


def test_duplicate_constraints_are_not_repeated() -> None:
    ts = update_task_from_turn(None, "Never use tabs.")
    ts = update_task_from_turn(ts, "never use tabs!")
    assert ts["constraints"] == ["Never use tabs."]


def test_constraint_cap() -> None:
    ts = new_task_state("g")
    for i in range(MAX_CONSTRAINTS + 5):
        ts = update_task_from_turn(ts, f"You must follow rule number {i}.")
    assert len(ts["constraints"]) == MAX_CONSTRAINTS
    assert ts["constraints"][-1] == f"You must follow rule number {MAX_CONSTRAINTS + 4}."


def test_questions_are_not_constraints() -> None:
    assert extract_constraints("Must I use Python? We must ship by Friday.") == [
        "We must ship by Friday."
    ]


def test_outcomes_count_retries_per_action() -> None:
    ts = new_task_state("deploy")
    ts = record_outcome(ts, action="deploy", ok=False, error="timeout", next_action="retry")
    ts = record_outcome(ts, action="deploy", ok=False, error="timeout again")
    ts = record_outcome(ts, action="lint", ok=True)
    assert ts["attempts"] == 3
    assert ts["retries"] == {"deploy": 2}
    assert ts["last_error"] == "timeout again"
    assert ts["next_action"] == "retry"
    ts = record_outcome(ts, action="deploy", ok=True, step="verify")
    assert ts["retries"] == {} and ts["current_step"] == "verify"


def test_functions_do_not_mutate_their_input() -> None:
    ts = new_task_state("g")
    snapshot = json.dumps(ts)
    record_step(ts, tokens=10)
    record_outcome(ts, action="a", ok=False, error="e")
    update_task_from_turn(ts, "Never do X.")
    assert json.dumps(ts) == snapshot


def test_format_lists_goal_then_constraints() -> None:
    ts = update_task_from_turn(None, "Migrate the DB. Never drop tables.")
    ts = record_outcome(ts, action="migrate", ok=False, error="lock timeout", next_action="retry")
    text = "\n".join(task_state_lines(ts))
    lines = text.splitlines()
    assert lines[0] == "Goal: Migrate the DB."
    assert lines[1] == "Constraint (holds for the whole task): Never drop tables."
    assert "Last error: lock timeout" in text and "Next action: retry" in text
    assert task_state_lines(new_task_state()) == []


def test_state_survives_the_checkpointer_serializer() -> None:
    ts = update_task_from_turn(None, "Build it. Never use eval.")
    ts = record_outcome(ts, action="build", ok=False, error="boom")
    serde = JsonPlusSerializer()
    assert serde.loads_typed(serde.dumps_typed(ts)) == ts
