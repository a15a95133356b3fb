"""The run page's charts from a run's summary (assignment.pictures)."""

from __future__ import annotations

from assignment.pictures import run_charts


def test_grouped_counts_are_labelled_by_their_range_and_a_group_of_one_by_its_value():
    tasks_per_worker = [1] * 82  # one worker each with 0..81 tasks: more values than bars
    summary = {"workers_per_task": [0, 3], "tasks_per_worker": tasks_per_worker}
    _, pair = run_charts(summary)
    per_worker = pair.wide
    labels = [bar.label for bar in per_worker.bars]
    assert labels[:2] == ["0\u20132", "3\u20135"]  # 82 values in bars of 3
    assert labels[-1] == "81"  # not "81-81"
    assert sum(bar.value for bar in per_worker.bars) == 82
