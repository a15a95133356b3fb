"""Writes: every change to a project's data goes through one of these functions.

Each takes keyword-only arguments, validates, raises a :mod:`assignment.errors` domain error when
the user must correct something, and returns what it created. Grouped by subject: projects and
their data, quality, runs (and their rounds), comparisons, the demo, API tokens; import them from
here.
"""

from assignment.services.comparisons import (
    MAX_COMPARISON_RUNS,
    comparison_create,
    comparison_upper_bound_compute,
    comparison_upper_bound_fail,
)
from assignment.services.demo import DEMO_PASSWORD_FILE, demo_project_create, demo_user_ensure
from assignment.services.previews import RoundPreview, round_preview
from assignment.services.projects import (
    PROJECT_UPDATABLE_FIELDS,
    project_create,
    project_data_import,
    project_delete,
    project_update,
    project_update_check,
)
from assignment.services.quality import EM_MAX_ITERATIONS, quality_estimate
from assignment.services.rounds import run_hand_out, run_hand_out_refusal, run_withdraw
from assignment.services.runs import (
    run_cancel,
    run_claim,
    run_create,
    run_execute,
    run_fail,
    runs_enqueue,
    runs_hand_back,
    runs_reclaim,
    runs_recover_stale,
)
from assignment.services.shards import (
    shard_claim,
    shard_execute,
    shard_fail,
    shards_coordinate,
    shards_enqueue,
    shards_hand_back,
    shards_reclaim,
)
from assignment.services.tokens import api_token_for_sign_in, api_token_renew

__all__ = [
    "DEMO_PASSWORD_FILE",
    "EM_MAX_ITERATIONS",
    "MAX_COMPARISON_RUNS",
    "PROJECT_UPDATABLE_FIELDS",
    "RoundPreview",
    "api_token_for_sign_in",
    "api_token_renew",
    "comparison_create",
    "comparison_upper_bound_compute",
    "comparison_upper_bound_fail",
    "demo_project_create",
    "demo_user_ensure",
    "project_create",
    "project_data_import",
    "project_delete",
    "project_update",
    "project_update_check",
    "quality_estimate",
    "round_preview",
    "run_cancel",
    "run_claim",
    "run_create",
    "run_execute",
    "run_fail",
    "run_hand_out",
    "run_hand_out_refusal",
    "run_withdraw",
    "runs_enqueue",
    "runs_hand_back",
    "runs_reclaim",
    "runs_recover_stale",
    "shard_claim",
    "shard_execute",
    "shard_fail",
    "shards_coordinate",
    "shards_enqueue",
    "shards_hand_back",
    "shards_reclaim",
]
