"""What each of tvcs-iht's IHT steps adds, and what stopping after the first would cost.

Two measurements behind the defaults of :mod:`assignment.engine.tvcs_iht` (``patience`` 1,
``max_iter`` 10):

* **per step**: on the budget sweep's skill x difficulty problems at 200 x 10,000 (cap ratio
  3%, 75% and 100% of what the caps allow, seeds 0 and 1; :mod:`benchmarks.instances`), 20 steps
  with nothing to stop them (``patience=20``, no final pass) and the exact accuracy of every
  step's support, in points above greedy's start;
* **one step or up to ten**: the default against ``max_iter=1`` (both with the final pass), in
  points above greedy, on problems where greedy leaves budget unspent: two labels (skill x
  difficulty, 100 x 1,000 and 200 x 2,000, cap ratios 5% and 10% up to 10 workers a task) and
  three and four labels (the same quality mapped to ``[1/K, 1]``, 50 x 500 and 100 x 1,000).

Run from the repository root (about 10 minutes)::

    python benchmarks/step_gains.py --out docs/benchmarks/step-gains.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assignment.engine.problem import AssignmentProblem  # noqa: E402
from assignment.engine.solve import solve  # noqa: E402
from benchmarks.instances import caps, make_problem, make_quality  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402

FORCED = {"bound_gap": 0.0, "search_when_spent": True}


def per_step(n: int, m: int, fraction: float, seed: int, steps: int) -> list[float]:
    """Points above greedy's start after each of ``steps`` steps (no stop, no final pass)."""
    problem = make_problem(n, m, 0.03, seed, fraction=fraction, quality="skill-difficulty")
    out = solve(
        problem,
        method="tvcs-iht",
        seed=seed,
        max_iter=steps,
        patience=steps,
        refine=False,
        **FORCED,
    )
    start = out.details["start_accuracy"]
    return [100 * (accuracy - start) for _, accuracy in out.history[1:]]


def labelled_problem(n_labels: int, n: int, m: int, ratio: float, fraction: float, seed: int):
    """Skill x difficulty quality mapped from ``[0.5, 0.95]`` to ``[1/K, ~0.93]``."""
    q = make_quality(n, m, "skill-difficulty", seed)
    if n_labels > 2:
        q = 1 / n_labels + (q - 0.5) / 0.5 * (1 - 1 / n_labels) * 0.9
    per_task, per_worker, budget = caps(n, m, ratio, fraction)
    return AssignmentProblem(
        q,
        max_workers_per_task=min(per_task, 10),
        max_tasks_per_worker=per_worker,
        budget=budget,
        n_labels=n_labels,
    )


def one_or_ten(n_labels: int, n: int, m: int, ratio: float, fraction: float, seed: int):
    """``(default - greedy, max_iter=1 - greedy)`` in points, or None when greedy spends the
    whole budget (no steps then, two labels)."""
    problem = labelled_problem(n_labels, n, m, ratio, fraction, seed)
    greedy = solve(problem, method="greedy", seed=seed)
    if len(greedy.rows) >= problem.budget:
        return None
    default = solve(problem, method="tvcs-iht", seed=seed)
    one = solve(problem, method="tvcs-iht", seed=seed, max_iter=1)
    base = greedy.expected_accuracy
    return 100 * (default.expected_accuracy - base), 100 * (one.expected_accuracy - base)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    add_out_option(parser)
    args = parser.parse_args(argv)
    lines = [
        "# tvcs-iht: what each IHT step adds",
        "",
        f"- command: `python benchmarks/step_gains.py {' '.join(argv)}`".rstrip(),
        "",
        "## Per step, from greedy's start (points above it; no stop, no final pass)",
        "",
        "| problem | step 1 | steps 2.. together | best step |",
        "|---|---:|---:|---:|",
    ]
    for fraction in (0.75, 1.0):
        for seed in (0, 1):
            gains = per_step(200, 10000, fraction, seed, args.steps)
            later = max(gains[1:]) - gains[0] if len(gains) > 1 else 0.0
            lines.append(
                f"| 200x10000 skill x difficulty, f = {fraction:g}, seed {seed} "
                f"| {gains[0]:+.3f} | {later:+.3f} | {1 + int(np.argmax(gains))} |"
            )
    lines += [
        "",
        "## Up to ten steps (the default) or one, with the final pass (points above greedy)",
        "",
        "| labels | problems (greedy left budget) | steps won | default - one step: "
        "mean | min | max |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    small = ((50, 500), (100, 1000))
    sizes = {2: ((100, 1000), (200, 2000)), 3: small, 4: small}
    for n_labels, shapes in sizes.items():
        rows = [
            one_or_ten(n_labels, n, m, ratio, fraction, seed)
            for n, m in shapes
            for ratio in (0.05, 0.1)
            for fraction in (0.5, 1.0)
            for seed in (0, 1)
        ]
        rows = [row for row in rows if row is not None]
        won = [row for row in rows if row[0] > 1e-10]
        diff = [default - one for default, one in won] or [0.0]
        lines.append(
            f"| {n_labels} | {len(rows)} | {len(won)} | {np.mean(diff):+.3f} "
            f"| {min(diff):+.3f} | {max(diff):+.3f} |"
        )
    publish(lines, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
