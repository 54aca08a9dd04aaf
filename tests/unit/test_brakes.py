from memory.working.brakes import BrakeLimits, check_brakes
from memory.working.task_state import TaskState, new_task_state, record_outcome, record_step

LIMITS = BrakeLimits(max_steps_per_task=5, max_retries_per_action=2, token_budget_per_task=1000)


def test_steps_trip_exactly_at_the_limit() -> None:
    ts = new_task_state("g")
    for _ in range(4):
        ts = record_step(ts)
        assert check_brakes(ts, LIMITS) is None
    ts = record_step(ts)  # the 5th step has run: no 6th
    trip = check_brakes(ts, LIMITS)
    assert trip is not None
    assert trip["brake"] == "max_steps_per_task"
    assert (trip["value"], trip["limit"]) == (5, 5)
    assert "5 steps" in trip["reason"]


def test_retries_trip_after_first_try_plus_max_retries() -> None:
    ts = new_task_state("g")
    for _ in range(3):  # first try + 2 retries, all failing
        assert check_brakes(ts, LIMITS, action="deploy") is None
        ts = record_outcome(ts, action="deploy", ok=False, error="503")
    trip = check_brakes(ts, LIMITS, action="deploy")
    assert trip is not None
    assert trip["brake"] == "max_retries_per_action"
    assert trip["action"] == "deploy" and trip["value"] == 3 and trip["limit"] == 2


def test_retry_brake_is_per_action_and_resets_on_success() -> None:
    ts = new_task_state("g")
    for _ in range(3):
        ts = record_outcome(ts, action="deploy", ok=False)
    assert check_brakes(ts, LIMITS, action="lint") is None
    assert check_brakes(ts, LIMITS) is not None  # the worst action is checked by default
    ts = record_outcome(ts, action="deploy", ok=True)
    assert check_brakes(ts, LIMITS) is None


def test_token_budget() -> None:
    ts = record_step(new_task_state("g"), tokens=999)
    assert check_brakes(ts, LIMITS) is None
    ts = record_step(ts, tokens=1)
    trip = check_brakes(ts, LIMITS)
    assert trip is not None and trip["brake"] == "token_budget_per_task"
    assert trip["value"] == 1000 and "1,000" in trip["reason"]


def test_disabled_brakes_never_trip() -> None:
    ts: TaskState = new_task_state("g")
    ts["steps"], ts["tokens_used"], ts["retries"] = 10**6, 10**9, {"x": 99}
    off = BrakeLimits(None, None, None)
    assert check_brakes(ts, off) is None


def test_order_retries_then_steps_then_tokens() -> None:
    ts: TaskState = new_task_state("g")
    ts["steps"], ts["tokens_used"], ts["retries"] = 50, 5000, {"x": 9}
    trip = check_brakes(ts, LIMITS)
    assert trip is not None and trip["brake"] == "max_retries_per_action"
    ts["retries"] = {}
    trip = check_brakes(ts, LIMITS)
    assert trip is not None and trip["brake"] == "max_steps_per_task"
