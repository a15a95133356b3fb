"""Issue 13: a budget spent in rounds on posteriors, against one shot, dynamic overlap and random.

What it measures
----------------
Issue 13 asks whether assigning in rounds (assign, collect the answers, assign the rest of the
budget where it now helps most) labels more tasks correctly than spending the same budget at
once, or than a dynamic-overlap rule like Toloka's. This script simulates crowds, spends a total
budget ``B`` in each of these ways (the *arms*) and scores each by the **realised** accuracy of
its final labels against the simulated truth:

* ``one shot``: ``solve(problem, method=M)`` with the whole budget, ``M`` the method of
  ``--method`` (default tvcs-iht for two labels, greedy for more: every arm that solves uses it;
  "tvcs-iht" below stands for it);
* ``R rounds`` (``--rounds``, default 2 and 3): ``R`` solves of tvcs-iht, each on
  :func:`assignment.engine.rounds.next_round` of the answers so far (posteriors as priors,
  answered pairs out, caps reduced). Rounds ``1 .. R-1`` get ``floor(B / R)`` pairs each, the
  last round what remains of ``B`` (so a round that spends less than its share leaves it to the
  last one). Each round maximises the final accuracy as if it were the last (*myopic*);
* ``R rounds (layered)`` (``--layered``, default 3, 4 and 5): the non-myopic rule of the engine,
  :meth:`~assignment.engine.rounds.NextRound.solve_layered`. Each round solves the *rest*
  (tvcs-iht on ``next_round`` with all that remains of ``B``: a plan for every remaining round)
  and executes only part of it, breadth first (:func:`~assignment.engine.rounds.plan_layers`):
  every task's most informative planned worker before any task's second, least confident tasks
  first within a layer, and a *check* answer (the most informative eligible worker with room)
  for every open task the plan leaves out. A round before the last takes
  :meth:`~assignment.engine.rounds.NextRound.layer_budget` pairs: at most one answer per open
  task, an even share of what is left, but one answer for every task without any (so round 1
  gives every task its first answer when ``B >= m``); the last round takes its whole plan;
* ``R rounds (layers only)`` (``--layers-only``, default 3): the first idea, kept for the
  record: the same layers of the plan of the rest, but ``floor(B / R)`` pairs per round and no
  checks;
* ``dynamic overlap`` (Toloka's rule), for each threshold ``t`` of ``--thresholds`` (default
  0.9, 0.95, 0.99): first every task gets ``k`` workers (``--start``, default 1), tasks taken in
  a random order, each given the *best available* workers: the eligible workers with room under
  their cap, most informative first (largest ``|q_ij - 0.5|``, which is the highest quality
  for workers at 0.5 or better; with K labels the largest ``|K q_ij - 1| / (K - 1)``, as
  ``plan_layers`` ranks them). Then, step after step, every task whose posterior of its
  likelier label is below ``t`` (``next_round(..., target_posterior=t).open_tasks``) gets one
  more best-available worker, least confident tasks first, until the budget is spent, no task
  is below ``t``, or no open task has an eligible worker with room. Each step's answers are
  all collected before the next step (Toloka raises the overlap of every unresolved task and
  waits for answers), so the rule adapts after every added worker per task: more often than 3
  rounds do. The report shows each threshold and compares the rounds with the threshold
  *tuned on held-out seeds*: per crowd, quality seen and budget, the threshold with the best
  mean realised accuracy on ``--tune-seeds`` seeds from ``--tune-from`` (default 20 seeds,
  1000..1019, drawn by the same world generator and never scored; only the dynamic arms run
  there), scored on the scoring seeds. That is what a user can do: choose the knob on past or
  pilot data, then use it. Beside it the report shows the threshold best on the scoring seeds
  themselves (an oracle choice, the only one of the first versions, which favours the rule:
  the best of three noisy means is biased upwards). The round arms have no knob tuned on data
  (their round counts are fixed in advance), so no arm is tuned on the seeds it is scored on;
* ``random``: ``solve(problem, method="random")``, one shot.

Answers are simulated from the TRUE quality; the methods see the quality given by ``--seen``:

* ``true``: the true quality matrix (the first version the issue asks for);
* ``goldG`` (e.g. ``gold20``): each worker answers ``G`` gold questions (drawn like the
  tasks: a skill x difficulty gold question has its own ease), not counted in the budget, and
  the methods see :func:`assignment.engine.quality.estimate_quality` of those answers (one
  category: a worker's shrunk accuracy, the same on every task). Every arm, the Bayes vote
  that makes the final labels included, uses that estimate, as a real project would.

Crowds (``--crowds``), n workers and m tasks (``--size``, default 50x500), prior 0.5, each
task's truth ``y_j ~ Bernoulli(0.5)``:

* ``beta``: worker accuracy ``a_i ~ Beta(4, 2)`` (mean 2/3), **not clipped**: about 19% of
  workers fall below 0.5, and with their quality known the Bayes vote inverts their answers
  (clipping at 0.5 would instead make them exact spammers, which is crowd 3); ``Q_ij = a_i``;
* ``skill-difficulty``: ``Q_ij = 0.5 + 0.45 * skill_i * ease_j``, ``skill ~ U[0, 1]``,
  ``ease ~ U[0.2, 1]``, as in ``benchmarks/budgets.py``;
* ``spammers``: a fifth of the workers (at random) at exactly 0.5, the others with an accuracy
  ``a_i ~ U[0.6, 0.95]`` per worker (``benchmarks/budgets.py`` draws it per pair).

Caps: ``--max-workers-per-task`` (default 7) and ``--max-tasks-per-worker`` (default 60: with
50 workers, 3,000 pairs, 1.5x the largest default budget, so the caps leave room to choose);
budgets ``B = round(b * m)`` for each ``b`` of ``--budgets`` (answers per task on average,
default 1, 2, 3, 4), each checked feasible under the caps.

K labels (``--labels K``, default 2; the issue asks for K = 4 too): the same three crowds with
K-class *one-coin* answers: worker ``i`` gives the true label with probability ``Q_ij``, else a
wrong label uniformly among the ``K - 1`` others; the truth is uniform over the K labels and the
prior uniform (``AssignmentProblem(..., n_labels=K)`` without a prior). A worker at ``Q = 1/K``
is a spammer, so the crowds become: ``beta`` unchanged, ``Beta(4, 2)`` (for K = 4 only about 1.6%
of workers fall below 1/4: a much better crowd than for two labels, where 19% are below 0.5);
``skill-difficulty``: ``Q_ij = 1/K + (1 - 1/K) * 0.9 * skill_i * ease_j`` (for K = 2 this is
the binary formula: from a spammer to 0.9 of the way to a perfect worker); ``spammers``: the fifth
at ``1/K``, the others ``U[0.6, 0.95]`` as before. The wrong labels take one more draw per pair,
after the correctness draws (none for two labels: the binary worlds and numbers are unchanged).
The dynamic overlap's posterior is then of the likeliest label (``next_round(...,
label=...)``), its thresholds in ``(1/K, 1]``, and the final labels the K-class Bayes vote,
:func:`~assignment.engine.multiclass.aggregate_multiclass`. The method is greedy by default
for K > 2 (every method takes K labels; greedy is the fast one there, and tvcs-iht starts from
it). Results go to ``benchmarks/out/rounds-kK.jsonl`` by default.

Randomness, paired over arms: for each seed (``range(--seeds)``, default 20, and each tuning
seed) and crowd the quality, the truth, the gold answers and every *potential* answer (what
worker ``i`` would say on task ``j``: correct iff ``u_ij < Q_ij`` for one uniform ``u_ij`` per
pair) are drawn once from ``np.random.default_rng([13, seed, n, m, crowd])``; each arm
reveals the pairs it chooses. So the arms of one seed face the same crowd, truth and answers,
and their differences are paired over seeds (common random numbers). The method runs with
``seed=seed``.

Scores, per arm and seed: the realised accuracy (fraction of tasks whose final label is the
truth; the final label is the Bayes vote, :func:`~assignment.engine.aggregate.aggregate_pairs`
or for K labels :func:`~assignment.engine.multiclass.aggregate_multiclass`, over all the arm's
answers with the original prior), the answers used, and two engine figures:
``posterior accuracy`` (``next_round(...).accuracy_now`` after all the answers: the expected
accuracy of the final labels under the quality seen) and, for the tvcs-iht arms, the last
solve's ``expected_accuracy`` (given the earlier rounds' answers). With the true quality both
are unbiased for the realised accuracy: the report checks they agree within noise.

The report (stdout, and ``--out``) has, per quality seen and crowd, the realised accuracy
(mean ± sd over seeds, in percent) of every arm at every budget, the differences of 3 rounds
and of 3 rounds (layered) to one shot and to dynamic overlap, layered - myopic, and every other
round arm - one shot (in points, mean ± paired standard error over seeds, ``sd / sqrt(seeds)``
of the per-seed differences; with the true quality also in posterior accuracy), the answers
used, every dynamic threshold, the engine's expected against the realised accuracy, and
PASS/FAIL lines for the issue's targets, for ``3 rounds`` and for ``3 rounds (layered)``: beat
one shot by at least 1 point, and beat dynamic overlap with its threshold tuned on the held-out
seeds, at every budget (means over seeds; the SE says whether a difference is more than
noise). A ``## Reading`` section already at the end of the ``--out`` file (written by hand) is
kept when the report is written again.

Every finished (crowd, quality seen, budget, seed, arm) is appended at once as one JSON line to
``--results`` (default ``benchmarks/out/rounds.jsonl``); a restart runs only what is missing
(``--fresh`` moves the old file to ``*.bak``); ``--report-only`` runs nothing. Everything runs in
this one process (nothing here is timed against anything else); progress goes to stderr.

How long (2 cores, AMD EPYC, shared): the default run (3 crowds x 2 qualities seen x 4 budgets
x 20 seeds x 11 arms, 5,280 runs, and the 3 dynamic arms on the 20 tuning seeds, 1,440 more)
took 12.2 minutes wall (734 s) at commit 3ec3bfa under ``nice -n 10``, on one core; most of it
is tvcs-iht (about 0.03-0.3 s per arm at 50 x 500, and the round arms solve once per round),
dynamic overlap and random take about a hundredth of a second each. The report's "Run time"
line says how long its runs took.
K = 4 with greedy is slower, so ``docs/benchmarks/rounds-k4.md`` runs a reduced grid (budgets 1,
2, 3; arms one shot, 3 rounds, 3 rounds layered, dynamic, random; true and gold20): 3,600 runs
with the tuning seeds' dynamic arms, 1,215 s of computing, 7.8 minutes wall in 3 processes (one
per crowd, ``--crowds``, each its own ``--results`` file, concatenated afterwards) on the 2
shared cores at commit 5dc2f36 (the first run, on 2026-11-25, took 21 minutes).

Run from the repository root::

    python benchmarks/rounds.py --out docs/benchmarks/rounds.md      # the default grid
    python benchmarks/rounds.py --seeds 3 --budgets 1,3 --seen true   # a fast check
    python benchmarks/rounds.py --report-only --out docs/benchmarks/rounds.md
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from assignment.engine.aggregate import aggregate_pairs  # noqa: E402
from assignment.engine.multiclass import aggregate_multiclass  # noqa: E402
from assignment.engine.problem import AssignmentProblem  # noqa: E402
from assignment.engine.quality import estimate_quality  # noqa: E402
from assignment.engine.rounds import next_round, plan_layers  # noqa: E402
from assignment.engine.solve import solve  # noqa: E402
from benchmarks.child_runs import code_version, header  # noqa: E402
from benchmarks.markdown_report import add_out_option  # noqa: E402
from benchmarks.results_file import (  # noqa: E402
    append_row,
    end_torn_line,
    load_rows,
    set_aside,
)

CROWDS = ("beta", "skill-difficulty", "spammers")
CROWD_STREAM = {"beta": 0, "skill-difficulty": 1, "spammers": 2}
DEFAULT_RESULTS = ROOT / "benchmarks" / "out" / "rounds.jsonl"
CORE_METHOD = "tvcs-iht"  # the binary default; K > 2 defaults to K_METHOD
K_METHOD = "greedy"
ONE_SHOT = "one shot"
LAYERED = " (layered)"
PLAIN_LAYERS = " (layers only)"
RANDOM = "random"
TUNED = "dynamic (t tuned on held-out seeds)"  # the headline baseline
ORACLE = "dynamic (best t on these seeds)"  # optimistic, shown beside it
READING = "## Reading"

# targets (issue 13)
MIN_ROUNDS_OVER_ONE_SHOT_POINTS = 1.0
TARGET_ROUNDS = 3


# ---------------------------------------------------------------------------------------------
# the simulated world


@dataclass(frozen=True)
class World:
    """One crowd and seed: the true quality, the truth, every potential answer, gold answers."""

    quality: np.ndarray  # (n, m) true P(correct)
    truth: np.ndarray  # (m,) label in [0, K)
    says: np.ndarray  # (n, m) int: the label worker i would answer on task j
    gold_correct: np.ndarray  # (n, G) bool: each worker's answers to G gold questions
    n_labels: int = 2

    @property
    def says_one(self) -> np.ndarray:
        return self.says == 1


def skill_quality(skill: np.ndarray, ease: np.ndarray, n_labels: int) -> np.ndarray:
    """``Q = 1/K + (1 - 1/K) 0.9 skill ease``: from a spammer (1/K) to 0.9 of the way to 1;
    ``0.5 + 0.45 skill ease`` for two labels (written so, the binary numbers stay the same)."""
    if n_labels == 2:
        return 0.5 + 0.45 * np.outer(skill, ease)
    return 1.0 / n_labels + (1.0 - 1.0 / n_labels) * 0.9 * np.outer(skill, ease)


def make_world(crowd: str, n: int, m: int, seed: int, gold: int, n_labels: int = 2) -> World:
    """The quality, truth, potential answers and gold answers of ``crowd`` for ``seed``.

    Drawn in a fixed order from one stream, so the same seed gives the same world whatever
    ``--seen`` asks for (``gold`` only adds draws at the end). With ``K = n_labels > 2`` labels
    the truth is uniform over the K labels and a wrong answer uniform over the K - 1 wrong ones
    (one more draw per pair, after the correctness draws; none for two labels, so the binary
    worlds are the ones they were)."""
    k = n_labels
    rng = np.random.default_rng([13, seed, n, m, CROWD_STREAM[crowd]])
    if crowd == "beta":
        accuracy = rng.beta(4.0, 2.0, n)
        quality = np.repeat(accuracy[:, None], m, axis=1)
    elif crowd == "skill-difficulty":
        skill = rng.uniform(0.0, 1.0, n)
        ease = rng.uniform(0.2, 1.0, m)
        quality = skill_quality(skill, ease, k)
    elif crowd == "spammers":
        accuracy = rng.uniform(0.6, 0.95, n)
        accuracy[rng.choice(n, n // 5, replace=False)] = 0.5 if k == 2 else 1.0 / k
        quality = np.repeat(accuracy[:, None], m, axis=1)
    else:
        raise ValueError(f"unknown crowd {crowd!r}; choose from {', '.join(CROWDS)}")
    truth = rng.integers(0, k, m)
    correct = rng.random((n, m)) < quality
    if k == 2:
        says = np.where(correct, truth[None, :], 1 - truth[None, :])
    else:
        wrong = (truth[None, :] + rng.integers(1, k, (n, m))) % k
        says = np.where(correct, truth[None, :], wrong)
    # gold questions: drawn like tasks (own ease for skill x difficulty), after everything else
    if crowd == "skill-difficulty":
        gold_quality = skill_quality(skill, rng.uniform(0.2, 1.0, gold), k)
    else:
        gold_quality = np.repeat(quality[:, :1], gold, axis=1)
    gold_correct = rng.random((n, gold)) < gold_quality
    return World(quality=quality, truth=truth, says=says, gold_correct=gold_correct, n_labels=k)


def seen_quality(world: World, seen: str):
    """The quality the methods see: the true matrix, or the engine's estimate from gold."""
    if seen == "true":
        return world.quality
    n, m = world.quality.shape
    g = gold_count(seen)
    estimate = estimate_quality(
        worker_index=np.repeat(np.arange(n), g),
        item_category=np.zeros(n * g, dtype=np.int64),
        correct=world.gold_correct[:, :g].ravel(),
        n_workers=n,
        task_categories=np.zeros(m, dtype=np.int64),
    )
    return estimate.quality


def gold_count(seen: str) -> int:
    """``G`` of ``goldG``; 0 for ``true``."""
    if seen == "true":
        return 0
    match = re.fullmatch(r"gold(\d+)", seen)
    if not match or int(match.group(1)) < 1:
        raise ValueError(f"--seen: {seen!r} is neither 'true' nor 'goldG' with G >= 1")
    return int(match.group(1))


# ---------------------------------------------------------------------------------------------
# the arms: each returns the pairs it revealed, in order, and what the engine expected


class Answers:
    """The answers an arm has collected so far (a pair at most once)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.workers = np.zeros(0, dtype=np.int64)
        self.tasks = np.zeros(0, dtype=np.int64)

    def reveal(self, workers, tasks) -> None:
        self.workers = np.concatenate([self.workers, np.asarray(workers, dtype=np.int64)])
        self.tasks = np.concatenate([self.tasks, np.asarray(tasks, dtype=np.int64)])

    @property
    def said_one(self) -> np.ndarray:
        return self.world.says_one[self.workers, self.tasks]

    @property
    def labels(self) -> np.ndarray:
        return self.world.says[self.workers, self.tasks]

    def next_round(self, problem: AssignmentProblem, **kwargs):
        if problem.n_labels == 2:
            given = {"said_one": self.said_one}
        else:
            given = {"label": self.labels}
        return next_round(
            problem, worker_index=self.workers, task_index=self.tasks, **given, **kwargs
        )

    def final_labels(self, problem: AssignmentProblem) -> np.ndarray:
        """The Bayes vote over all the answers with the project's prior."""
        quality = problem.quality_at(self.workers, self.tasks)
        if problem.n_labels == 2:
            return aggregate_pairs(
                task_index=self.tasks, quality=quality, said_one=self.said_one, prior=problem.prior
            ).labels
        return aggregate_multiclass(
            task_index=self.tasks,
            quality=quality,
            label=self.labels,
            prior=problem.prior_distribution,
            n_labels=problem.n_labels,
        ).labels

    def __len__(self) -> int:
        return int(self.tasks.size)


def in_rounds(
    problem: AssignmentProblem, answers: Answers, rounds: int, seed: int, method: str = CORE_METHOD
) -> dict:
    """Spend ``problem.budget`` in ``rounds`` solves of tvcs-iht on the posteriors."""
    share = problem.budget // rounds
    expected = None
    per_round = []
    for r in range(rounds):
        last = r == rounds - 1
        nxt = answers.next_round(problem, budget=None if last else share)
        result = solve(nxt.problem, method=method, seed=seed)
        workers, tasks = np.nonzero(result.assignment)
        answers.reveal(workers, tasks)
        expected = result.expected_accuracy
        per_round.append(
            {
                "budget": nxt.problem.budget,
                "assigned": int(workers.size),
                "accuracy_before": nxt.accuracy_now,
                "expected_accuracy": result.expected_accuracy,
            }
        )
    return {"expected_accuracy": expected, "rounds": per_round}


def in_layered_rounds(
    problem: AssignmentProblem, answers: Answers, rounds: int, seed: int, method: str = CORE_METHOD
) -> dict:
    """Spend ``problem.budget`` in ``rounds`` rounds by the layered rule: each round solves the
    rest (tvcs-iht on ``next_round`` with all that remains) and takes that plan's first layers
    (:meth:`~assignment.engine.rounds.NextRound.solve_layered`); the last takes the whole plan."""
    solver = functools.partial(solve, method=method, seed=seed)
    per_round = []
    result = None
    for r in range(rounds):
        nxt = answers.next_round(problem)
        take, result = nxt.solve_layered(solver, rounds_left=rounds - r)
        workers, tasks = np.nonzero(take)
        answers.reveal(workers, tasks)
        per_round.append(
            {
                "budget": nxt.layer_budget(rounds - r),
                "planned": result.n_assigned,
                "assigned": int(workers.size),
                "accuracy_before": nxt.accuracy_now,
                "plan_expected_accuracy": result.expected_accuracy,
            }
        )
    # the last round takes its whole plan: its expected accuracy is the final labels'
    return {"expected_accuracy": result.expected_accuracy, "rounds": per_round}


def in_plain_layers(
    problem: AssignmentProblem, answers: Answers, rounds: int, seed: int, method: str = CORE_METHOD
) -> dict:
    """The first idea, kept for the record: each round solves the rest and takes its first
    ``floor(B / R)`` pairs by :func:`~assignment.engine.rounds.plan_layers` (no checks for the
    tasks the plan leaves out); the last round takes its whole plan."""
    share = problem.budget // rounds
    result = None
    for r in range(rounds):
        last = r == rounds - 1
        nxt = answers.next_round(problem)
        result = solve(nxt.problem, method=method, seed=seed)
        take = plan_layers(result.assignment, nxt.problem, budget=nxt.budget if last else share)
        answers.reveal(*np.nonzero(take))
    return {"expected_accuracy": result.expected_accuracy}


def best_available(
    problem: AssignmentProblem, tasks: np.ndarray, score: np.ndarray, per_task: int, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """Give each task of ``tasks`` in turn its ``per_task`` best eligible workers with room.

    ``problem`` is a round problem (caps already reduced, answered pairs ineligible); ``score``
    ranks the workers of each task (higher first). At most ``limit`` pairs in all."""
    room = problem.max_tasks_per_worker.copy()
    eligible = np.ones(problem.shape, dtype=bool) if problem.eligible is None else problem.eligible
    chosen_workers: list[int] = []
    chosen_tasks: list[int] = []
    for j in tasks:
        if len(chosen_tasks) >= limit:
            break
        want = min(per_task, int(problem.max_workers_per_task[j]), limit - len(chosen_tasks))
        if want <= 0:
            continue
        candidates = np.flatnonzero(eligible[:, j] & (room > 0))
        if candidates.size == 0:
            continue
        best = candidates[np.argsort(-score[candidates, j], kind="stable")[:want]]
        room[best] -= 1
        chosen_workers += best.tolist()
        chosen_tasks += [int(j)] * best.size
    return np.asarray(chosen_workers, dtype=np.int64), np.asarray(chosen_tasks, dtype=np.int64)


def dynamic_overlap(
    problem: AssignmentProblem, answers: Answers, threshold: float, start: int, seed: int
) -> dict:
    """Toloka's dynamic overlap: ``start`` best-available workers per task, then one more
    best-available worker per task below ``threshold``, least confident first, step by step."""
    rng = np.random.default_rng([13, seed, 1])
    k = problem.n_labels
    if k == 2:
        score = np.abs(problem.quality - 0.5)
    else:  # informativeness |K Q - 1| / (K - 1), as plan_layers ranks workers
        score = np.abs(k * problem.quality - 1.0) / (k - 1)
    nxt = answers.next_round(problem)
    order = rng.permutation(problem.n_tasks)
    answers.reveal(*best_available(nxt.problem, order, score, start, problem.budget))
    steps = 1
    stopped = "budget spent"
    while True:
        left = problem.budget - len(answers)
        if left <= 0:
            break
        nxt = answers.next_round(problem, target_posterior=threshold)
        open_tasks = np.flatnonzero(nxt.open_tasks)
        if open_tasks.size == 0:
            stopped = "no task below the threshold"
            break
        shuffled = rng.permutation(open_tasks)  # ties in confidence in a random order
        order = shuffled[np.argsort(nxt.task_accuracy_now[shuffled], kind="stable")]
        workers, tasks = best_available(nxt.problem, order, score, 1, left)
        if tasks.size == 0:
            stopped = "no eligible worker with room for an open task"
            break
        answers.reveal(workers, tasks)
        steps += 1
    return {"steps": steps, "stopped": stopped}


def dynamic_arm(threshold: float, start: int) -> str:
    return f"dynamic k={start} t={threshold:g}"


def parse_dynamic(arm: str) -> tuple[int, float] | None:
    match = re.fullmatch(r"dynamic k=(\d+) t=([0-9.]+)", arm)
    return None if match is None else (int(match.group(1)), float(match.group(2)))


def rounds_arm(rounds: int) -> str:
    return ONE_SHOT if rounds == 1 else f"{rounds} rounds"


def layered_arm(rounds: int) -> str:
    return f"{rounds} rounds{LAYERED}"


def plain_layers_arm(rounds: int) -> str:
    return f"{rounds} rounds{PLAIN_LAYERS}"


def is_rounds_arm(arm: str) -> bool:
    """``R rounds``, ``R rounds (layered)`` or ``R rounds (layers only)``."""
    return re.fullmatch(r"\d+ rounds(?: \((?:layered|layers only)\))?", arm) is not None


def run_arm(
    arm: str, problem: AssignmentProblem, world: World, seed: int, method: str = CORE_METHOD
) -> dict:
    """Spend the budget as ``arm`` says; the results row's measured fields."""
    start = time.perf_counter()
    answers = Answers(world)
    info: dict = {}
    if arm == ONE_SHOT:
        info = in_rounds(problem, answers, 1, seed, method)
    elif arm == RANDOM:
        result = solve(problem, method="random", seed=seed)
        answers.reveal(*np.nonzero(result.assignment))
    elif (dynamic := parse_dynamic(arm)) is not None:
        info = dynamic_overlap(problem, answers, dynamic[1], dynamic[0], seed)
    elif (match := re.fullmatch(r"(\d+) rounds", arm)) is not None:
        info = in_rounds(problem, answers, int(match.group(1)), seed, method)
    elif (match := re.fullmatch(r"(\d+) rounds \(layered\)", arm)) is not None:
        info = in_layered_rounds(problem, answers, int(match.group(1)), seed, method)
    elif (match := re.fullmatch(r"(\d+) rounds \(layers only\)", arm)) is not None:
        info = in_plain_layers(problem, answers, int(match.group(1)), seed, method)
    else:
        raise ValueError(f"unknown arm {arm!r}")
    seconds = time.perf_counter() - start
    if not problem.is_feasible(_as_matrix(problem, answers)):
        raise RuntimeError(f"{arm}: the answers break a cap of the project (a bug)")
    if len(answers) > problem.budget:
        raise RuntimeError(f"{arm}: {len(answers)} answers over the budget {problem.budget}")
    labels = answers.final_labels(problem)
    final = answers.next_round(problem)
    return {
        "realised_accuracy": float(np.mean(labels == world.truth)),
        "posterior_accuracy": final.accuracy_now,
        "expected_accuracy": info.get("expected_accuracy"),
        "answers": len(answers),
        "seconds": seconds,
        **{k: v for k, v in info.items() if k != "expected_accuracy"},
    }


def _as_matrix(problem: AssignmentProblem, answers: Answers) -> np.ndarray:
    x = np.zeros(problem.shape, dtype=bool)
    x[answers.workers, answers.tasks] = True
    return x


# ---------------------------------------------------------------------------------------------
# runs


@dataclass(frozen=True)
class Grid:
    n: int
    m: int
    per_task: int
    per_worker: int
    crowds: list[str]
    seen: list[str]
    budgets: list[float]
    seeds: list[int]
    arms: list[str]
    labels: int = 2
    method: str = CORE_METHOD
    tune_seeds: tuple[int, ...] = ()  # dynamic overlap's threshold is chosen on these

    @property
    def size(self) -> str:
        return f"{self.n}x{self.m}"

    @property
    def caps(self) -> str:
        return f"{self.per_task}/{self.per_worker}"

    def budget(self, b: float) -> int:
        return round(b * self.m)


def row_key(row: dict) -> tuple:
    """Rows without ``labels`` / ``method`` are the binary tvcs-iht runs of before."""
    return (
        row["size"],
        row["caps"],
        row["crowd"],
        row["seen"],
        f"{row['b']:g}",
        int(row["seed"]),
        row["arm"],
        int(row.get("labels", 2)),
        row.get("method", CORE_METHOD),
    )


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_all(grid: Grid, results: Path, argv: list[str]) -> tuple[dict, int, float]:
    """Run what is missing from ``results``; every row by key, the cells run and their time."""
    rows = load_rows(results, key=row_key)
    cells = [
        ((crowd, seen, b, seed), arms_of(grid, seed))
        for crowd in grid.crowds
        for seen in grid.seen
        for b in grid.budgets
        for seed in [*grid.seeds, *grid.tune_seeds]
    ]
    todo = [
        (cell, [arm for arm in arms if key_of(grid, *cell, arm) not in rows])
        for cell, arms in cells
    ]
    todo = [(cell, arms) for cell, arms in todo if arms]
    total = sum(len(arms) for _, arms in cells)
    missing = sum(len(arms) for _, arms in todo)
    progress(f"{total - missing} of {total} runs already in {results}, {missing} to do")
    if not todo:
        return rows, 0, 0.0
    end_torn_line(results)
    commit = code_version()
    gold = max(gold_count(seen) for seen in grid.seen)
    started = time.perf_counter()
    for number, ((crowd, seen, b, seed), arms) in enumerate(todo, 1):
        world = make_world(crowd, grid.n, grid.m, seed, gold, grid.labels)
        problem = AssignmentProblem(
            seen_quality(world, seen),
            max_workers_per_task=grid.per_task,
            max_tasks_per_worker=grid.per_worker,
            budget=grid.budget(b),
            # uniform over the labels: P(y = 1) = 0.5 for two (as before), omitted for K
            **({"prior": 0.5} if grid.labels == 2 else {}),
            n_labels=grid.labels,
        )
        for arm in arms:
            measured = run_arm(arm, problem, world, seed, grid.method)
            row = {
                "size": grid.size,
                "n": grid.n,
                "m": grid.m,
                "caps": grid.caps,
                "max_workers_per_task": grid.per_task,
                "max_tasks_per_worker": grid.per_worker,
                "crowd": crowd,
                "seen": seen,
                "b": b,
                "budget": problem.budget,
                "seed": seed,
                "arm": arm,
                **({} if grid.labels == 2 else {"labels": grid.labels}),
                **({} if grid.method == CORE_METHOD else {"method": grid.method}),
                **measured,
                "code": commit,
                "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "argv": argv,
            }
            append_row(results, row)
            rows[row_key(row)] = row
        elapsed = time.perf_counter() - started
        progress(
            f"{number}/{len(todo)} {crowd} {seen} b={b:g} seed {seed}: {len(arms)} arms "
            f"({elapsed:.0f} s so far, about {elapsed / number * (len(todo) - number):.0f} s left)"
        )
    return rows, len(todo), time.perf_counter() - started


def arms_of(grid: Grid, seed: int) -> list[str]:
    """Every arm on a scoring seed; only the dynamic-overlap arms on a tuning seed (they are
    run there to choose the threshold, never scored)."""
    if seed in grid.seeds:
        return grid.arms
    return [arm for arm in grid.arms if parse_dynamic(arm) is not None]


def key_of(grid: Grid, crowd: str, seen: str, b: float, seed: int, arm: str) -> tuple:
    return (grid.size, grid.caps, crowd, seen, f"{b:g}", seed, arm, grid.labels, grid.method)


# ---------------------------------------------------------------------------------------------
# summary


def values(
    rows: dict, grid: Grid, crowd, seen, b, arm, name="realised_accuracy", seeds=None
) -> dict:
    """``{seed: value}`` over ``seeds`` (default: the grid's scoring seeds) that have ``arm``."""
    out = {}
    for seed in grid.seeds if seeds is None else seeds:
        row = rows.get(key_of(grid, crowd, seen, b, seed, arm))
        if row is not None and row.get(name) is not None:
            out[seed] = float(row[name])
    return out


def mean_sd(xs) -> tuple[float, float]:
    xs = list(xs)
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def paired(a: dict, b: dict) -> tuple[float, float, int] | None:
    """Mean of ``100 * (a - b)`` over the common seeds and its standard error; None if none."""
    common = sorted(set(a) & set(b))
    if not common:
        return None
    diffs = [100.0 * (a[s] - b[s]) for s in common]
    mu, sd = mean_sd(diffs)
    return mu, sd / math.sqrt(len(diffs)), len(diffs)


def pct(got: dict) -> str:
    if not got:
        return "—"
    mu, sd = mean_sd(got.values())
    return f"{100 * mu:.2f} ± {100 * sd:.2f}"


def diff_text(d) -> str:
    return "—" if d is None else f"{d[0]:+.2f} ± {d[1]:.2f}"


def best_dynamic(rows, grid, crowd, seen, b, seeds) -> str | None:
    """The dynamic-overlap arm with the highest mean realised accuracy over ``seeds`` at this
    budget (ties: the larger threshold; None without any row)."""
    found = []
    for arm in grid.arms:
        if parse_dynamic(arm) is None:
            continue
        got = values(rows, grid, crowd, seen, b, arm, seeds=seeds)
        if got:
            found.append((statistics.fmean(got.values()), parse_dynamic(arm)[1], arm))
    return max(found)[2] if found else None


def dynamic_for(rows, grid, crowd, seen, b, which: str) -> str | None:
    """The dynamic-overlap arm that stands for ``which`` at this budget: :data:`TUNED`, the
    threshold best on the tuning seeds (what a user could choose), or :data:`ORACLE`, the one
    best on the scoring seeds themselves (optimistic: for transparency only)."""
    seeds = grid.tune_seeds if which == TUNED else grid.seeds
    return best_dynamic(rows, grid, crowd, seen, b, seeds)


def resolve(rows, grid, crowd, seen, b, arm: str) -> str | None:
    """``arm`` itself, or the dynamic-overlap arm :data:`TUNED` or :data:`ORACLE` stands for."""
    if arm in (TUNED, ORACLE):
        return dynamic_for(rows, grid, crowd, seen, b, arm)
    return arm


def dynamic_columns(grid: Grid) -> list[str]:
    """:data:`TUNED` (with tuning seeds) and :data:`ORACLE`, if the grid has dynamic arms."""
    if not any(parse_dynamic(a) for a in grid.arms):
        return []
    return [TUNED, ORACLE] if grid.tune_seeds else [ORACLE]


def short(arm: str | None) -> str:
    if arm is None:
        return "—"
    dynamic = parse_dynamic(arm)
    return arm if dynamic is None else f"t={dynamic[1]:g}"


def mean_of(rows, grid, crowd, seen, b, arm, name) -> str:
    got = values(rows, grid, crowd, seen, b, arm, name)
    return "—" if not got else f"{statistics.fmean(got.values()):,.0f}"


def target_arms(grid: Grid) -> list[str]:
    """The arms the issue's targets are checked on: ``3 rounds`` and ``3 rounds (layered)``."""
    return [a for a in (rounds_arm(TARGET_ROUNDS), layered_arm(TARGET_ROUNDS)) if a in grid.arms]


def comparisons(grid: Grid) -> list[tuple[str, str]]:
    """``(arm, other)`` pairs the difference tables show; ``other`` may be :data:`TUNED` or
    :data:`ORACLE`, resolved per budget."""
    compare = []
    for top in target_arms(grid):
        if ONE_SHOT in grid.arms:
            compare.append((top, ONE_SHOT))
        compare += [(top, dynamic) for dynamic in dynamic_columns(grid)]
    if len(target_arms(grid)) == 2:
        compare.append((layered_arm(TARGET_ROUNDS), rounds_arm(TARGET_ROUNDS)))
    for arm in grid.arms:
        if is_rounds_arm(arm) and arm not in target_arms(grid) and ONE_SHOT in grid.arms:
            compare.append((arm, ONE_SHOT))
    return compare


def difference_table(rows, grid, crowd, seen, name="realised_accuracy") -> list[str]:
    """Per budget, each comparison's difference of ``name`` in points (mean ± paired SE)."""
    compare = comparisons(grid)
    head = ["b", *[f"{a} - {other}" for a, other in compare]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for b in grid.budgets:
        cells = [f"{b:g}"]
        for a, other in compare:
            other = resolve(rows, grid, crowd, seen, b, other)
            got = None
            if other is not None:
                got = paired(
                    values(rows, grid, crowd, seen, b, a, name),
                    values(rows, grid, crowd, seen, b, other, name),
                )
            cells.append(diff_text(got))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def crowd_tables(rows: dict, grid: Grid, crowd: str, seen: str) -> list[str]:
    dynamics = [arm for arm in grid.arms if parse_dynamic(arm) is not None]
    main_arms = [a for a in grid.arms if a == ONE_SHOT or is_rounds_arm(a)]
    lines = ["Realised accuracy, % (mean ± sd over seeds):", ""]
    columns = dynamic_columns(grid)
    head = ["b", "B", *main_arms, *columns, *([RANDOM] if RANDOM in grid.arms else [])]
    lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for b in grid.budgets:
        cells = [f"{b:g}", f"{grid.budget(b):,}"]
        cells += [pct(values(rows, grid, crowd, seen, b, arm)) for arm in main_arms]
        for column in columns:
            arm = resolve(rows, grid, crowd, seen, b, column)
            got = values(rows, grid, crowd, seen, b, arm) if arm else {}
            cells.append(f"{pct(got)} ({short(arm)})" if got else "—")
        if RANDOM in grid.arms:
            cells.append(pct(values(rows, grid, crowd, seen, b, RANDOM)))
        lines.append("| " + " | ".join(cells) + " |")

    lines += ["", "Differences in points (mean ± paired SE over seeds):", ""]
    lines += difference_table(rows, grid, crowd, seen)
    used = [*main_arms, *dynamic_columns(grid)]
    lines += ["", "Answers used (mean over seeds):", ""]
    lines += ["| " + " | ".join(["b", *used]) + " |", "|" + "---:|" * (len(used) + 1)]
    for b in grid.budgets:
        cells = [f"{b:g}"]
        for a in used:
            arm = resolve(rows, grid, crowd, seen, b, a)
            cells.append(
                "—" if arm is None else mean_of(rows, grid, crowd, seen, b, arm, "answers")
            )
        lines.append("| " + " | ".join(cells) + " |")

    if seen == "true":
        lines += [
            "",
            "The same differences in *posterior* accuracy (`accuracy_now` after all answers: "
            "the expected accuracy of the final labels given the answers; with the true quality "
            "an unbiased estimate of the realised accuracy without the noise of the labels "
            "themselves), points, mean ± paired SE:",
            "",
        ]
        lines += difference_table(rows, grid, crowd, seen, "posterior_accuracy")
    if dynamics:
        lines += ["", *dynamic_table(rows, grid, crowd, seen, dynamics)]
    if main_arms:
        lines += ["", *expectation_table(rows, grid, crowd, seen, main_arms)]
    return lines


def dynamic_table(rows, grid, crowd, seen, dynamics) -> list[str]:
    """Each threshold on the scoring seeds and, if any, on the tuning seeds, with the choice."""
    lines = [
        f"Dynamic overlap (start k = {parse_dynamic(dynamics[0])[0]}) by threshold: realised "
        f"accuracy, % (mean ± sd), and answers used (mean), on the scoring seeds "
        f"{seed_range(grid.seeds)}:",
        "",
    ]
    head = ["b", *[short(a) for a in dynamics], *[f"answers {short(a)}" for a in dynamics]]
    lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for b in grid.budgets:
        cells = [f"{b:g}"]
        cells += [pct(values(rows, grid, crowd, seen, b, a)) for a in dynamics]
        cells += [mean_of(rows, grid, crowd, seen, b, a, "answers") for a in dynamics]
        lines.append("| " + " | ".join(cells) + " |")
    if grid.tune_seeds:
        lines += ["", *tuning_table(rows, grid, crowd, seen, dynamics)]
    return lines


def tuning_table(rows, grid, crowd, seen, dynamics) -> list[str]:
    """Each threshold's realised accuracy on the tuning seeds and the one chosen there."""
    lines = [
        f"On the tuning seeds {seed_range(grid.tune_seeds)} (the same world generator; never "
        "scored), realised accuracy, % (mean ± sd), and the threshold chosen there (the largest "
        "mean), which the scoring seeds then score:",
        "",
    ]
    head = ["b", *[short(a) for a in dynamics], "chosen"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for b in grid.budgets:
        cells = [f"{b:g}"]
        cells += [
            pct(values(rows, grid, crowd, seen, b, a, seeds=grid.tune_seeds)) for a in dynamics
        ]
        cells.append(short(dynamic_for(rows, grid, crowd, seen, b, TUNED)))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def seed_range(seeds) -> str:
    """``first..last`` of consecutive seeds (as the command line makes them)."""
    return f"{min(seeds)}..{max(seeds)}" if seeds else "(none)"


def expectation_table(rows, grid, crowd, seen, core) -> list[str]:
    lines = [
        "The engine's expectation against the realised accuracy, % (means over seeds; "
        f"realised - expected in points, mean ± paired SE). `expected`: the last {grid.method} "
        "solve's expected accuracy (given the earlier rounds' answers; the layered arms' last "
        "round takes its whole plan); `posterior`: `accuracy_now` after all answers:",
        "",
    ]
    head = ["b", "arm", "expected", "posterior", "realised", "realised - expected"]
    lines += ["| " + " | ".join(head) + " |", "|---:|---|---:|---:|---:|---:|"]
    for b in grid.budgets:
        for arm in core:
            real = values(rows, grid, crowd, seen, b, arm)
            exp = values(rows, grid, crowd, seen, b, arm, "expected_accuracy")
            post = values(rows, grid, crowd, seen, b, arm, "posterior_accuracy")
            if not real:
                continue
            cells = [f"{b:g}", arm]
            cells += [
                f"{100 * statistics.fmean(got.values()):.2f}" if got else "—"
                for got in (exp, post, real)
            ]
            cells.append(diff_text(paired(real, exp)))
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def targets(rows: dict, grid: Grid) -> list[str]:
    """PASS/FAIL per target arm, quality seen and crowd: the issue's two targets at every budget."""
    tops = target_arms(grid)
    if not tops:
        return [f"- N/A: no `{rounds_arm(TARGET_ROUNDS)}` arm in this run (--rounds, --layered)"]
    lines = []
    for top in tops:
        for seen in grid.seen:
            for crowd in grid.crowds:
                checks = []
                if ONE_SHOT in grid.arms:
                    name = f"{top} ≥ one shot + {MIN_ROUNDS_OVER_ONE_SHOT_POINTS:g} point"
                    checks.append((name, lambda b: ONE_SHOT, MIN_ROUNDS_OVER_ONE_SHOT_POINTS))
                if TUNED in dynamic_columns(grid):
                    name = f"{top} > dynamic overlap (threshold tuned on held-out seeds)"
                    tuned = functools.partial(dynamic_for, rows, grid, crowd, seen, which=TUNED)
                    checks.append((name, tuned, 0.0))
                for name, other, limit in checks:
                    line = target_line(rows, grid, crowd, seen, top, other, limit)
                    lines.append(line.format(where=f"[{crowd}, quality seen: {seen}]", name=name))
    return lines


def target_line(rows, grid, crowd, seen, top, other, limit: float) -> str:
    """One PASS/FAIL line (``{where}`` and ``{name}`` left to fill): ``top - other(b)`` at or
    above ``limit`` points (above 0 for ``limit == 0``) at every budget ``b``."""
    held, failed, details = 0, 0, []
    for b in grid.budgets:
        arm = other(b)
        got = None
        if arm is not None:
            got = paired(
                values(rows, grid, crowd, seen, b, top), values(rows, grid, crowd, seen, b, arm)
            )
        if got is None:
            details.append(f"b={b:g}: no data")
            continue
        ok = got[0] >= limit if limit > 0 else got[0] > 0
        held += ok
        failed += not ok
        noise = " (within 2 SE of the limit)" if abs(got[0] - limit) < 2 * got[1] else ""
        details.append(f"b={b:g}: {diff_text(got)} pts{noise}")
    verdict = "N/A " if not held + failed else ("FAIL" if failed else "PASS")
    count = f"holds at {held} of {held + failed} budgets"
    return f"- {verdict} {{where}} {{name}}: {count} ({'; '.join(details)})"


def _beta42_cdf(x: float) -> float:
    """``P(a < x)`` for ``a ~ Beta(4, 2)``: ``5 x^4 - 4 x^5``."""
    return 5 * x**4 - 4 * x**5


def introduction(grid: Grid) -> list[str]:
    """The report's description of the grid, the crowds, the quality seen and the arms."""
    dynamics = [parse_dynamic(a) for a in grid.arms if parse_dynamic(a)]
    start = dynamics[0][0] if dynamics else None
    k, method = grid.labels, grid.method
    likelier = "likelier" if k == 2 else "likeliest"
    vote = "Bayes vote" if k == 2 else f"{k}-class Bayes vote (`aggregate_multiclass`)"
    if k == 2:
        labels = "binary labels, prior 0.5, truth ~ Bernoulli(0.5)"
        crowds = (
            "Crowds: **beta** = worker accuracy ~ Beta(4, 2), not clipped (about 19% of workers "
            "below 0.5, whose answers the Bayes vote inverts when their quality is known), the "
            "same on every task; **skill-difficulty** = 0.5 + 0.45 · skill_i · ease_j, skill ~ "
            "U[0, 1], ease ~ U[0.2, 1]; **spammers** = a fifth of the workers at 0.5, the others "
            "an accuracy ~ U[0.6, 0.95] per worker."
        )
    else:
        below = 100 * _beta42_cdf(1.0 / k)
        labels = (
            f"{k} labels, one-coin answers (right with probability Q, else a wrong label "
            f"uniformly among the {k - 1} others), uniform prior, truth uniform over the {k} "
            "labels"
        )
        crowds = (
            f"Crowds (a worker at Q = 1/{k} is a spammer): **beta** = worker accuracy ~ "
            f"Beta(4, 2) as for two labels, mean 2/3, so well above 1/{k} (only {below:.1f}% of "
            f"workers below 1/{k}: a better crowd than with two labels, where 19% are below "
            f"0.5), the same on every task; **skill-difficulty** = 1/{k} + (1 - 1/{k}) · 0.9 · "
            f"skill_i · ease_j (from a spammer to 0.9 of the way to a perfect worker; for two "
            f"labels 0.5 + 0.45 · skill · ease), skill ~ U[0, 1], ease ~ U[0.2, 1]; "
            f"**spammers** = a fifth of the workers at 1/{k}, the others an accuracy ~ "
            "U[0.6, 0.95] per worker."
        )
    return [
        f"{grid.n} workers x {grid.m} tasks, {labels}. "
        f"Caps: max_workers_per_task = {grid.per_task}, max_tasks_per_worker = "
        f"{grid.per_worker} (capacity {grid.n * grid.per_worker:,} pairs); budget B = b·m for "
        f"b in {', '.join(f'{b:g}' for b in grid.budgets)} answers per task on average. "
        f"Scoring seeds {seed_range(grid.seeds)}"
        + (
            f"; tuning seeds {seed_range(grid.tune_seeds)} (dynamic overlap's threshold only)."
            if grid.tune_seeds
            else "."
        ),
        "",
        crowds + " Answers are simulated from the true quality; each seed's "
        "crowd, truth and potential answers are shared by all arms (differences are paired).",
        "",
        "Quality seen by the methods (and by the final Bayes vote): **true** = the true matrix; "
        "**goldG** = `estimate_quality` of G gold answers per worker (one category: a shrunk "
        "accuracy per worker; gold not counted in the budget).",
        "",
        f"Arms: **one shot** = {method} with the whole budget; **R rounds** = {method} on "
        "`next_round` of the answers so far, floor(B/R) per round and the rest in the last "
        "(each round plans as if it were the last); **R rounds (layered)** = each round solves "
        f"the rest ({method} on `next_round` with all that remains: a plan for every remaining "
        "round) and takes that plan breadth first (`NextRound.solve_layered`): every task's "
        "most informative planned worker before any task's second, least confident tasks first, "
        "and a check answer (the most informative eligible worker with room) for every open task "
        "the plan leaves out; at most one answer per open task and an even share of what is left "
        "per round, but every task without an answer gets one; the last round takes its whole "
        "plan; **R rounds (layers only)** = the first idea, for the record: each round solves the "
        "rest and takes floor(B/R) of that plan by the same layers, without checks, the last "
        "round its whole plan; "
        f"**dynamic** = Toloka-like dynamic overlap: {start} best-available worker(s) per task "
        "(most informative eligible worker with room, tasks in random order), then one more "
        f"best-available worker per task whose posterior of its {likelier} label is below t, least "
        "confident first, step after step until the budget is spent or no task is below t; "
        + dynamic_choice(grid)
        + " **random** = method random, one shot. "
        f"Score: realised accuracy of the final {vote} (all answers, original prior) against "
        "the truth.",
        "",
    ]


def dynamic_choice(grid: Grid) -> str:
    """How the report picks dynamic overlap's threshold t, for the introduction."""
    oracle = (
        "**dynamic (best t on these seeds)** = the t with the best mean on the scoring seeds "
        "themselves, an oracle choice no user can make (it favours the baseline)"
    )
    if not grid.tune_seeds:
        return oracle + "; it is the one compared."
    return (
        f"**dynamic (t tuned on held-out seeds)** = the t with the best mean realised accuracy "
        f"on separate tuning seeds {seed_range(grid.tune_seeds)} (same world generator, per "
        "crowd, quality seen and budget), scored on the scoring seeds: what a user could do, "
        f"and the baseline of the targets; {oracle}, shown beside it. The round arms have no "
        "knob chosen on data (their round counts are fixed in advance)."
    )


def report(rows: dict, grid: Grid, argv: list[str], load, ran: tuple[int, float]) -> list[str]:
    lines = header(
        "Issue 13: a budget in rounds on posteriors against one shot, dynamic overlap and random"
        + ("" if grid.labels == 2 else f", {grid.labels} labels"),
        argv,
        load,
    )
    used = [
        rows[key]
        for crowd in grid.crowds
        for seen in grid.seen
        for b in grid.budgets
        for seed in [*grid.seeds, *grid.tune_seeds]
        for arm in arms_of(grid, seed)
        if (key := key_of(grid, crowd, seen, b, seed, arm)) in rows
    ]
    lines += introduction(grid)
    if ran[0]:
        lines.append(
            f"This invocation ran {ran[0]} (crowd, quality, budget, seed) cells in {ran[1]:.0f} s."
        )
    if used:
        seconds = sum(float(r.get("seconds", 0.0)) for r in used)
        dates = sorted(str(r.get("date")) for r in used)
        codes = sorted({str(r.get("code")) for r in used})
        lines.append(
            f"Run time: the {len(used)} runs shown took {seconds:.0f} s of computing in all "
            f"(one process, one core), measured from {dates[0]} to {dates[-1]} on "
            f"{', '.join(codes)}."
        )
        commands = sorted({" ".join(r.get("argv", [])) for r in used})
        if commands:
            lines.append(
                "Results produced by: "
                + "; ".join(f"`python benchmarks/rounds.py {c}`" for c in commands)
                + "."
            )
    lines.append("")
    for seen in grid.seen:
        for crowd in grid.crowds:
            lines += [f"## {crowd}, quality seen: {seen}", ""]
            lines += crowd_tables(rows, grid, crowd, seen)
            lines.append("")
    lines += summary(rows, grid)
    lines += ["## Targets", "", *targets(rows, grid)]
    return lines


def summary(rows: dict, grid: Grid) -> list[str]:
    """Each target arm's differences to one shot and to dynamic overlap, every crowd and
    quality seen in one table per comparison (the tables above, gathered)."""
    lines = ["## Summary", ""]
    for top in target_arms(grid):
        for other in [ONE_SHOT, *dynamic_columns(grid)]:
            if other == ONE_SHOT and ONE_SHOT not in grid.arms:
                continue
            lines += [f"**{top} - {other}** (realised, points, mean ± paired SE over seeds):", ""]
            head = ["crowd, quality seen", *[f"b = {b:g}" for b in grid.budgets]]
            lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * len(grid.budgets)]
            for seen in grid.seen:
                for crowd in grid.crowds:
                    cells = [f"{crowd}, {seen}"]
                    for b in grid.budgets:
                        arm = resolve(rows, grid, crowd, seen, b, other)
                        got = arm and paired(
                            values(rows, grid, crowd, seen, b, top),
                            values(rows, grid, crowd, seen, b, arm),
                        )
                        cells.append(diff_text(got))
                    lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    return lines


# ---------------------------------------------------------------------------------------------
# command line


def parse_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def write_report(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, keeping a hand-written ``## Reading`` section already there."""
    kept = ""
    if path.exists():
        old = path.read_text()
        at = old.find("\n" + READING + "\n")
        if at >= 0:
            kept = "\n" + old[at + 1 :].rstrip("\n") + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n" + kept)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="50x500", help="NxM (default: %(default)s)")
    parser.add_argument("--crowds", default=",".join(CROWDS), help="comma-separated crowds")
    parser.add_argument(
        "--seen",
        default="true,gold20",
        help="quality the methods see: 'true' and/or 'goldG' (G gold answers per worker) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--budgets", default="1,2,3,4", help="answers per task on average (default: %(default)s)"
    )
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0 .. SEEDS-1 (default: 20)")
    parser.add_argument(
        "--tune-seeds",
        type=int,
        default=20,
        help="seeds on which dynamic overlap's threshold is chosen, per crowd, quality seen and "
        "budget, before the scoring seeds score it; 0 for none (only the best threshold on the "
        "scoring seeds is then shown) (default: %(default)s)",
    )
    parser.add_argument(
        "--tune-from",
        type=int,
        default=1000,
        help="the first tuning seed; the tuning seeds must not overlap 0 .. SEEDS-1 "
        "(default: %(default)s)",
    )
    parser.add_argument("--max-workers-per-task", type=int, default=7)
    parser.add_argument("--max-tasks-per-worker", type=int, default=60)
    parser.add_argument(
        "--rounds", default="2,3", help="round counts of tvcs-iht (default: %(default)s)"
    )
    parser.add_argument(
        "--layered",
        default="3,4,5",
        help="round counts of the layered rule, tvcs-iht; '' for none (default: %(default)s)",
    )
    parser.add_argument(
        "--layers-only",
        default="3",
        help="round counts of the plain layers (no checks, equal shares); '' for none "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--thresholds",
        default="0.9,0.95,0.99",
        help="dynamic overlap's confidence thresholds (default: %(default)s)",
    )
    parser.add_argument(
        "--start", type=int, default=1, help="dynamic overlap's first workers per task (1)"
    )
    parser.add_argument("--no-random", action="store_true", help="leave out the random arm")
    parser.add_argument(
        "--labels", type=int, default=2, help="number of labels K >= 2 (default: 2)"
    )
    parser.add_argument(
        "--method",
        help=f"the method of one shot and of every round arm (default: {CORE_METHOD} for two "
        f"labels, {K_METHOD} for more; it must support K labels)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="JSON-lines results file, appended to and resumed from (default: "
        f"{DEFAULT_RESULTS.relative_to(ROOT)} for two labels, rounds-kK.jsonl beside it for K)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="move an old results file to *.bak and start over"
    )
    parser.add_argument(
        "--report-only", action="store_true", help="run nothing: report the results file"
    )
    add_out_option(parser)
    return parser


def main(argv: list[str]) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    parser = build_parser()
    args = parser.parse_args(argv)

    if args.labels < 2:
        parser.error(f"--labels {args.labels}: K must be at least 2")
    method = args.method or (CORE_METHOD if args.labels == 2 else K_METHOD)
    if args.results is None:
        name = "rounds.jsonl" if args.labels == 2 else f"rounds-k{args.labels}.jsonl"
        args.results = DEFAULT_RESULTS.with_name(name)
    try:
        n, m = (int(x) for x in args.size.lower().split("x"))
        budgets = [float(x) for x in parse_list(args.budgets)]
        round_counts = [int(x) for x in parse_list(args.rounds)]
        layered_counts = [int(x) for x in parse_list(args.layered)]
        plain_counts = [int(x) for x in parse_list(args.layers_only)]
        thresholds = [float(x) for x in parse_list(args.thresholds)]
        seen = parse_list(args.seen)
        for s in seen:
            gold_count(s)
    except ValueError as exc:
        parser.error(str(exc))
    crowds = parse_list(args.crowds)
    if not crowds or set(crowds) - set(CROWDS):
        parser.error(f"--crowds: choose from {', '.join(CROWDS)}")
    if min(n, m) < 1 or args.seeds < 1 or args.start < 1 or not seen:
        parser.error("--size, --seeds, --start must be positive and --seen non-empty")
    tune_seeds = tuple(range(args.tune_from, args.tune_from + max(args.tune_seeds, 0)))
    if args.tune_seeds < 0 or set(tune_seeds) & set(range(args.seeds)):
        parser.error(
            f"--tune-seeds {args.tune_seeds} from --tune-from {args.tune_from} must be at least 0 "
            f"and not overlap the scoring seeds 0 .. {args.seeds - 1}"
        )
    if any(r < 2 for r in round_counts + layered_counts + plain_counts):
        parser.error("--rounds, --layered and --layers-only must be at least 2")
    if any(not 1.0 / args.labels < t <= 1 for t in thresholds):
        parser.error(f"--thresholds must be in (1/K, 1] = ({1.0 / args.labels:g}, 1]")
    per_task, per_worker = args.max_workers_per_task, args.max_tasks_per_worker
    capacity = min(m * per_task, n * per_worker)
    for b in budgets:
        if b <= 0 or round(b * m) > capacity:
            parser.error(
                f"budget b={b:g} (B = {round(b * m)}) must be positive and at most what the "
                f"caps allow, min(m · {per_task}, n · {per_worker}) = {capacity}"
            )
    arms = [ONE_SHOT, *[rounds_arm(r) for r in sorted(set(round_counts))]]
    arms += [plain_layers_arm(r) for r in sorted(set(plain_counts))]
    arms += [layered_arm(r) for r in sorted(set(layered_counts))]
    arms += [dynamic_arm(t, args.start) for t in sorted(set(thresholds))]
    arms += [] if args.no_random else [RANDOM]
    grid = Grid(
        n,
        m,
        per_task,
        per_worker,
        crowds,
        seen,
        budgets,
        list(range(args.seeds)),
        arms,
        args.labels,
        method,
        tune_seeds,
    )

    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and not args.report_only:
        set_aside(args.results)
    if args.report_only:
        rows, ran = load_rows(args.results, key=row_key), (0, 0.0)
    else:
        rows, cells, seconds = run_all(grid, args.results, argv)
        ran = (cells, seconds)
    text = "\n".join(report(rows, grid, sys.argv, load, ran))
    print(text)
    if args.out:
        write_report(args.out, text)


if __name__ == "__main__":
    main(sys.argv[1:])
