"""Greedy projections onto overlapping group sparsity and sparse overlapping groups.

Jain, Rao & Dhillon, "Structured sparse regression via greedy hard-thresholding", NIPS 2016
(section 2.1, Algorithm 2; section 4, Algorithm 3). Given groups ``G_1 .. G_M`` of ``[p]`` that
may overlap, a vector is *k-group sparse* when its support lies in the union of at most ``k``
groups. Projecting onto that set means keeping ``v`` on the union of ``k`` groups that covers
the most energy ``sum v_i^2``: a maximum-coverage problem, NP-hard once groups overlap, whose
objective is monotone submodular, so the greedy choice (the group covering the most energy not
yet covered, ``k`` times) is within ``1 - 1/e`` of the optimum (Nemhauser, Wolsey & Fisher
1978; the paper's Lemma 2.2), and exact when the groups are disjoint.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from projections.result import ProjectionResult
from projections.tvcs import _as_real, _energy, _for_squares

__all__ = [
    "GroupProjectionResult",
    "OverlappingGroups",
    "greedy_guarantee",
    "project_overlapping_groups",
    "project_sparse_overlapping_groups",
]


def _check_count(value, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True, eq=False)
class OverlappingGroups:
    """Groups ``G_1 .. G_M`` of the coordinates ``0 .. n_features - 1``, possibly overlapping.

    Build it once and pass it to every projection: the checks and the group-by-coordinate
    incidence matrix are computed here only.

    Parameters
    ----------
    members : sequence of array-like of int
        ``members[g]`` lists the coordinates of group ``g``: non-empty, no repeats, each in
        ``[0, n_features)``. A coordinate in no group can never be kept.
    n_features : int
        ``p``, the length of the vectors the groups act on.

    Attributes
    ----------
    incidence : scipy.sparse.csr_matrix of float, shape (n_groups, n_features)
        ``incidence[g, i] = 1`` when ``i`` is in ``G_g``; ``incidence @ v**2`` is every
        group's energy.
    """

    members: tuple[np.ndarray, ...]
    n_features: int
    incidence: sp.csr_matrix = field(repr=False)

    def __init__(self, members, n_features) -> None:
        n_features = _check_count(n_features, "n_features", minimum=1)
        self._store(_checked_members(members, n_features, "members"), n_features)

    def _store(self, checked: list[np.ndarray], n_features: int) -> None:
        """Keep checked members and build the incidence matrix."""
        rows = np.repeat(np.arange(len(checked)), [c.size for c in checked])
        cols = np.concatenate(checked)
        incidence = sp.csr_matrix(
            (np.ones(cols.size), (rows, cols)), shape=(len(checked), n_features)
        )
        object.__setattr__(self, "members", tuple(checked))
        object.__setattr__(self, "n_features", n_features)
        object.__setattr__(self, "incidence", incidence)

    @classmethod
    def contiguous(cls, n_groups: int, size: int, overlap: int) -> OverlappingGroups:
        """The paper's synthetic layout: runs of ``size`` coordinates, each sharing its last
        ``overlap`` coordinates with the next run's first; ``p = n_groups (size - overlap) +
        overlap``."""
        n_groups = _check_count(n_groups, "n_groups", minimum=1)
        size = _check_count(size, "size", minimum=1)
        overlap = _check_count(overlap, "overlap", minimum=0)
        if overlap >= size:
            raise ValueError(f"overlap must be smaller than size ({size}), got {overlap}")
        stride = size - overlap
        members = [np.arange(g * stride, g * stride + size) for g in range(n_groups)]
        return cls(members, n_groups * stride + overlap)

    @property
    def n_groups(self) -> int:
        """``M``, the number of groups."""
        return len(self.members)

    @property
    def overlapping(self) -> bool:
        """Whether some coordinate lies in two groups."""
        return bool(np.any(np.asarray(self.incidence.sum(axis=0)).ravel() > 1))

    def union(self, chosen) -> np.ndarray:
        """Boolean mask of the coordinates covered by the groups ``chosen``.

        Parameters
        ----------
        chosen : iterable of int
            Group indices, each in ``[0, n_groups)``.

        Returns
        -------
        ndarray of bool, shape (n_features,)

        Raises
        ------
        ValueError
            An index that is not an integer (a bool included), negative or ``>= n_groups``:
            ``-1`` does not mean the last group.
        """
        mask = np.zeros(self.n_features, dtype=bool)
        for g in chosen:
            mask[self.members[self._group_index(g)]] = True
        return mask

    def _group_index(self, g) -> int:
        """``g`` as an int in ``[0, n_groups)``, else a ValueError naming it and ``n_groups``."""
        if isinstance(g, bool | np.bool_) or not isinstance(g, Integral | np.integer):
            raise ValueError(f"chosen must hold group indices (integers), got {g!r}")
        if not 0 <= g < self.n_groups:
            raise ValueError(
                f"chosen holds group index {int(g)}, outside [0, n_groups) = [0, {self.n_groups})"
            )
        return int(g)


@dataclass(frozen=True, eq=False)
class GroupProjectionResult(ProjectionResult):
    """A :class:`~projections.result.ProjectionResult` with the groups that were chosen.

    Attributes
    ----------
    groups : ndarray of int, shape (n_chosen,)
        Indices of the chosen groups in the order the greedy picked them, at most ``k``;
        ``support`` is covered by their union.
    """

    groups: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _checked_members(members, n_features: int, name: str) -> list[np.ndarray]:
    """Each group of ``members`` as sorted int64 indices; the errors call the argument
    ``name`` (``members`` for :class:`OverlappingGroups`, ``groups`` for the functions)."""
    if (
        not isinstance(members, Iterable)
        or isinstance(members, str | bytes)
        or getattr(members, "ndim", 1) == 0
    ):
        raise ValueError(f"{name} must be a sequence of index lists, got {members!r}")
    checked = []
    for g, group in enumerate(members):
        idx = np.asarray(group)
        if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
            raise ValueError(
                f"{name}[{g}] must be a non-empty 1-D array of integer indices, got {group!r}"
            )
        if idx.min() < 0 or idx.max() >= n_features:
            raise ValueError(
                f"{name}[{g}] has an index outside [0, {n_features}): "
                f"{int(idx.min())}..{int(idx.max())}"
            )
        if np.unique(idx).size != idx.size:
            raise ValueError(f"{name}[{g}] repeats an index: {idx.tolist()}")
        checked.append(np.sort(idx).astype(np.int64))
    if not checked:
        raise ValueError(f"{name} must hold at least one group")
    return checked


def _as_groups(groups, n_features: int) -> OverlappingGroups:
    """``groups`` itself if it is an :class:`OverlappingGroups`, else the groups it lists over
    ``n_features`` coordinates, checked; the errors name the argument ``groups``."""
    if isinstance(groups, OverlappingGroups):
        return groups
    n_features = _check_count(n_features, "n_features", minimum=1)
    built = object.__new__(OverlappingGroups)
    built._store(_checked_members(groups, n_features, "groups"), n_features)
    return built


def greedy_guarantee(k_greedy: int, k: int) -> float:
    """The fraction of the best ``k``-group energy that ``k_greedy`` greedy picks reach.

    Lemma 2.2 of Jain, Rao & Dhillon (2016): ``||u_hat - g||^2 <= exp(-k_greedy / k)
    ||g_{supp(u*)}||^2 + ||u* - g||^2``, i.e. the kept energy is at least ``(1 -
    exp(-k_greedy / k))`` times the optimum over ``k`` groups. ``1 - 1/e ~ 0.632`` at
    ``k_greedy = k``.

    Parameters
    ----------
    k_greedy : int
        Number of groups the greedy projection picks, ``>= 0``.
    k : int
        Number of groups of the optimum it is compared with, ``>= 1``.

    Returns
    -------
    float
        ``1 - exp(-k_greedy / k)``, in ``[0, 1)``.

    Raises
    ------
    ValueError
        Naming ``k_greedy`` or ``k`` when it is not an integer in range.

    References
    ----------
    Jain, Rao & Dhillon, "Structured sparse regression via greedy hard-thresholding",
    NIPS 2016, Lemma 2.2.
    """
    k_greedy = _check_count(k_greedy, "k_greedy", minimum=0)
    k = _check_count(k, "k", minimum=1)
    return 1.0 - math.exp(-k_greedy / k)


def _check_inputs(v, groups, k):
    arr = _as_real(v)
    if arr.ndim != 1:
        raise ValueError(f"v must be a 1-D array of shape (p,), got shape {arr.shape}")
    groups = _as_groups(groups, max(arr.size, 1))
    if arr.shape != (groups.n_features,):
        raise ValueError(f"v has shape {arr.shape}, the groups expect ({groups.n_features},)")
    if not np.all(np.isfinite(arr)):
        raise ValueError("v must be finite, got NaN or infinity")
    return arr, groups, _check_count(k, "k", minimum=0)


def _greedy_cover(energy: np.ndarray, groups: OverlappingGroups, k: int, per_group: int | None):
    """Algorithms 2 and 3: ``k`` times, pick the unpicked group whose remaining entries (its
    ``per_group`` largest, when given) hold the most energy, keep those entries and remove
    them from what remains. Ties go to the lower group index; stops early when no group has
    energy left. Returns ``(support mask, chosen groups)``."""
    remaining = energy.copy()
    support = np.zeros(energy.size, dtype=bool)
    chosen: list[int] = []
    taken = np.zeros(groups.n_groups, dtype=bool)
    for _ in range(k):
        if per_group is None:
            gains = groups.incidence @ remaining
        else:
            gains = np.array([_top_sum(remaining[m], per_group) for m in groups.members])
        gains[taken] = -1.0
        best = int(np.argmax(gains))
        if gains[best] <= 0.0:
            break
        members = groups.members[best]
        if per_group is not None:
            members = members[_top(remaining[members], per_group)]
        support[members] = True
        remaining[members] = 0.0
        taken[best] = True
        chosen.append(best)
    return support, np.array(chosen, dtype=np.int64)


def _top(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` largest positive ``values`` (ties to the lower position)."""
    order = np.lexsort((np.arange(values.size), -values))[:count]
    return np.sort(order[values[order] > 0])


def _top_sum(values: np.ndarray, count: int) -> float:
    return float(values[_top(values, count)].sum())


def _finish(arr, support, chosen, method, optimal, k, start) -> GroupProjectionResult:
    return GroupProjectionResult(
        x=np.where(support, arr, np.zeros((), dtype=arr.dtype)),
        support=support,
        objective=_energy(arr[support]),
        method=method,
        optimal=optimal,
        iterations=int(chosen.size),
        message=f"{chosen.size} of at most {k} groups chosen greedily"
        + (" (exact: the groups are disjoint)" if optimal else ""),
        seconds=time.perf_counter() - start,
        groups=chosen,
    )


def project_overlapping_groups(v, groups, *, k: int) -> GroupProjectionResult:
    """Greedy projection of ``v`` onto the vectors supported on at most ``k`` groups.

    Algorithm 2 of Jain, Rao & Dhillon (NIPS 2016): the group holding the most energy
    ``sum_{i in G} v_i^2`` among the coordinates not yet covered is picked, ``k`` times; the
    result keeps ``v`` on the union of the picked groups.

    Parameters
    ----------
    v : array-like of float, shape (p,)
    groups : OverlappingGroups or sequence of array-like of int
        The groups; a sequence is checked and converted on every call, so build an
        :class:`OverlappingGroups` once for repeated use.
    k : int
        Maximum number of groups, ``>= 0``.

    Returns
    -------
    GroupProjectionResult
        ``support`` is the union of the chosen ``groups`` (coordinates where ``v`` is 0
        included); ``objective = sum(v[support] ** 2)``. Fewer than ``k`` groups are chosen
        when the others would add no energy. ``optimal`` is True when the groups are disjoint
        (the greedy choice is then exact), False otherwise.

    Notes
    -----
    Guarantee (Lemma 2.2): with ``u*`` the exact projection onto ``k`` groups and ``u_hat``
    this one with ``k_greedy`` groups, ``||u_hat||^2 >= (1 - exp(-k_greedy / k)) ||u*||^2``
    (see :func:`greedy_guarantee`), because the covered energy is monotone submodular in the
    set of groups. Each pick costs one sparse product ``incidence @ r``: ``O(k nnz)`` in all,
    ``nnz = sum_g |G_g|``.
    """
    start = time.perf_counter()
    arr, groups, k = _check_inputs(v, groups, k)
    energy = np.square(_for_squares(arr), dtype=np.float64)
    support, chosen = _greedy_cover(energy, groups, k, None)
    return _finish(arr, support, chosen, "greedy", not groups.overlapping, k, start)


def project_sparse_overlapping_groups(
    v, groups, *, k: int, per_group: int
) -> GroupProjectionResult:
    """Greedy projection of ``v`` onto sparse overlapping groups (SoG).

    The set (7) of Jain, Rao & Dhillon (NIPS 2016, section 4): ``w = sum_g a_g`` with ``a_g``
    supported in ``G_g``, at most ``k`` of the ``a_g`` non-zero (the paper's ``k_1``) and each
    with at most ``per_group`` non-zeros (the paper's ``k_2``); so at most ``k * per_group``
    coordinates in all. Algorithm 3: ``k`` times, pick the unpicked group whose ``per_group``
    largest remaining entries hold the most energy (the paper's "groups that have large
    top-k_2 elements"), keep those entries and remove them from the remaining vector.

    Parameters
    ----------
    v : array-like of float, shape (p,)
    groups : OverlappingGroups or sequence of array-like of int
    k : int
        Maximum number of groups, ``>= 0``.
    per_group : int
        Maximum number of coordinates kept for each chosen group, ``>= 1``.

    Returns
    -------
    GroupProjectionResult
        ``support`` holds only coordinates with ``v_i^2 > 0``; each chosen group contributes its
        own at most ``per_group`` of them (they are disjoint). ``optimal`` is True when the
        groups are disjoint (each group's best entries are then independent of the others').

    Notes
    -----
    Each pick scans every group (``O(k nnz log(max |G_g|))``).
    """
    start = time.perf_counter()
    arr, groups, k = _check_inputs(v, groups, k)
    per_group = _check_count(per_group, "per_group", minimum=1)
    energy = np.square(_for_squares(arr), dtype=np.float64)
    support, chosen = _greedy_cover(energy, groups, k, per_group)
    return _finish(arr, support, chosen, "greedy-sog", not groups.overlapping, k, start)
