"""Prior distributions over the labels of a project of more than two labels.

A binary project's prior is one number, P(second label) (``Project.default_prior``,
``Task.prior``). A project of ``K > 2`` labels takes a distribution: a mapping of every label
to its probability, given in the API, in a tasks file's ``prior`` cell (a JSON object) and in
the project's form, and stored as a list in the order of the project's labels (fixed once the
project exists): ``Project.default_label_prior`` and ``Task.label_prior``; none means uniform.
This module is the one rule for what such a distribution may be.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from assignment.answers import positions
from assignment.models import Task

__all__ = ["SUM_TOLERANCE", "label_prior_from_mapping", "label_prior_mapping", "task_priors"]

#: How far from 1 the given probabilities may sum (they are then divided by their sum).
SUM_TOLERANCE = 1e-6


def label_prior_from_mapping(value: object, labels: list[str]) -> list[float]:
    """The distribution ``value`` gives, as a list in the order of ``labels``.

    Parameters
    ----------
    value : mapping of str to float
        Every label of ``labels`` and nothing else, each to a probability strictly between 0
        and 1, summing to 1 within :data:`SUM_TOLERANCE`.
    labels : list of str, length K > 2

    Returns
    -------
    list of float, length K
        The probabilities divided by their sum.

    Raises
    ------
    ValueError
        With a message that names the label or the sum at fault.
    """
    if not isinstance(value, Mapping):
        raise ValueError(
            f"must be an object giving each of the {len(labels)} labels its probability, "
            f"e.g. {_example(labels)}; got {type(value).__name__}"
        )
    unknown = [key for key in value if key not in labels]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not one of the project's labels ({_names(labels)})")
    missing = [label for label in labels if label not in value]
    if missing:
        raise ValueError(f"gives no probability for the label {missing[0]!r}; give every label")
    probabilities = []
    for label in labels:
        p = value[label]
        if isinstance(p, bool) or not isinstance(p, int | float):
            raise ValueError(f"the probability of {label!r} must be a number, got {_short(p)}")
        if isinstance(p, float) and not math.isfinite(p):
            raise ValueError(f"the probability of {label!r} must be a number, got {p!r}")
        if not 0.0 < p < 1.0:  # compares an integer of any size without converting it
            raise ValueError(
                f"the probability of {label!r} must be strictly between 0 and 1, got {_short(p)}"
            )
        probabilities.append(float(p))
    total = math.fsum(probabilities)
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ValueError(f"the probabilities must sum to 1, got {total:.9g}")
    return [p / total for p in probabilities]


def label_prior_mapping(values: list[float] | None, labels: list[str]) -> dict[str, float] | None:
    """A stored distribution (a list in label order, or None) as a mapping label -> probability."""
    if values is None:
        return None
    return dict(zip(labels, values, strict=True))


def task_priors(*, project, task_ids: np.ndarray) -> np.ndarray:
    """The prior of each task of ``task_ids``: its own, else the project's default.

    Parameters
    ----------
    project : Project
    task_ids : ndarray of int, shape (m,)
        Task primary keys (tasks deleted since take the default).

    Returns
    -------
    ndarray of float
        Shape (m,), P(second label), for a binary project; shape (m, K) for ``K > 2`` labels,
        rows summing to 1 (uniform where neither the task nor the project gives one).
    """
    labels = list(project.labels)
    task_ids = np.asarray(task_ids, dtype=np.int64)
    binary = len(labels) == 2
    if binary:
        prior = np.full(task_ids.size, float(project.default_prior))
    else:
        default = project.default_label_prior or [1.0 / len(labels)] * len(labels)
        prior = np.tile(np.asarray(default, dtype=np.float64), (task_ids.size, 1))
    field = "prior" if binary else "label_prior"
    own = list(
        Task.objects.filter(project=project, **{f"{field}__isnull": False}).values_list("pk", field)
    )
    if own:  # the tasks with a prior of their own
        pks, values = zip(*own, strict=True)
        at = positions(task_ids, np.asarray(pks, dtype=np.int64))
        prior[at[at >= 0]] = np.asarray(values, dtype=np.float64)[at >= 0]
    return prior


def _names(labels: list[str]) -> str:
    return ", ".join(repr(label) for label in labels)


def _example(labels: list[str]) -> str:
    share = round(1.0 / len(labels), 4)
    rest = round(1.0 - share * (len(labels) - 1), 4)
    parts = [f'"{label}": {share}' for label in labels[:-1]] + [f'"{labels[-1]}": {rest}']
    return "{" + ", ".join(parts) + "}"


def _short(value: object, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters with the length said when longer."""
    if isinstance(value, int) and abs(value) >= 10**limit:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"
