"""Expected accuracy under confusion matrices (assignment/engine/confusion.py): against a plain
enumeration, against the engine's exact accuracy for one-coin matrices, and by Monte Carlo."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from confusion_problems import one_coin

from assignment.engine import confusion as confusion_module
from assignment.engine.accuracy import task_accuracy_pairs
from assignment.engine.confusion import confusion_accuracy
from assignment.engine.multiclass import aggregate_multiclass, task_accuracy_multiclass


def random_case(seed: int, *, n=6, m=5, k=3, per_task=3, concentration=3.0):
    rng = np.random.default_rng(seed)
    confusion = np.stack(
        [rng.dirichlet(np.full(k, 1.0) + concentration * np.eye(k)[c], size=n) for c in range(k)],
        axis=1,
    )  # (n, K, K): row c of worker i is rng's Dirichlet leaning to c
    prior = rng.dirichlet(np.full(k, 2.0), size=m)
    workers, tasks = [], []
    for j in range(m):
        chosen = rng.choice(n, size=min(n, j % (per_task + 1)), replace=False)
        workers += list(chosen)
        tasks += [j] * len(chosen)
    return confusion, prior, np.array(workers, np.int64), np.array(tasks, np.int64)


def enumerated(confusion, prior, workers, tasks, vote_quality=None, vote_prior=None) -> np.ndarray:
    """Each task's accuracy by summing over its answer patterns one by one: the Dawid-Skene
    vote's (the largest joint probability), or with ``vote_quality`` that of the label the
    labels export gives for the pattern (``aggregate_multiclass``, its scores starting from
    ``vote_prior``, default ``prior``; its tie rule included)."""
    vote_prior = prior if vote_prior is None else vote_prior
    k = prior.shape[1]
    out = []
    for j in range(prior.shape[0]):
        on = np.flatnonzero(tasks == j)
        total = 0.0
        for answers in itertools.product(range(k), repeat=on.size):
            joint = prior[j].copy()
            for e, a in zip(on, answers, strict=True):
                joint = joint * confusion[workers[e], :, a]
            if vote_quality is None:
                total += joint.max()
                continue
            exported = aggregate_multiclass(
                task_index=np.zeros(on.size, dtype=np.int64),
                quality=vote_quality[on],
                label=np.array(answers, dtype=np.int64),
                prior=vote_prior[j][None, :],
                n_labels=k,
            ).labels[0]
            total += joint[exported]
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_the_dawid_skene_vote_matches_a_plain_enumeration(k, seed):
    confusion, prior, workers, tasks = random_case(seed, k=k)
    result = confusion_accuracy(confusion, workers, tasks, prior=prior)
    np.testing.assert_allclose(
        result.task_accuracy, enumerated(confusion, prior, workers, tasks), atol=1e-12
    )
    assert not result.task_standard_error.any()


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_the_symmetric_bayes_vote_matches_a_plain_enumeration_and_never_beats_dawid_skene(k, seed):
    confusion, prior, workers, tasks = random_case(seed, k=k)
    q = np.random.default_rng(seed + 100).uniform(0.4, 0.95, workers.size)
    result = confusion_accuracy(confusion, workers, tasks, prior=prior, vote_quality=q)
    expected = enumerated(confusion, prior, workers, tasks, vote_quality=q)
    np.testing.assert_allclose(result.task_accuracy, expected, atol=1e-12)
    best = confusion_accuracy(confusion, workers, tasks, prior=prior).task_accuracy
    assert np.all(result.task_accuracy <= best + 1e-12)


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "monte carlo"])
def test_the_symmetric_vote_with_a_prior_of_its_own_matches_a_plain_enumeration(exact, monkeypatch):
    """As in a next round: the labels are drawn from one posterior (Dawid-Skene's), the
    symmetric vote scores from another (its own after the same answers)."""
    confusion, prior, workers, tasks = random_case(5, m=12, k=3)
    rng = np.random.default_rng(5)
    q = rng.uniform(0.5, 0.95, workers.size)
    vote_prior = rng.dirichlet(np.full(3, 1.0), size=prior.shape[0])
    expected = enumerated(confusion, prior, workers, tasks, vote_quality=q, vote_prior=vote_prior)
    assert not np.allclose(expected, enumerated(confusion, prior, workers, tasks, vote_quality=q))
    if not exact:
        monkeypatch.setattr(confusion_module, "MAX_EXACT_PATTERNS", 1)  # every task sampled
    result = confusion_accuracy(
        confusion, workers, tasks, prior=prior, vote_quality=q, vote_prior=vote_prior
    )
    if exact:
        np.testing.assert_allclose(result.task_accuracy, expected, atol=1e-12)
    else:
        assert np.all(
            np.abs(result.task_accuracy - expected) <= 5 * result.task_standard_error + 1e-12
        )


@pytest.mark.parametrize("seed", range(3))
def test_one_coin_matrices_give_the_engines_exact_binary_accuracy(seed):
    rng = np.random.default_rng(seed)
    n, m = 12, 40
    quality = rng.uniform(0.35, 0.95, (n, m))
    x = rng.random((n, m)) < 0.3
    p = rng.uniform(0.2, 0.8, m)
    workers, tasks = np.nonzero(x)
    engine = task_accuracy_pairs(quality, workers, tasks, prior=p)
    # One worker per (worker, task) quality: a "worker" of the confusion model per pair.
    pair_confusion = one_coin(quality[workers, tasks], 2)
    pairs = np.arange(workers.size)
    prior = np.stack([1 - p, p], axis=1)
    for vote in (None, quality[workers, tasks]):
        ours = confusion_accuracy(pair_confusion, pairs, tasks, prior=prior, vote_quality=vote)
        np.testing.assert_allclose(ours.task_accuracy, engine, atol=1e-12)


def test_one_coin_matrices_give_the_engines_exact_multiclass_accuracy():
    rng = np.random.default_rng(7)
    n, m, k = 8, 30, 3
    quality = rng.uniform(0.3, 0.95, (n, m))
    x = rng.random((n, m)) < 0.35
    prior = rng.dirichlet(np.full(k, 3.0), size=m)
    workers, tasks = np.nonzero(x)
    engine = task_accuracy_multiclass(quality, x, prior=prior, n_labels=k)
    ours = confusion_accuracy(
        one_coin(quality[workers, tasks], k), np.arange(workers.size), tasks, prior=prior
    )
    np.testing.assert_allclose(ours.task_accuracy, engine, atol=1e-12)


@pytest.mark.parametrize("vote", ["dawid-skene", "symmetric"])
def test_monte_carlo_agrees_with_the_exact_sum_within_its_standard_error(vote, monkeypatch):
    confusion, prior, workers, tasks = random_case(3, n=10, m=30, k=3, per_task=5)
    q = np.full(workers.size, 0.7) if vote == "symmetric" else None
    exact = confusion_accuracy(confusion, workers, tasks, prior=prior, vote_quality=q)
    monkeypatch.setattr(confusion_module, "MAX_EXACT_PATTERNS", 1)  # every task sampled
    sampled = confusion_accuracy(
        confusion, workers, tasks, prior=prior, vote_quality=q, n_samples=4000, seed=1
    )
    with_workers = np.bincount(tasks, minlength=30) > 0
    assert np.all(sampled.task_standard_error[with_workers] > 0)
    z = (sampled.expected_accuracy - exact.expected_accuracy) / sampled.standard_error
    assert abs(z) < 4, z
    assert np.all(
        np.abs(sampled.task_accuracy - exact.task_accuracy)
        <= 5 * sampled.task_standard_error + 1e-12
    )


def test_a_confident_wrong_prior_is_overturned_only_as_the_model_says():
    # One worker who always answers "0": the answer says nothing, the prior decides.
    confusion = np.array([[[1.0, 0.0], [1.0, 0.0]]])
    prior = np.array([[0.3, 0.7]])
    result = confusion_accuracy(confusion, [0], [0], prior=prior)
    assert result.expected_accuracy == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"confusion": np.ones((2, 2, 3))}, "shape"),
        ({"confusion": np.full((2, 2, 2), 0.7)}, "sum to 1"),
        ({"prior": np.full((3, 3), 1 / 3)}, "prior must have shape"),
        ({"prior": np.array([[0.5, 0.6]] * 3)}, "distribution"),
        ({"workers": [0, 2], "tasks": [0, 1]}, "out of range"),
        ({"workers": [0, 0], "tasks": [1, 1]}, "twice"),
        ({"vote_quality": [0.5]}, "vote_quality"),
        ({"vote_prior": np.full((3, 2), 0.5)}, "give vote_quality too"),
        ({"vote_quality": [0.6, 0.7], "vote_prior": np.full((2, 2), 0.5)}, "vote_prior must"),
        ({"vote_quality": [0.6, 0.7], "vote_prior": np.full((3, 2), 0.6)}, "vote_prior must be"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(kwargs, match):
    args = {
        "confusion": np.full((2, 2, 2), 0.5),
        "workers": [0, 1],
        "tasks": [0, 1],
        "prior": np.full((3, 2), 0.5),
    } | kwargs
    with pytest.raises(ValueError, match=match):
        confusion_accuracy(args.pop("confusion"), args.pop("workers"), args.pop("tasks"), **args)


def mirrored_workers():
    """Two workers with the same one-coin quality whose confusion matrices are mirror images
    (labels 1 and 2 swapped), on one task with a uniform prior: their answers tie the
    symmetric vote whenever they disagree, yet the tied labels are not equally likely."""
    c0 = np.array([[0.8, 0.15, 0.05], [0.3, 0.6, 0.1], [0.1, 0.3, 0.6]])
    swap = [0, 2, 1]
    c1 = c0[swap][:, swap]
    confusion = np.stack([c0, c1])
    prior = np.full((1, 3), 1.0 / 3.0)
    workers, tasks = np.array([0, 1]), np.array([0, 0])
    return confusion, prior, workers, tasks, np.array([0.6, 0.6])


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "monte carlo"])
def test_the_symmetric_votes_accuracy_is_that_of_the_labels_the_export_gives_at_a_tie(
    exact, monkeypatch
):
    confusion, prior, workers, tasks, q = mirrored_workers()
    expected = enumerated(confusion, prior, workers, tasks, vote_quality=q)
    # crediting each tied label a share, as an earlier version did, is another number
    split = 0.0
    for a0, a1 in itertools.product(range(3), repeat=2):
        joint = prior[0] * confusion[0, :, a0] * confusion[1, :, a1]
        winners = [a0, a1] if a0 != a1 else [a0]
        split += joint[winners].sum() / len(winners)
    assert abs(expected[0] - split) > 0.01
    if not exact:
        monkeypatch.setattr(confusion_module, "MAX_EXACT_PATTERNS", 1)  # every task sampled
    result = confusion_accuracy(confusion, workers, tasks, prior=prior, vote_quality=q)
    if exact:
        np.testing.assert_allclose(result.task_accuracy, expected, atol=1e-12)
    else:
        assert abs(result.task_accuracy[0] - expected[0]) <= 5 * result.task_standard_error[0]
