"""benchmarks/dpc.py writes a report whose paper lines give Table 1 in minutes and whose notes
say whether the run had the paper's 50 tasks x 50 samples."""

import argparse

import dpc


def _args(tasks, samples=50):
    return argparse.Namespace(tasks=tasks, samples=samples, trials=2)


def test_a_run_at_the_papers_50_tasks_and_samples_says_they_were_measured():
    notes = "\n".join(dpc._differences(_args(50)))
    assert "the paper's 50 x 50 (measured here)" in notes
    assert "not measured" not in notes


def test_a_run_with_fewer_tasks_says_the_papers_50_were_not_measured():
    notes = "\n".join(dpc._differences(_args(10)))
    assert "this run used 10, so its ratios at 50 tasks are not measured here" in notes
    assert "measured here)" not in notes


def test_the_report_gives_the_papers_times_in_minutes_beside_the_measured_ones(tmp_path):
    out = tmp_path / "dpc.md"
    argv = ["--tasks", "3", "--samples", "10", "--dims", "40", "--n-lambdas", "5"]
    dpc.main([*argv, "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "minutes, mean of 20 trials" in text
    assert "400-2,400 minutes per path" in text
    assert " s per path" not in text
    assert "| Synthetic 1 | 40 |" in text
    assert "| Synthetic 2 | 40 |" in text
    assert "not measured here" in text
