"""Edge-recovery metrics of the TVCS paper's Table 1 (Yang et al., ICML 2017, section 5.3).

With ``TP, FP, TN, FN`` counted over the candidate edges (every ordered pair of distinct genes):

* ``SN = TP / (TP + FN)`` (sensitivity), ``SP = TN / (TN + FP)`` (specificity),
* ``ACC = (TP + TN) / (TP + FP + TN + FN)``,
* ``F = 2 SN SP / (SN + SP)`` — the paper's F-measure, the harmonic mean of sensitivity and
  *specificity* (not of precision and recall, the usual F1),
* ``MCC = (TP TN - FP FN) / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN))`` (0 when a factor is 0),
* ``AUC``: the area under the ROC curve of the edge scores, computed as the Mann-Whitney
  statistic (the probability that a true edge outscores a non-edge, ties counting 1/2),
* ``AUC (binary)``: the same area for the binary prediction as the score, which is
  ``(SN + SP) / 2`` (a true edge outscores a non-edge when it is predicted and the non-edge is
  not; a tie counts 1/2). The paper's AUC for TVCS equals this to four decimals (0.6875 and
  0.7397 give 0.7136); ``AUC`` above ranks every pair by its score and stays the primary one.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["METRICS", "auc", "confusion", "edge_metrics", "rates"]

#: The metrics in the paper's column order.
METRICS = ("SN", "SP", "ACC", "F", "MCC", "AUC", "AUC (binary)")


def _bool_pair(truth, predicted) -> tuple[np.ndarray, np.ndarray]:
    truth = np.asarray(truth)
    predicted = np.asarray(predicted)
    if truth.dtype != bool:
        raise ValueError(f"truth must be a boolean array, got dtype {truth.dtype}")
    if predicted.dtype != bool:
        raise ValueError(f"predicted must be a boolean array, got dtype {predicted.dtype}")
    if truth.shape != predicted.shape:
        raise ValueError(
            f"predicted must have truth's shape {truth.shape}, got shape {predicted.shape}"
        )
    return truth.ravel(), predicted.ravel()


def confusion(truth, predicted) -> tuple[int, int, int, int]:
    """``(TP, FP, TN, FN)`` of boolean ``predicted`` against boolean ``truth`` (same shape)."""
    t, p = _bool_pair(truth, predicted)
    return int((t & p).sum()), int((~t & p).sum()), int((~t & ~p).sum()), int((t & ~p).sum())


def rates(tp: int, fp: int, tn: int, fn: int) -> dict[str, float]:
    """SN, SP, ACC, F (the paper's) and MCC from a confusion matrix; 0 where undefined."""
    for name, value in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    sn = tp / (tp + fn) if tp + fn else 0.0
    sp = tn / (tn + fp) if tn + fp else 0.0
    total = tp + fp + tn + fn
    acc = (tp + tn) / total if total else 0.0
    f = 2 * sn * sp / (sn + sp) if sn + sp else 0.0
    denominator = math.sqrt(float(tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    mcc = (tp * tn - fp * fn) / denominator if denominator else 0.0
    return {"SN": sn, "SP": sp, "ACC": acc, "F": f, "MCC": mcc}


def auc(truth, scores) -> float:
    """Area under the ROC curve of ``scores`` (higher = more likely an edge) against ``truth``.

    The Mann-Whitney form, with average ranks for ties: ``(R_pos - n_pos (n_pos + 1) / 2) /
    (n_pos n_neg)``, ``R_pos`` the sum of the positives' ranks. Needs both classes.
    """
    truth = np.asarray(truth)
    scores = np.asarray(scores, dtype=np.float64)
    if truth.dtype != bool:
        raise ValueError(f"truth must be a boolean array, got dtype {truth.dtype}")
    if scores.shape != truth.shape:
        raise ValueError(f"scores must have truth's shape {truth.shape}, got {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    t, s = truth.ravel(), scores.ravel()
    n_pos, n_neg = int(t.sum()), int((~t).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("truth must hold both edges and non-edges for an AUC")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(s.size)
    sorted_s = s[order]
    start = 0
    while start < s.size:  # average ranks over runs of equal scores
        end = start
        while end + 1 < s.size and sorted_s[end + 1] == sorted_s[start]:
            end += 1
        ranks[order[start : end + 1]] = 0.5 * (start + end) + 1.0
        start = end + 1
    return float((ranks[t].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def edge_metrics(truth, predicted, scores) -> dict[str, float]:
    """All of :data:`METRICS` over the off-diagonal entries of square ``(n, n)`` matrices.

    Parameters
    ----------
    truth, predicted : ndarray of bool, shape (n, n)
        True and predicted edges; the diagonal (self-regulation) is not scored.
    scores : ndarray of float, shape (n, n)
        Edge scores for the AUC.
    """
    truth = np.asarray(truth)
    if truth.ndim != 2 or truth.shape[0] != truth.shape[1]:
        raise ValueError(f"truth must be a square matrix, got shape {truth.shape}")
    off = ~np.eye(truth.shape[0], dtype=bool)
    t, p = _bool_pair(truth, predicted)
    t, p = t[off.ravel()], p[off.ravel()]
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != truth.shape:
        raise ValueError(f"scores must have truth's shape {truth.shape}, got {scores.shape}")
    out = rates(*confusion(t, p))
    out["AUC"] = auc(t, scores[off])
    out["AUC (binary)"] = auc(t, p.astype(np.float64))
    return out
