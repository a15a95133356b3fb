"""The next round conditions the assignment problem on the answers in hand."""

import itertools

import numpy as np
import pytest
from confusion_problems import leaning_confusion, one_coin

from assignment.engine import METHODS, AssignmentProblem, QualityByCategory, solve
from assignment.engine.accuracy import expected_accuracy
from assignment.engine.aggregate import aggregate
from assignment.engine.rounds import next_round
from assignment.engine.solve import evaluate_pairs


def _brute_force_final_accuracy(q, prior, answers, new):
    """E[final Bayes vote correct | answers in hand], by enumerating labels and new answers.

    ``answers``: (n, m) with -1 where nobody answered yet; ``new``: the next round's pairs. The
    final vote is the Bayes vote over *all* answers with the *original* prior.
    """
    m = q.shape[1]
    total = 0.0
    for j in range(m):
        old = np.flatnonzero(answers[:, j] >= 0)
        likelihood = {
            y: np.prod([q[i, j] if answers[i, j] == y else 1 - q[i, j] for i in old])
            for y in (0, 1)
        }
        evidence = prior[j] * likelihood[1] + (1 - prior[j]) * likelihood[0]
        posterior = {1: prior[j] * likelihood[1] / evidence}
        posterior[0] = 1 - posterior[1]
        workers = np.flatnonzero(new[:, j])
        for pattern in itertools.product((0, 1), repeat=len(workers)):
            column = answers[:, j].copy()
            column[workers] = pattern
            label = aggregate(column[:, None], q[:, [j]], prior=prior[j]).labels[0]
            for y in (0, 1):
                p_new = np.prod(
                    [
                        q[i, j] if a == y else 1 - q[i, j]
                        for i, a in zip(workers, pattern, strict=True)
                    ]
                )
                total += posterior[y] * p_new * (label == y)
    return total / m


def _answers(rng, q, per_task):
    """Simulated answers of ``per_task`` random workers per task, as an (n, m) -1/0/1 grid."""
    n, m = q.shape
    truth = rng.integers(0, 2, m)
    grid = np.full((n, m), -1)
    for j in range(m):
        for i in rng.choice(n, per_task, replace=False):
            grid[i, j] = truth[j] if rng.random() < q[i, j] else 1 - truth[j]
    return grid


def _round(problem, grid, **kwargs):
    workers, tasks = np.nonzero(grid >= 0)
    return next_round(
        problem,
        worker_index=workers,
        task_index=tasks,
        said_one=grid[workers, tasks] == 1,
        **kwargs,
    )


@pytest.mark.parametrize("seed", range(6))
def test_posterior_as_prior_gives_the_expected_accuracy_of_the_final_vote(seed):
    rng = np.random.default_rng(seed)
    n, m = 5, 4
    q = rng.uniform(0.55, 0.95, (n, m))
    prior = rng.uniform(0.2, 0.8, m)
    problem = AssignmentProblem(
        q, max_workers_per_task=4, max_tasks_per_worker=4, budget=20, prior=prior
    )
    grid = _answers(rng, q, per_task=2)
    nxt = _round(problem, grid)
    new = np.zeros((n, m), bool)
    for j in range(m):
        free = np.flatnonzero(grid[:, j] < 0)
        new[rng.choice(free, rng.integers(0, len(free) + 1), replace=False), j] = True
    engine = expected_accuracy(q, new, prior=nxt.problem.prior)
    assert engine == pytest.approx(_brute_force_final_accuracy(q, prior, grid, new), abs=1e-12)


def test_with_no_answers_the_round_is_the_problem_itself():
    rng = np.random.default_rng(0)
    problem = AssignmentProblem(
        rng.uniform(0.5, 1, (4, 6)),
        max_workers_per_task=2,
        max_tasks_per_worker=3,
        budget=10,
        prior=0.3,
    )
    empty = np.zeros(0, np.int64)
    nxt = next_round(problem, worker_index=empty, task_index=empty, said_one=empty.astype(bool))
    assert nxt.problem.budget == 10
    np.testing.assert_array_equal(nxt.problem.prior, problem.prior)
    np.testing.assert_array_equal(nxt.problem.max_workers_per_task, 2)
    np.testing.assert_array_equal(nxt.problem.max_tasks_per_worker, 3)
    assert nxt.problem.eligible.all()
    assert nxt.accuracy_now == pytest.approx(0.7)


def test_caps_and_budget_count_the_answers_in_hand():
    q = np.full((3, 4), 0.8)
    problem = AssignmentProblem(q, max_workers_per_task=2, max_tasks_per_worker=3, budget=8)
    grid = np.full((3, 4), -1)
    grid[0, :3] = 1  # worker 0 answered three tasks: at its cap
    grid[1, 0] = 0  # task 0 has two answers: at its cap
    nxt = _round(problem, grid)
    np.testing.assert_array_equal(nxt.problem.max_tasks_per_worker, [0, 2, 3])
    np.testing.assert_array_equal(nxt.problem.max_workers_per_task, [0, 1, 1, 2])
    assert nxt.problem.budget == 4
    assert not nxt.problem.eligible[0, :3].any()
    assert not nxt.problem.eligible[1, 0]
    assert nxt.n_answers == 4
    np.testing.assert_array_equal(nxt.worker_room, [0, 2, 3])
    np.testing.assert_array_equal(nxt.open_tasks, [False, True, True, True])


def test_a_round_budget_overrides_what_remains():
    problem = AssignmentProblem(
        np.full((2, 2), 0.7), max_workers_per_task=2, max_tasks_per_worker=2, budget=4
    )
    nxt = _round(problem, np.array([[1, -1], [-1, -1]]), budget=1)
    assert nxt.problem.budget == 1


def test_tasks_at_the_target_posterior_get_nobody():
    q = np.full((4, 3), 0.9)
    problem = AssignmentProblem(q, max_workers_per_task=4, max_tasks_per_worker=3, budget=12)
    grid = np.full((4, 3), -1)
    grid[:2, 0] = 1  # two agreeing answers: posterior 0.81 / (0.81 + 0.01) = 0.9878
    grid[0, 1], grid[1, 1] = 1, 0  # a tie: posterior 0.5
    nxt = _round(problem, grid, target_posterior=0.95)
    assert nxt.posterior[0] == pytest.approx(0.81 / 0.82)
    np.testing.assert_array_equal(nxt.problem.max_workers_per_task, [0, 2, 4])
    np.testing.assert_array_equal(nxt.open_tasks, [False, True, True])
    assert nxt.accuracy_now == pytest.approx((0.81 / 0.82 + 0.5 + 0.5) / 3)


def test_a_certain_posterior_is_held_inside_the_open_interval():
    problem = AssignmentProblem(
        np.full((30, 1), 1.0), max_workers_per_task=30, max_tasks_per_worker=1, budget=30
    )
    grid = np.full((30, 1), -1)
    grid[:10, 0] = 1
    nxt = _round(problem, grid)
    assert nxt.posterior[0] == 1.0
    assert 0.0 < nxt.problem.prior[0] < 1.0


@pytest.mark.parametrize("by_category", [False, True], ids=["dense", "by category"])
@pytest.mark.parametrize("method", METHODS)
def test_every_method_keeps_the_caps_over_all_rounds(method, by_category):
    rng = np.random.default_rng(3)
    n, m = 8, 12
    if by_category:
        quality = QualityByCategory(rng.uniform(0.55, 0.95, (n, 3)), rng.integers(0, 3, m))
        q = quality.dense()
    else:
        quality = q = rng.uniform(0.55, 0.95, (n, m))
    per_worker = rng.integers(2, 6, n)
    problem = AssignmentProblem(
        quality, max_workers_per_task=3, max_tasks_per_worker=per_worker, budget=30
    )
    done = np.zeros((n, m), bool)
    grid = np.full((n, m), -1)
    truth = rng.integers(0, 2, m)
    for k in range(3):
        nxt = _round(problem, grid, budget=10)
        result = solve(nxt.problem, method=method, seed=k)
        x = result.assignment
        assert nxt.problem.is_feasible(x)
        assert not (x & done).any(), "a pair answered in an earlier round came back"
        done |= x
        assert problem.is_feasible(done), "the rounds together broke a cap"
        workers, tasks = np.nonzero(x)
        correct = rng.random(workers.size) < q[workers, tasks]
        grid[workers, tasks] = np.where(correct, truth[tasks], 1 - truth[tasks])
    assert done.sum() <= problem.budget


def test_the_round_accuracy_is_at_least_the_accuracy_now():
    rng = np.random.default_rng(5)
    q = rng.uniform(0.6, 0.9, (6, 10))
    problem = AssignmentProblem(q, max_workers_per_task=4, max_tasks_per_worker=6, budget=30)
    nxt = _round(problem, _answers(rng, q, per_task=1))
    result = solve(nxt.problem, method="tvcs-iht", seed=0)
    assert result.expected_accuracy >= nxt.accuracy_now - 1e-12
    empty = expected_accuracy(q, np.zeros_like(q, bool), prior=nxt.problem.prior)
    assert empty == pytest.approx(nxt.accuracy_now, abs=1e-12)


def test_pending_pairs_count_as_spent_but_add_nothing_to_the_posteriors():
    q = np.full((3, 4), 0.8)
    problem = AssignmentProblem(
        q, max_workers_per_task=2, max_tasks_per_worker=3, budget=8, prior=0.3
    )
    grid = np.full((3, 4), -1)
    grid[0, 0] = 1
    answered = _round(problem, grid)
    nxt = _round(problem, grid, pending_workers=[0, 0, 1], pending_tasks=[1, 2, 0])
    assert nxt.n_answers == 1
    assert nxt.n_pending == 3
    np.testing.assert_array_equal(nxt.posterior_distribution, answered.posterior_distribution)
    assert nxt.accuracy_now == answered.accuracy_now
    np.testing.assert_array_equal(nxt.worker_room, [0, 2, 3])  # worker 0: 1 answer, 2 pending
    np.testing.assert_array_equal(nxt.task_room, [0, 1, 1, 2])  # task 0: 1 answer, 1 pending
    assert nxt.budget == 8 - 1 - 3
    eligible = nxt.problem.eligible
    assert not eligible[0, :3].any()
    assert not eligible[1, 0]
    assert eligible.sum() == 12 - 4
    # a task whose first pair is pending is not one "without an answer" for the layers
    assert nxt.layer_budget(2) == min(4, 3, max(4 // 2, 1))


@pytest.mark.parametrize(
    ("pending", "message"),
    [
        ({"pending_workers": [3], "pending_tasks": [0]}, r"pending_workers must be in \[0, 3\)"),
        ({"pending_workers": [0, 1], "pending_tasks": [1]}, "one entry per pending pair"),
        ({"pending_workers": [1, 1], "pending_tasks": [1, 1]}, "a pending pair may be given once"),
        ({"pending_workers": [0], "pending_tasks": [0]}, r"pending pair 0 \(worker 0, task 0\)"),
    ],
)
def test_bad_pending_pairs_are_refused_naming_the_field(pending, message):
    problem = AssignmentProblem(
        np.full((3, 2), 0.7), max_workers_per_task=2, max_tasks_per_worker=2, budget=4
    )
    answers = {"worker_index": [0], "task_index": [0], "said_one": np.array([True])}
    with pytest.raises(ValueError, match=message):
        next_round(problem, **answers, **pending)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"worker_index": [3]}, r"worker_index must be in \[0, 3\), got 3 at answer 0"),
        ({"task_index": [0, 1]}, "one entry per answer"),
        ({"said_one": [1]}, "said_one must be a bool array"),
        (
            {"worker_index": [0, 0], "task_index": [1, 1], "said_one": [True, False]},
            r"answer 1 repeats \(worker 0, task 1\) of answer 0",
        ),
        ({"target_posterior": 0.5}, r"target_posterior must be a number in \(0.5, 1\]"),
        ({"budget": -1}, "budget must be a non-negative integer"),
    ],
)
def test_bad_answers_are_refused_naming_the_field(kwargs, message):
    problem = AssignmentProblem(
        np.full((3, 2), 0.7), max_workers_per_task=2, max_tasks_per_worker=2, budget=4
    )
    arguments = {"worker_index": [0], "task_index": [0], "said_one": [True]} | kwargs
    arguments = {
        k: np.asarray(v) if k != "target_posterior" and k != "budget" else v
        for k, v in arguments.items()
    }
    with pytest.raises(ValueError, match=message):
        next_round(problem, **arguments)


# Under Dawid-Skene's confusion matrices (a K x K matrix per worker) -----------------------------


def _ds_problem(rng, n, m, k, confusion, **kwargs):
    """A K-label problem whose symmetric surrogate is each worker's mean diagonal."""
    caps = {"max_workers_per_task": 4, "max_tasks_per_worker": 6, "budget": 3 * m} | kwargs
    return AssignmentProblem(
        np.repeat(confusion.diagonal(axis1=1, axis2=2).mean(axis=1)[:, None], m, axis=1),
        prior=rng.dirichlet(np.full(k, 3.0), size=m),
        n_labels=k,
        confusion=confusion,
        **caps,
    )


def _ds_answers(rng, confusion, m, per_task):
    """Answers drawn from the matrices: (workers, tasks, labels) of ``per_task`` per task."""
    n, k, _ = confusion.shape
    truth = rng.integers(0, k, m)
    workers, tasks, labels = [], [], []
    for j in range(m):
        for i in rng.choice(n, per_task, replace=False):
            workers.append(i)
            tasks.append(j)
            labels.append(rng.choice(k, p=confusion[i, truth[j]]))
    return np.array(workers), np.array(tasks), np.array(labels)


def _bayes_rule_by_hand(confusion, prior_row, answers):
    """P(y = c | answers) for one task: prior times each answer's likelihood, normalised."""
    joint = []
    for c in range(prior_row.size):
        p = prior_row[c]
        for i, a in answers:
            p *= confusion[i, c, a]
        joint.append(p)
    return np.array(joint) / sum(joint)


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("seed", range(3))
def test_the_dawid_skene_posterior_is_bayes_rule_worked_by_hand(k, seed):
    rng = np.random.default_rng(100 * k + seed)
    n, m = 6, 9
    confusion = leaning_confusion(rng, n, k)
    problem = _ds_problem(rng, n, m, k, confusion)
    workers, tasks, labels = _ds_answers(rng, confusion, m, per_task=3)
    keep = rng.random(tasks.size) < 0.8  # some tasks with fewer answers, maybe none
    workers, tasks, labels = workers[keep], tasks[keep], labels[keep]
    nxt = next_round(problem, worker_index=workers, task_index=tasks, label=labels)
    for j in range(m):
        answers = [(i, a) for i, t, a in zip(workers, tasks, labels, strict=True) if t == j]
        by_hand = _bayes_rule_by_hand(confusion, problem.prior_distribution[j], answers)
        np.testing.assert_allclose(nxt.posterior_distribution[j], by_hand, rtol=0, atol=1e-12)
    np.testing.assert_allclose(nxt.task_accuracy_now, nxt.posterior_distribution.max(axis=1))
    np.testing.assert_array_equal(nxt.problem.confusion, confusion)


def _ds_final_accuracy_by_enumeration(confusion, prior, old, new):
    """E[the Dawid-Skene vote over *all* answers, with the *original* prior, is right | the
    answers in hand], enumerating the true label and every pattern of the new answers.

    ``old``: per task, its list of (worker, label); ``new``: per task, its new workers."""
    k = prior.shape[1]
    total = 0.0
    for j, workers in enumerate(new):
        posterior = _bayes_rule_by_hand(confusion, prior[j], old[j])
        for pattern in itertools.product(range(k), repeat=len(workers)):
            answers = old[j] + list(zip(workers, pattern, strict=True))
            vote = int(np.argmax(_bayes_rule_by_hand(confusion, prior[j], answers)))
            likelihood = np.prod(
                [confusion[i, vote, a] for i, a in zip(workers, pattern, strict=True)]
            )
            total += posterior[vote] * likelihood
    return total / len(new)


@pytest.mark.parametrize("k", [2, 3])
def test_the_dawid_skene_round_scores_the_accuracy_of_the_final_dawid_skene_vote(k):
    rng = np.random.default_rng(40 + k)
    n, m = 5, 6
    confusion = leaning_confusion(rng, n, k)
    problem = _ds_problem(rng, n, m, k, confusion, budget=20)
    workers, tasks, labels = _ds_answers(rng, confusion, m, per_task=2)
    nxt = next_round(problem, worker_index=workers, task_index=tasks, label=labels)
    result = solve(nxt.problem, method="greedy")
    assert result.accuracy_standard_error is None
    assert "Dawid\u2013Skene" in result.details["objective"]
    old = [
        [(i, a) for i, t, a in zip(workers, tasks, labels, strict=True) if t == j] for j in range(m)
    ]
    new = [result.rows[result.cols == j].tolist() for j in range(m)]
    by_enumeration = _ds_final_accuracy_by_enumeration(
        confusion, problem.prior_distribution, old, new
    )
    assert result.expected_accuracy == pytest.approx(by_enumeration, abs=1e-9)
    assert result.expected_accuracy >= nxt.accuracy_now - 1e-12


@pytest.mark.parametrize("k", [2, 3, 4])
def test_with_one_coin_matrices_the_dawid_skene_round_is_the_symmetric_round(k):
    rng = np.random.default_rng(7 * k)
    n, m = 8, 12
    q = rng.uniform(0.55, 0.95, n)
    confusion = one_coin(q, k)
    problem = _ds_problem(rng, n, m, k, confusion, budget=40)
    workers, tasks, labels = _ds_answers(rng, confusion, m, per_task=2)
    answers = {"worker_index": workers, "task_index": tasks, "label": labels}
    ds = next_round(problem, **answers)
    symmetric = next_round(problem.symmetric(), **answers)
    assert symmetric.confusion is None
    assert ds.confusion is not None
    np.testing.assert_allclose(
        ds.posterior_distribution, symmetric.posterior_distribution, rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(ds.task_accuracy_now, symmetric.task_accuracy_now, atol=1e-12)
    chosen = solve(ds.problem, method="greedy")
    today = solve(symmetric.problem, method="greedy")
    np.testing.assert_array_equal(chosen.assignment, today.assignment)
    assert chosen.expected_accuracy == pytest.approx(today.expected_accuracy, abs=1e-12)


def test_an_asymmetric_worker_makes_the_dawid_skene_round_ask_where_the_doubt_really_is():
    """Worker 0 says 1 on almost every task of label 1 but on only half of those of label 0
    (accuracy 0.74 under the prior 0.5, its symmetric quality). It said 0 on task 0 and 1 on
    task 1: the symmetric model is 0.74 sure of both, while the matrices say a 0 from it is
    telling (P(y = 0) = 0.25 / 0.26 = 0.9615) and a 1 is not (P(y = 1) = 0.49 / 0.74 =
    0.6622). Worker 1 (one-coin, 0.8) has room for one task: it can only change the vote
    where the doubt is above 0.2, task 1 under the matrices, either task under the symmetric
    model (tie: task 0)."""
    confusion = np.array([[[0.5, 0.5], [0.02, 0.98]], [[0.8, 0.2], [0.2, 0.8]]])
    problem = AssignmentProblem(
        np.array([[0.74, 0.74], [0.8, 0.8]]),
        max_workers_per_task=2,
        max_tasks_per_worker=[2, 1],
        budget=3,
        n_labels=2,
    )
    answers = {"worker_index": [0, 0], "task_index": [0, 1], "label": [0, 1]}
    ds = next_round(problem, confusion=confusion, **answers)
    symmetric = next_round(problem, **answers)
    np.testing.assert_allclose(ds.posterior, [0.01 / 0.26, 0.49 / 0.74], atol=1e-12)
    np.testing.assert_allclose(symmetric.posterior, [0.26, 0.74], atol=1e-12)
    assert ds.accuracy_now == pytest.approx((0.25 / 0.26 + 0.49 / 0.74) / 2, abs=1e-12)
    chosen = solve(ds.problem, method="greedy")
    today = solve(symmetric.problem, method="greedy")
    assert (chosen.rows.tolist(), chosen.cols.tolist()) == ([1], [1])
    assert (today.rows.tolist(), today.cols.tolist()) == ([1], [0])
    assert chosen.expected_accuracy == pytest.approx((0.25 / 0.26 + 0.8) / 2, abs=1e-12)
    # the symmetric round's pair scored under the matrices: worker 1 cannot overturn task 0
    todays_under_ds, _ = evaluate_pairs(ds.problem, today.rows, today.cols)
    assert todays_under_ds == pytest.approx(ds.accuracy_now, abs=1e-12)
    assert chosen.expected_accuracy > todays_under_ds + 0.05
    for method in METHODS:  # every method is chosen or scored under the matrices
        assert solve(ds.problem, method=method, seed=0).expected_accuracy <= (
            chosen.expected_accuracy + 1e-12
        )


def test_a_dawid_skene_round_plans_and_takes_layers_like_any_other():
    rng = np.random.default_rng(11)
    n, m, k = 8, 14, 3
    confusion = leaning_confusion(rng, n, k)
    problem = _ds_problem(rng, n, m, k, confusion, budget=50)
    workers, tasks, labels = _ds_answers(rng, confusion, m, per_task=1)
    nxt = next_round(problem, worker_index=workers, task_index=tasks, label=labels)
    take, plan = nxt.solve_layered(lambda p: solve(p, method="greedy"), rounds_left=3)
    assert nxt.problem.is_feasible(take)
    assert take.sum() == nxt.layer_budget(3)
    assert not take[workers, tasks].any()
    assert "Dawid\u2013Skene" in plan.details["objective"]


@pytest.mark.parametrize(
    ("confusion", "message"),
    [
        (np.full((3, 3, 3), 1 / 3), r"shape \(n_workers, n_labels, n_labels\) = \(3, 2, 2\)"),
        (np.full((3, 2, 2), 0.6), "rows must be distributions"),
        (np.where(np.eye(2), np.nan, 0.5)[None].repeat(3, axis=0), "probabilities in"),
    ],
)
def test_confusion_matrices_that_do_not_fit_are_refused_naming_the_field(confusion, message):
    problem = AssignmentProblem(
        np.full((3, 2), 0.7), max_workers_per_task=2, max_tasks_per_worker=2, budget=4
    )
    with pytest.raises(ValueError, match=message):
        next_round(problem, worker_index=[0], task_index=[0], label=[1], confusion=confusion)


def test_confusion_is_given_to_the_round_or_to_the_problem_not_both():
    confusion = np.full((3, 2, 2), 0.5)
    problem = AssignmentProblem(
        np.full((3, 2), 0.7),
        max_workers_per_task=2,
        max_tasks_per_worker=2,
        budget=4,
        confusion=confusion,
    )
    with pytest.raises(ValueError, match="not both"):
        next_round(problem, worker_index=[0], task_index=[0], label=[1], confusion=confusion)
    nxt = next_round(problem, worker_index=[0], task_index=[0], label=[1])
    np.testing.assert_array_equal(nxt.problem.confusion, confusion)
