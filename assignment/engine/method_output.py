"""``MethodOutput``: what every assignment method returns, the one result type of the methods.

:func:`~assignment.engine.solve.solve` turns it into a
:class:`~assignment.engine.solve.SolveResult`, whose fields of the same names it fills.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MethodOutput", "PairsOfShape"]


class PairsOfShape:
    """What an assignment given as pairs ``rows``, ``cols`` of a ``shape`` (fields of the
    dataclasses that take it in) says: the dense matrix, built on first access, and the count."""

    @functools.cached_property
    def assignment(self) -> np.ndarray:
        """The assignment as a bool matrix, shape ``shape``."""
        dense = np.zeros(self.shape, dtype=bool)
        dense[self.rows, self.cols] = True
        return dense

    @property
    def n_assigned(self) -> int:
        """The number of pairs."""
        return int(self.rows.shape[0])


@dataclass(frozen=True, eq=False)
class MethodOutput(PairsOfShape):
    """An assignment method's result.

    Attributes
    ----------
    rows, cols : ndarray of int64, shape (pairs,)
        The assignment as pairs: worker ``rows[e]`` on task ``cols[e]``, sorted by worker,
        then task.
    shape : tuple of int
        ``(n_workers, n_tasks)``.
    message : str
        How the method stopped, for people.
    iterations : int
        Method iterations (tvcs-iht steps, greedy moves; 1 for random and q-lp).
    history : list of (iteration, accuracy)
        Exact accuracy of the support along the run (tvcs-iht; empty for the others).
    details : dict
        Method-specific figures (greedy: ``accuracy``, ``steps``, ...; q-lp: the LP's;
        tvcs-iht: ``accuracy``, ``start_accuracy``).
    assignment : ndarray of bool, shape (n_workers, n_tasks)
        The same assignment as a matrix, built on first access.
    """

    rows: np.ndarray
    cols: np.ndarray
    shape: tuple[int, int]
    message: str = ""
    iterations: int = 1
    history: list = field(default_factory=list)
    details: dict = field(default_factory=dict)

    @classmethod
    def from_pairs(cls, shape, rows, cols, **fields) -> MethodOutput:
        """The output for the pairs ``(rows[e], cols[e])`` in any order (distinct), sorted by
        worker, then task; ``fields`` are the other attributes."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        order = np.lexsort((cols, rows))
        return cls(rows[order], cols[order], tuple(shape), **fields)

    @classmethod
    def from_assignment(cls, assignment, **fields) -> MethodOutput:
        """The output for the bool matrix ``assignment``, shape (n_workers, n_tasks); the
        matrix is not kept (:attr:`assignment` rebuilds it on access)."""
        assignment = np.asarray(assignment, dtype=bool)
        rows, cols = np.nonzero(assignment)
        return cls(rows.astype(np.int64), cols.astype(np.int64), assignment.shape, **fields)
