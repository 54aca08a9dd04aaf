"""Consolidation: the scheduled job that keeps long-term memory clean, one user at a time.

For one user, or every user in batches: expire TTLs → forget by decay → cluster episodes →
distil stable themes into long-term memory → merge near-duplicates → resolve conflicts with the
gate's policy. Every change is a new version with an audit event, so a run can be inspected
(`history`) and rolled back (`rollback`); a per-user advisory lock keeps two runs for one user
apart.

Modules: `run` (the `consolidate()` loop and its summary), `batch` (one batch of users: lock,
recover, step, finish), `steps` (the six steps), `versions` (applying a step's changes as
versions), `index` (Chroma following Postgres), `rollbacks`, `history` (runs and their diffs
for people), `types` (policy, decisions, a user's run), the pure planning rules (`decay`,
`cluster`, `agreement`, `distil`, `merge`) and `model` (distilling with a chat model).

The names below are loaded on first use: the profile module imports the planning rules of this
package, and the run loop imports the profile, so importing everything here eagerly would make
`import memory.longterm.profile` depend on itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.longterm.consolidation.batch import LostRun, OpenBatches, RunBatch
    from memory.longterm.consolidation.history import DIFF_FIELDS, list_runs, run_diff, run_users
    from memory.longterm.consolidation.rollbacks import (
        RollbackConflict,
        RollbackReport,
        UnknownRun,
        rollback,
    )
    from memory.longterm.consolidation.run import (
        RunSummary,
        consolidate,
        new_run_id,
        next_scopes,
    )
    from memory.longterm.consolidation.types import (
        STEPS,
        ConsolidationPolicy,
        Decision,
        StepContext,
        UserRun,
    )

_WHERE = {
    "LostRun": ".batch",
    "OpenBatches": ".batch",
    "RunBatch": ".batch",
    "DIFF_FIELDS": ".history",
    "list_runs": ".history",
    "run_diff": ".history",
    "run_users": ".history",
    "RollbackConflict": ".rollbacks",
    "RollbackReport": ".rollbacks",
    "UnknownRun": ".rollbacks",
    "rollback": ".rollbacks",
    "RunSummary": ".run",
    "consolidate": ".run",
    "new_run_id": ".run",
    "next_scopes": ".run",
    "STEPS": ".types",
    "ConsolidationPolicy": ".types",
    "Decision": ".types",
    "StepContext": ".types",
    "UserRun": ".types",
}

__all__ = [
    "DIFF_FIELDS",
    "STEPS",
    "ConsolidationPolicy",
    "Decision",
    "LostRun",
    "OpenBatches",
    "RollbackConflict",
    "RollbackReport",
    "RunBatch",
    "RunSummary",
    "StepContext",
    "UnknownRun",
    "UserRun",
    "consolidate",
    "list_runs",
    "new_run_id",
    "next_scopes",
    "rollback",
    "run_diff",
    "run_users",
]


__getattr__ = lazy_exports(__name__, _WHERE)
