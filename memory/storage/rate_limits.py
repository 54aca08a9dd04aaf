"""Per-user rate limits shared by every server worker: GCRA in one Postgres row per action.

The generic cell rate algorithm is a token bucket kept as a single number, the bucket's
"theoretical arrival time" (TAT): each request pushes it one emission interval (a minute over
the rate) past max(TAT, now), and is refused when that would put it more than a whole burst
ahead of now. One conditional upsert decides and records, so two workers taking the last token
at once cannot both win (the row lock orders them), and the clock is the database's, the same
for every worker. A refused request changes nothing and learns when the next one is due.
"""

from __future__ import annotations

from memory.storage.db import Database
from memory.types import Scope

# Decides and records in one statement: the update's WHERE is the admission test, so a refused
# request leaves the row as it was and RETURNING yields nothing.
_TAKE_SQL = """
WITH clock AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS now)
INSERT INTO rate_limits AS r (tenant_id, user_id, action, tat)
SELECT $1, $2, $3, clock.now + $4 FROM clock
ON CONFLICT (tenant_id, user_id, action) DO UPDATE
    SET tat = greatest(r.tat, (SELECT now FROM clock)) + $4
    WHERE greatest(r.tat, (SELECT now FROM clock)) + $4 - (SELECT now FROM clock) <= $5
RETURNING tat
"""
_WAIT_SQL = """
SELECT tat - $4 - extract(epoch FROM clock_timestamp())::float8
FROM rate_limits WHERE tenant_id = $1 AND user_id = $2 AND action = $3
"""


async def take(pool: Database, scope: Scope, action: str, per_minute: int) -> float | None:
    """Admit one `action` of the user at `per_minute` (bursts of up to `per_minute`).

    None when admitted; else the seconds until one would be (always > 0).
    """
    if per_minute <= 0:
        raise ValueError("per_minute must be positive")
    interval = 60.0 / per_minute
    burst = 60.0  # a whole minute's worth may come at once, then one per interval
    args = (scope.tenant_id, scope.user_id, action, interval)
    if await pool.fetchval(_TAKE_SQL, *args, burst) is not None:
        return None
    # Refused: the bucket is full until TAT - burst + interval, i.e. TAT + interval - burst.
    wait = await pool.fetchval(_WAIT_SQL, scope.tenant_id, scope.user_id, action, burst - interval)
    return max(float(wait or 0.0), 0.001)


__all__ = ["take"]
