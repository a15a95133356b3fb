"""The Three-view Cardinality Structure (TVCS): which element belongs to which group.

A TVCS over ``p`` elements has three views (Yang et al., "On the projection operator to a
three-view cardinality constrained set", ICML 2017, Definition 1):

* view 0 is the whole set, capped by ``total``;
* view 1 is a set of disjoint groups, group ``g`` capped by ``caps1[g]``;
* view 2 is a second set of disjoint groups, group ``h`` capped by ``caps2[h]``.

An element may belong to no group of view 1 or view 2 (label ``-1``); it is then limited on
that side by the total only. The matrix case puts rows in view 1 and columns in view 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

__all__ = ["TVCSStructure"]


def _as_caps(value, sizes: np.ndarray, name: str, per: str = "group") -> np.ndarray:
    """Validate caps given as a scalar or one per group; return them as int64, clipped.

    ``sizes`` (int array, one entry per group) are the groups' sizes: a cap above its group's
    size binds nothing, so it is lowered to the size before the cast to int64. Caps meaning
    "no cap" (``1e30``, ``2**63``, ``2**70``, ...) thus neither wrap around nor overflow when
    doubled (:func:`~projections.solvers.double_caps`). ``name`` is the caller's field and
    ``per`` what one entry belongs to (``"worker"``, ``"task"``, ``"row"``, ...): both appear
    in the error messages.
    """
    arr = _whole_numbers(np.asarray(value))
    length = sizes.shape[0]
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a non-negative integer or one per {per}, got {value!r}")
    if arr.ndim == 0:
        arr = np.full(length, arr)
    elif arr.ndim != 1 or arr.shape[0] != length:
        raise ValueError(
            f"{name} must be a non-negative integer or one per {per} (length {length}), "
            f"got shape {np.shape(value)}"
        )
    if arr.dtype.kind == "f":
        _check_whole(arr, name, per)
    if np.any(arr < 0):
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} must be non-negative, got {arr[bad].item()!r} at {per} {bad}")
    return np.minimum(arr, sizes).astype(np.int64)


def _whole_numbers(arr: np.ndarray) -> np.ndarray:
    """``arr``, or as float64 when it holds Python ints too large for int64 (``2**70``)."""
    if arr.dtype != object or not all(
        isinstance(x, Integral) and not isinstance(x, bool) for x in arr.flat
    ):
        return arr
    return arr.astype(np.float64)


def _check_whole(arr: np.ndarray, name: str, per: str) -> None:
    """Raise a ValueError naming ``name`` and the ``per`` of a non-finite or fractional cap."""
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"{name} must be finite, got NaN or infinity at {per} "
            f"{int(np.flatnonzero(~np.isfinite(arr))[0])}"
        )
    if np.any(arr != np.round(arr)):
        bad = int(np.flatnonzero(arr != np.round(arr))[0])
        raise ValueError(f"{name} must be whole numbers, got {arr[bad].item()!r} at {per} {bad}")


def _as_total(total, n_elements: int, name: str = "total", *, optional: bool = True) -> int:
    """Validate the total cap; ``None`` (when ``optional``) means no cap beyond the elements.

    Returns the cap as given (a Python int), not yet clipped to ``n_elements``.
    """
    if total is None and optional:
        return n_elements
    kind = "a non-negative integer" + (" or None" if optional else "")
    if isinstance(total, bool) or not isinstance(total, Real | np.number):
        raise ValueError(f"{name} must be {kind}, got {total!r}")
    if not isinstance(total, Integral | np.integer):
        if not np.isfinite(total) or float(total) != round(float(total)):
            raise ValueError(f"{name} must be a whole number, got {total!r}")
    value = int(total)
    if value < 0:
        raise ValueError(f"{name} must be non-negative, got {value}")
    return value


def _as_labels(labels, name: str) -> np.ndarray:
    """Validate one group label per element (``-1`` = no group); return them as int64."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of group labels, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or np.any(arr != np.round(arr)):
            raise ValueError(
                f"{name} must hold integer group labels (-1 = no group), got dtype {arr.dtype}"
            )
    arr = arr.astype(np.int64)
    if np.any(arr < -1):
        bad = int(np.flatnonzero(arr < -1)[0])
        raise ValueError(f"{name} must be >= -1 (-1 = no group), got {arr[bad]} at {bad}")
    return arr


def _dense_codes(labels: np.ndarray) -> np.ndarray:
    """``labels`` renumbered ``0 .. n_groups - 1`` in increasing order, ``-1`` kept: labels that
    are ids (``10**12``) then index arrays of ``n_groups`` entries, not of ``max + 1``."""
    grouped = labels >= 0
    codes = np.full(labels.shape, -1, dtype=np.int64)
    codes[grouped] = np.unique(labels[grouped], return_inverse=True)[1]
    return codes


def _labels_and_caps(labels, caps, labels_name: str, caps_name: str):
    """One view's labels (int64, shape (p,)) and caps (int64, clipped to the group sizes),
    both fresh and read-only.

    With one cap for every group (a scalar ``caps``) the labels only name groups, and are
    renumbered by :func:`_dense_codes`; with one cap per group they index ``caps``.
    """
    checked = _as_labels(labels, labels_name)
    per_group = np.ndim(caps) == 1
    if not per_group:
        checked = _dense_codes(checked)
    n_groups = np.size(caps) if per_group else int(checked.max(initial=-1)) + 1
    if checked.size and checked.max() >= n_groups:
        raise ValueError(
            f"{caps_name} has {n_groups} groups but a label {int(checked.max())} refers to "
            f"group {int(checked.max())}"
        )
    sizes = np.bincount(checked[checked >= 0], minlength=n_groups)
    return _frozen(checked), _frozen(_as_caps(caps, sizes, caps_name))


def _group_sizes(structure: TVCSStructure) -> tuple[np.ndarray, np.ndarray]:
    """The number of elements of every view-1 and every view-2 group."""
    if structure.shape is not None:
        n_rows, n_cols = structure.shape
        return np.full(n_rows, n_cols, dtype=np.int64), np.full(n_cols, n_rows, dtype=np.int64)
    return tuple(
        np.bincount(labels[labels >= 0], minlength=caps.shape[0])
        for labels, caps in (
            (structure.labels1, structure.caps1),
            (structure.labels2, structure.caps2),
        )
    )


def _frozen(fresh: np.ndarray) -> np.ndarray:
    """``fresh`` (an array no one else holds) made read-only, as every array a structure gives
    out is (the kernels then see one array type whichever way the structure was built)."""
    fresh.setflags(write=False)
    return fresh


def _read_only(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself when it is already read-only, else a read-only copy (the caller's array
    stays writeable and no longer reaches the structure)."""
    return _frozen(arr.copy()) if arr.flags.writeable else arr


def _is_count(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, Integral | np.integer) and value >= 0


def _is_int_array(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == np.int64


@dataclass(frozen=True, eq=False)
class TVCSStructure:
    """Group membership and caps of a Three-view Cardinality Structure.

    Build one with :meth:`from_matrix` or :meth:`from_labels`, which take caps and labels in
    any array-like form, validate them and name the caller's fields in their errors. Calling
    the class itself takes the stored form only (int64 arrays, ``total`` at most
    ``n_elements``, either ``shape`` or both label arrays) and refuses anything else with a
    ``ValueError`` that says which of the two to use.

    A structure cannot change once validated: its caps and label arrays are read-only (the
    class keeps a read-only copy of any writeable array it is given).

    Attributes
    ----------
    n_elements : int
        Number of elements ``p``.
    caps1 : ndarray of int64, shape (n_groups1,)
        Cap of each view-1 group (rows in the matrix case). :meth:`from_matrix` and
        :meth:`from_labels` lower a cap above its group's size to that size (it binds
        nothing), so a huge cap such as ``2**63`` or ``1e30`` means "no cap".
    caps2 : ndarray of int64, shape (n_groups2,)
        Cap of each view-2 group (columns in the matrix case).
    total : int
        Cap on the whole support (view 0), at most ``n_elements``.
    shape : tuple of int or None
        ``(n_rows, n_cols)`` for a matrix structure, where element ``i * n_cols + j`` is in
        row group ``i`` and column group ``j``; ``None`` for a general structure.
    """

    n_elements: int
    caps1: np.ndarray
    caps2: np.ndarray
    total: int
    shape: tuple[int, int] | None = None
    _labels1: np.ndarray | None = None
    _labels2: np.ndarray | None = None

    def __post_init__(self) -> None:
        """Check the stored form (O(groups), and O(p) for a general structure's labels)."""
        use = "build it with TVCSStructure.from_matrix or TVCSStructure.from_labels"
        if not _is_count(self.n_elements) or not _is_count(self.total):
            raise ValueError(f"n_elements and total must be non-negative integers; {use}")
        if self.total > self.n_elements:
            raise ValueError(
                f"total {self.total} exceeds n_elements {self.n_elements} (from_matrix and "
                f"from_labels lower it to p); {use}"
            )
        for name, caps in (("caps1", self.caps1), ("caps2", self.caps2)):
            if not _is_int_array(caps) or caps.ndim != 1 or (caps.size and caps.min() < 0):
                raise ValueError(f"{name} must be a 1-D int64 array of non-negative caps; {use}")
        if self.shape is not None:
            self._check_matrix(use)
        else:
            self._check_labels(use)
        for name in ("caps1", "caps2", "_labels1", "_labels2"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _read_only(getattr(self, name)))

    def _check_matrix(self, use: str) -> None:
        n_rows, n_cols = self.shape
        if n_rows * n_cols != self.n_elements or (self.caps1.size, self.caps2.size) != (
            n_rows,
            n_cols,
        ):
            raise ValueError(
                f"shape {self.shape} must have n_elements entries and one cap a row and a "
                f"column; {use}"
            )
        if self._labels1 is not None or self._labels2 is not None:
            raise ValueError(f"a matrix structure has no labels (its rows and columns); {use}")

    def _check_labels(self, use: str) -> None:
        for name, labels, caps in (
            ("labels1", self._labels1, self.caps1),
            ("labels2", self._labels2, self.caps2),
        ):
            if not _is_int_array(labels) or labels.shape != (self.n_elements,):
                raise ValueError(
                    f"a structure without shape needs {name}, an int64 array of n_elements "
                    f"group labels; {use}"
                )
            if labels.size and (labels.min() < -1 or labels.max() >= caps.size):
                raise ValueError(f"{name} must be in [-1, len(caps)) (-1 = no group); {use}")

    @classmethod
    def from_matrix(
        cls, shape, *, max_per_row, max_per_col, total=None, names=None
    ) -> TVCSStructure:
        """Rows as view 1 and columns as view 2 of an ``n_rows x n_cols`` matrix.

        Parameters
        ----------
        shape : tuple of two non-negative ints
        max_per_row : int or array-like of int, shape (n_rows,)
            At most this many entries of each row; a cap above ``n_cols`` is lowered to it.
        max_per_col : int or array-like of int, shape (n_cols,)
            At most this many entries of each column; a cap above ``n_rows`` is lowered to it.
        total : int or None
            Cap on the number of selected entries; ``None`` means no total cap.
        names : dict of str, optional
            How the caller calls the fields, for the error messages (this is the one check of
            caps and totals; callers such as
            :class:`~assignment.engine.problem.AssignmentProblem` pass their own names rather
            than validate again). Keys: ``"max_per_row"``, ``"max_per_col"``, ``"total"`` (the
            arguments), ``"row"``, ``"col"`` (what one entry of a cap belongs to; default
            ``"row"`` and ``"column"``). Naming ``"total"`` also makes it required: ``None``
            is then refused, as a caller's field such as ``budget`` has no "no cap" value.

        Raises
        ------
        ValueError
            Naming the field (and the row or column) of a cap or total that is negative,
            fractional, not finite, of the wrong length or not a number.
        """
        if (
            not isinstance(shape, Sequence | np.ndarray)
            or len(shape) != 2
            or any(
                isinstance(s, bool) or not isinstance(s, Integral | np.integer) or s < 0
                for s in shape
            )
        ):
            raise ValueError(f"shape must be two non-negative integers, got {shape!r}")
        unknown = set(names or ()) - {"max_per_row", "max_per_col", "total", "row", "col"}
        if unknown:
            raise ValueError(f"names has unknown keys {sorted(unknown)}")
        label = {"max_per_row": "max_per_row", "max_per_col": "max_per_col", "total": "total"}
        label |= {"row": "row", "col": "column"} | dict(names or {})
        n_rows, n_cols = int(shape[0]), int(shape[1])
        row_sizes = np.full(n_rows, n_cols, dtype=np.int64)
        col_sizes = np.full(n_cols, n_rows, dtype=np.int64)
        caps1 = _as_caps(max_per_row, row_sizes, label["max_per_row"], label["row"])
        caps2 = _as_caps(max_per_col, col_sizes, label["max_per_col"], label["col"])
        p = n_rows * n_cols
        value = _as_total(total, p, label["total"], optional=not names or "total" not in names)
        return cls(p, caps1, caps2, min(value, p), (n_rows, n_cols))

    @classmethod
    def from_labels(cls, labels1, labels2, *, caps1, caps2, total=None) -> TVCSStructure:
        """A general TVCS from one view-1 and one view-2 group label per element.

        Parameters
        ----------
        labels1, labels2 : array-like of int, shape (p,)
            Group of each element in view 1 / view 2; ``-1`` = no group.
        caps1 : int or array-like of int, shape (n_groups1,)
            Cap of each view-1 group. An array gives one cap per group: ``labels1`` then
            index it (``0 .. len(caps1) - 1``). A single int caps every group alike: the
            labels are then only names (any non-negative integers, e.g. ids such as
            ``10**12``) and are renumbered ``0 .. n_groups1 - 1`` in increasing order, as
            ``np.unique(..., return_inverse=True)`` does; ``labels1`` of the structure holds
            these codes. A cap above its group's size is lowered to that size.
        caps2 : int or array-like of int, shape (n_groups2,)
            The same for view 2.
        total : int or None
            Cap on the whole support; ``None`` means no total cap.

        Raises
        ------
        ValueError
            Naming ``labels1``, ``labels2``, ``caps1``, ``caps2`` or ``total``: labels not 1-D,
            of different lengths, fractional or below ``-1``, a label beyond ``len(caps)``,
            caps or a total that are negative, fractional or not finite.
        """
        l1, c1 = _labels_and_caps(labels1, caps1, "labels1", "caps1")
        l2, c2 = _labels_and_caps(labels2, caps2, "labels2", "caps2")
        if l1.shape != l2.shape:
            raise ValueError(
                "labels1 and labels2 must have the same length, "
                f"got {l1.shape[0]} and {l2.shape[0]}"
            )
        p = int(l1.shape[0])
        return cls(p, c1, c2, min(_as_total(total, p), p), None, l1, l2)

    @property
    def labels1(self) -> np.ndarray:
        """View-1 group of every element, shape (p,), ``-1`` = no group; read-only."""
        if self._labels1 is not None:
            return self._labels1
        n_rows, n_cols = self.shape
        return _frozen(np.repeat(np.arange(n_rows, dtype=np.int64), n_cols))

    @property
    def labels2(self) -> np.ndarray:
        """View-2 group of every element, shape (p,), ``-1`` = no group; read-only."""
        if self._labels2 is not None:
            return self._labels2
        n_rows, n_cols = self.shape
        return _frozen(np.tile(np.arange(n_cols, dtype=np.int64), n_rows))

    def is_feasible(self, support) -> bool:
        """Whether a support (bool, shape (p,) or the matrix shape) satisfies every cap."""
        return not self.violations(support)

    def violations(self, support) -> list[str]:
        """Human-readable list of the caps a support breaks (empty if feasible)."""
        s = np.asarray(support, dtype=bool).reshape(-1)
        if s.shape[0] != self.n_elements:
            raise ValueError(f"support has {s.shape[0]} elements, structure has {self.n_elements}")
        problems = []
        if int(s.sum()) > self.total:
            problems.append(f"total: {int(s.sum())} selected > cap {self.total}")
        if self._labels1 is None:  # a matrix: rows and columns, without p labels each
            chosen_by_view = np.divmod(np.flatnonzero(s), self.shape[1])
        else:
            chosen_by_view = (self.labels1[s], self.labels2[s])
        for name, chosen, caps in zip(
            ("view 1", "view 2"), chosen_by_view, (self.caps1, self.caps2), strict=True
        ):
            counts = np.bincount(chosen[chosen >= 0], minlength=caps.shape[0])
            over = np.flatnonzero(counts > caps)
            problems.extend(
                f"{name} group {g}: {counts[g]} selected > cap {caps[g]}" for g in over[:10]
            )
        return problems
