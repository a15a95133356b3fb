"""The paper's Table 1 metrics on confusion matrices small enough to count by hand."""

import math

import numpy as np
import pytest
from grn_metrics import auc, confusion, edge_metrics, rates


def test_confusion_counts_each_cell():
    truth = np.array([True, True, False, False, False])
    predicted = np.array([True, False, True, False, False])
    assert confusion(truth, predicted) == (1, 1, 2, 1)


def test_rates_match_a_hand_computed_matrix():
    # TP=3, FP=1, TN=4, FN=2: SN 3/5, SP 4/5, ACC 7/10, F 2*.6*.8/1.4, MCC (12-2)/sqrt(4*5*5*6)
    r = rates(3, 1, 4, 2)
    assert r["SN"] == pytest.approx(0.6)
    assert r["SP"] == pytest.approx(0.8)
    assert r["ACC"] == pytest.approx(0.7)
    assert r["F"] == pytest.approx(0.96 / 1.4)
    assert r["MCC"] == pytest.approx(10 / math.sqrt(600))


def test_mcc_is_zero_rather_than_nan_when_nothing_is_predicted():
    assert rates(0, 0, 5, 3)["MCC"] == 0.0
    assert rates(0, 0, 5, 3)["F"] == 0.0


def test_auc_counts_pairs_with_ties_as_halves():
    truth = np.array([True, False, True, False])
    # positive scores 0.9, 0.5; negatives 0.5, 0.1: pairs won 1 + 1 + 0.5 + 1 of 4
    assert auc(truth, np.array([0.9, 0.5, 0.5, 0.1])) == pytest.approx(3.5 / 4)
    assert auc(truth, np.array([0.0, 1.0, 0.0, 1.0])) == 0.0


def test_auc_agrees_with_scikit_learn_on_random_scores():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    truth = rng.random(200) < 0.3
    scores = np.round(rng.random(200), 1)  # many ties
    assert auc(truth, scores) == pytest.approx(metrics.roc_auc_score(truth, scores))


def test_edge_metrics_ignore_the_diagonal():
    truth = np.array([[True, True], [False, True]])
    predicted = np.array([[False, True], [True, False]])
    m = edge_metrics(truth, predicted, predicted.astype(float))
    assert (m["SN"], m["SP"], m["ACC"]) == (1.0, 0.0, 0.5)
    assert m["AUC"] == 0.5


def test_the_binary_auc_is_the_mean_of_sensitivity_and_specificity():
    rng = np.random.default_rng(1)
    truth = rng.random((15, 15)) < 0.2
    predicted = rng.random((15, 15)) < 0.3
    scores = rng.random((15, 15))  # unrelated to the prediction: the binary AUC ignores them
    off = ~np.eye(15, dtype=bool)
    tp, fp, tn, fn = confusion(truth[off], predicted[off])
    m = edge_metrics(truth, predicted, scores)
    assert m["AUC (binary)"] == pytest.approx((tp / (tp + fn) + tn / (tn + fp)) / 2, abs=1e-12)
    assert m["AUC (binary)"] != pytest.approx(m["AUC"], abs=1e-3)


def test_the_binary_auc_of_a_hand_counted_prediction():
    # off-diagonal: 2 edges (1 predicted), 4 non-edges (1 predicted): (1/2 + 3/4) / 2
    truth = np.array([[False, True, True], [False, False, False], [False, False, False]])
    predicted = np.array([[False, True, False], [True, False, False], [False, False, False]])
    m = edge_metrics(truth, predicted, np.zeros((3, 3)))
    assert m["AUC (binary)"] == pytest.approx(0.625)
    assert m["AUC"] == 0.5


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: confusion(np.array([1, 0]), np.array([True, False])), "truth"),
        (lambda: confusion(np.array([True]), np.array([True, False])), "predicted"),
        (lambda: rates(1, -1, 0, 0), "fp"),
        (lambda: auc(np.array([True, True]), np.array([0.1, 0.2])), "both"),
        (lambda: auc(np.array([True, False]), np.array([0.1, np.nan])), "scores"),
        (
            lambda: edge_metrics(np.ones((2, 3), bool), np.ones((2, 3), bool), np.ones((2, 3))),
            "square",
        ),
    ],
)
def test_bad_arguments_are_refused_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()
