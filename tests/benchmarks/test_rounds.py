"""benchmarks/rounds.py chooses dynamic overlap's threshold on held-out tuning seeds, runs only
the dynamic arms there, resumes from its results file and re-renders it with --report-only."""

import json

import pytest
import rounds


def _grid(**changes):
    fields = {
        "n": 6,
        "m": 12,
        "per_task": 3,
        "per_worker": 8,
        "crowds": ["beta"],
        "seen": ["true"],
        "budgets": [2.0],
        "seeds": [0, 1],
        "arms": [rounds.ONE_SHOT, rounds.layered_arm(3), "dynamic k=1 t=0.9", "dynamic k=1 t=0.95"],
        "tune_seeds": (1000, 1001),
    }
    return rounds.Grid(**{**fields, **changes})


def _row(grid, seed, arm, accuracy):
    return {
        "size": grid.size,
        "caps": grid.caps,
        "crowd": "beta",
        "seen": "true",
        "b": 2.0,
        "seed": seed,
        "arm": arm,
        "realised_accuracy": accuracy,
    }


def _rows(grid, accuracies):
    rows = [_row(grid, seed, arm, acc) for (seed, arm), acc in accuracies.items()]
    return {rounds.row_key(row): row for row in rows}


def test_the_tuned_threshold_is_the_best_on_the_tuning_seeds_not_on_the_scored_ones():
    grid = _grid()
    low, high = "dynamic k=1 t=0.9", "dynamic k=1 t=0.95"
    rows = _rows(
        grid,
        {
            (0, low): 0.80, (1, low): 0.80, (0, high): 0.90, (1, high): 0.90,
            (1000, low): 0.95, (1001, low): 0.95, (1000, high): 0.70, (1001, high): 0.70,
        },
    )  # fmt: skip

    assert rounds.dynamic_for(rows, grid, "beta", "true", 2.0, rounds.TUNED) == low
    assert rounds.dynamic_for(rows, grid, "beta", "true", 2.0, rounds.ORACLE) == high


def test_a_tie_between_thresholds_goes_to_the_larger_one():
    grid = _grid()
    rows = _rows(grid, {(1000, "dynamic k=1 t=0.9"): 0.8, (1000, "dynamic k=1 t=0.95"): 0.8})

    assert rounds.dynamic_for(rows, grid, "beta", "true", 2.0, rounds.TUNED) == "dynamic k=1 t=0.95"


def test_the_targets_compare_with_the_tuned_threshold_not_the_oracle_one():
    grid = _grid(arms=[rounds.layered_arm(3), "dynamic k=1 t=0.9", "dynamic k=1 t=0.95"])
    top, low, high = rounds.layered_arm(3), "dynamic k=1 t=0.9", "dynamic k=1 t=0.95"
    rows = _rows(
        grid,
        {
            (0, top): 0.85, (1, top): 0.85,
            (0, low): 0.80, (1, low): 0.80, (0, high): 0.90, (1, high): 0.90,
            (1000, low): 0.95, (1000, high): 0.70,
        },
    )  # fmt: skip

    (line,) = rounds.targets(rows, grid)

    assert line.startswith("- PASS [beta, quality seen: true]")
    assert "tuned on held-out seeds" in line
    assert "b=2: +5.00 ± 0.00 pts" in line


def test_the_tuning_seeds_run_only_the_dynamic_arms_and_a_second_run_runs_nothing(tmp_path):
    grid = _grid()
    results = tmp_path / "rounds.jsonl"

    rows, cells, _ = rounds.run_all(grid, results, ["--test"])
    again, cells_again, _ = rounds.run_all(grid, results, ["--test"])

    arms_by_seed = {}
    for row in map(json.loads, results.read_text().splitlines()):
        arms_by_seed.setdefault(row["seed"], set()).add(row["arm"])
    dynamic = {"dynamic k=1 t=0.9", "dynamic k=1 t=0.95"}
    assert arms_by_seed == {0: set(grid.arms), 1: set(grid.arms), 1000: dynamic, 1001: dynamic}
    assert (cells, cells_again) == (4, 0)
    assert again.keys() == rows.keys()


def _options(results):
    return [
        "--size", "6x12", "--max-workers-per-task", "3", "--max-tasks-per-worker", "8",
        "--crowds", "beta", "--seen", "true", "--budgets", "2", "--seeds", "2",
        "--tune-seeds", "2", "--rounds", "3", "--layered", "", "--layers-only", "",
        "--thresholds", "0.9,0.95", "--no-random", "--results", str(results),
    ]  # fmt: skip


def test_report_only_renders_the_tuned_and_the_oracle_threshold_from_the_results_file(tmp_path):
    results, out = tmp_path / "rounds.jsonl", tmp_path / "rounds.md"
    rounds.main(_options(results))
    ran = results.read_text()

    rounds.main([*_options(results), "--report-only", "--out", str(out)])

    report = out.read_text()
    assert results.read_text() == ran
    assert "| dynamic (t tuned on held-out seeds) | dynamic (best t on these seeds) |" in report
    assert "On the tuning seeds 1000..1001" in report
    assert "3 rounds > dynamic overlap (threshold tuned on held-out seeds)" in report


@pytest.mark.parametrize("tune", [["--tune-from", "1"], ["--tune-seeds", "-1"]])
def test_tuning_seeds_that_overlap_the_scoring_seeds_are_refused(tmp_path, tune):
    with pytest.raises(SystemExit):
        rounds.main([*_options(tmp_path / "r.jsonl"), *tune, "--report-only"])
