"""benchmarks/budgets.py times its ratios by the wall clock or, with ``--clock cpu``, by the
solving process's CPU time, and a run stopped by the timeout decides only on the wall clock."""

import budgets


def _item(rows: dict) -> dict:
    return {"fraction": 1.0, "budget": 100, "runs": rows, "n_seeds": 2}


def _run(wall: float, cpu: float) -> dict:
    return {"expected_accuracy": 0.9, "seconds": wall, "cpu_seconds": cpu}


def test_the_cpu_clock_reads_cpu_seconds_and_the_wall_clock_seconds():
    item = _item(
        {
            "tvcs-iht": {0: _run(4.0, 2.0), 1: _run(6.0, 4.0)},
            "greedy": {0: _run(2.0, 2.0), 1: _run(2.0, 2.0)},
        }
    )
    assert budgets.time_ratio(item, "tvcs-iht", "greedy") == (2.5, "=")
    assert budgets.time_ratio(item, "tvcs-iht", "greedy", "cpu_seconds") == (1.5, "=")


def test_a_timed_out_run_is_a_lower_bound_on_the_wall_clock_and_undecided_on_the_cpu_clock():
    stopped = {"timed_out": True, "seconds_at_least": 300.0}
    item = _item({"q-lp": {0: _run(100.0, 90.0), 1: stopped}})
    assert budgets.mean_seconds(item, "q-lp") == (200.0, ">")
    assert budgets.mean_seconds(item, "q-lp", "cpu_seconds") is None


def test_the_targets_fail_or_pass_by_the_clock_asked_for():
    item = _item(
        {
            "tvcs-iht": {0: _run(4.0, 2.8)},
            "greedy": {0: _run(2.0, 2.0)},
        }
    )
    summary = {(10, 20, "uniform"): [item]}
    wall = [line for line in budgets.targets(summary) if "greedy's time" in line]
    cpu = [line for line in budgets.targets(summary, "cpu_seconds") if "greedy's time" in line]
    assert wall[0].startswith("- FAIL")
    assert "2.00x" in wall[0]
    assert cpu[0].startswith("- PASS")
    assert "1.40x" in cpu[0]
