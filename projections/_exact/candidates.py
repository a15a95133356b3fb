"""Candidate selection of a cold start: the elements that enter the flow problem at first.

One pass builds, per row and per column (per group of either view), a histogram of the weights
in bins of ``1 / BINS_PER_OCTAVE`` octave. Each group keeps the elements of the bins that hold
its ``cap + SLACK`` heaviest, and elements lighter than the bin from which the caps alone would
still allow ``BUDGET_MARGIN * total`` selections are dropped. The pass also records every
element's bin in a byte, so that collecting the candidates reads that instead of ``v``. Most
of a large instance never enters the flow problem (at 1,000 x 10,000 with the small budget,
253k of 10M elements). The bins cover 16 octaves below the largest weight; when heavy tails
put most groups' ``cap + SLACK``-th weight below that window (so that they would keep its
whole catch-all bin), one more pass counts the weights per octave and the window moves down
to where the caps bite, everything heavier falling in its first bin (``WINDOW_MOVES`` tries
at most). The same histograms place the total cap's dual price ``lam`` at the bin where the
caps alone would allow ``total`` elements. (Constants: :mod:`projections._exact.levers`.)
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
from numba import njit

from projections._exact import levers
from projections._exact.elements import empty, weight_range
from projections._exact.problem import Problem

logger = logging.getLogger(__name__)

#: The bin recorded for unusable elements (above every bin; ``levers.N_BINS`` fits in a byte).
UNUSABLE = 255


def cold_candidates(problem: Problem, clock: float) -> tuple[np.ndarray, float]:
    """Candidate elements from weight histograms, and a first value of the total cap's price.

    Bins are ``1 / BINS_PER_OCTAVE`` octave wide (constants: :mod:`~projections._exact.levers`).
    Every group keeps the bins that hold its ``cap + SLACK`` heaviest elements; overall, only
    bins above the lightest one where the caps would still allow ``BUDGET_MARGIN * total``
    elements count. The price (in weight units) is the lower edge of the bin where the caps
    alone would allow ``total`` elements (0 if they never reach it: the total cap is slack).
    The bins span 16 octaves from the top weight down, unless heavy tails make the window move
    (see the loop).

    Returns
    -------
    candidates : ndarray of int64, shape (n_candidates,)
        Element indices, increasing.
    lam : float
        The total cap's starting price in weight units.
    """
    values, groups, total = problem.values, problem.groups, problem.total
    caps1, caps2 = groups.caps1, groups.caps2
    g1, g2 = problem.g1, problem.g2
    n_bins = levers.N_BINS
    per_octave = int(math.log2(levers.BINS_PER_OCTAVE))
    shift = 52 - per_octave
    key_top = int(np.float64(problem.top).view(np.int64)) >> shift
    key_low = int(np.float64(problem.low).view(np.int64)) >> shift
    count = np.int32 if values.shape[0] < 2**31 else np.int64
    last = n_bins - 1
    octaves = None
    for attempt in range(levers.WINDOW_MOVES + 1):
        hist1 = np.zeros((g1 + 1, n_bins), dtype=count)
        hist2 = np.zeros((n_bins, g2 + 1), dtype=count)  # columns vary fastest in a matrix
        bins = np.empty(values.shape[0], dtype=np.uint8)
        _histograms(values, *groups, key_top, shift, n_bins, hist1, hist2, bins)
        keep1, room1 = _keeps(hist1.T, caps1, total, levers.SLACK)
        keep2, room2 = _keeps(hist2, caps2, total, levers.SLACK)
        room = np.minimum(room1, room2)
        wanted = levers.BUDGET_MARGIN * min(total, int(room[-1]))
        floor = min(int(np.searchsorted(room, wanted)), last)
        # Groups whose cap + SLACK heaviest reach below the window keep all of its catch-all
        # bin (unless the floor cuts it): with heavy tails (v = exp(2 z) spans ~60 octaves)
        # that is nearly every element. Then move the window down (see _window_top).
        lost = np.sum(hist1[:, last], where=keep1 == last) + np.sum(
            hist2[last, :], where=keep2 == last
        )
        if floor < last or lost <= total // 8 or key_top - (last - 1) <= key_low:
            break
        if attempt == levers.WINDOW_MOVES:
            break
        if octaves is None:
            octaves = np.zeros(2048, dtype=np.int64)
            weight_range(values, *groups, octaves)
        moved = _window_top(octaves, int(caps1.sum()) + int(caps2.sum()), attempt, last)
        if moved >= key_top:
            break
        logger.debug("exact: weight window moved down %d bins", key_top - moved)
        key_top = moved
    at_total = int(np.searchsorted(room, total))
    lam0 = 0.0
    if at_total < last:
        lam0 = float(np.int64((key_top - at_total) << shift).view(np.float64))
    logger.debug("exact histograms: %.3f s", time.perf_counter() - clock)
    out = empty(values.shape[0])
    n_out = _collect(
        bins, groups.labels1, groups.labels2, groups.n_cols, g1, g2, keep1, keep2, floor, out
    )
    logger.debug("exact collected %d candidates: %.3f s", n_out, time.perf_counter() - clock)
    return out[:n_out], lam0


def _window_top(octaves, sum_of_caps, attempt, last):
    """The key of the moved window's top bin (bins are keyed by ``weight bits >> shift``).

    The window's bottom goes an octave below where the usable weights (``octaves``: counts per
    binary exponent) reach ``sum_of_caps``, four more octaves lower at each further
    ``attempt``; its ``last`` bins span up from there.
    """
    per_octave = int(math.log2(levers.BINS_PER_OCTAVE))
    reach = np.cumsum(octaves[::-1])[::-1]  # usable weights in this octave or above
    needed = min(sum_of_caps, int(reach[0]))
    bottom = int(np.flatnonzero(reach >= needed)[-1]) - 1 - 4 * attempt
    return ((max(bottom, 0) + last // levers.BINS_PER_OCTAVE) << per_octave) - 1


@njit(cache=True)
def _bin(x, key_top, shift, n_bins):
    """Weight bin of ``x > 0``: 0 for the heaviest (and any above the window), ``n_bins - 1``
    for everything light."""
    b = key_top - (np.int64(np.float64(x).view(np.int64)) >> shift)
    return min(max(b, 0), n_bins - 1)


@njit(cache=True)
def _histograms(
    values, labels1, labels2, n_cols, caps1, caps2, key_top, shift, n_bins, hist1, hist2, bins
):
    """Count usable elements per bin: ``hist1[g, bin]``, ``hist2[bin, h]`` (g1, g2: no group).

    Also writes every element's bin to ``bins`` (``UNUSABLE`` for the unusable ones), so that
    :func:`_collect` reads one byte per element instead of squaring and binning it again.
    """
    g1 = caps1.shape[0]
    g2 = caps2.shape[0]
    if labels1.shape[0] == 0:  # matrix: row by row
        usable2 = caps2 > 0
        for g in range(g1):
            base = g * n_cols
            row = bins[base : base + n_cols]
            if caps1[g] == 0:
                row[:] = UNUSABLE
                continue
            # Bin the row first (a loop without branches that the compiler vectorises), then
            # count: twice as fast as one loop that does both.
            for h in range(n_cols):
                x = values[base + h] * values[base + h]
                b = key_top - (np.int64(np.float64(x).view(np.int64)) >> shift)
                b = min(max(b, 0), n_bins - 1)
                row[h] = b if (x > 0) & usable2[h] else UNUSABLE
            for h in range(n_cols):
                b = row[h]
                if b != UNUSABLE:
                    hist1[g, b] += 1
                    hist2[b, h] += 1
        return
    for e in range(values.shape[0]):
        g = labels1[e]
        h = labels2[e]
        x = values[e] * values[e]
        if x > 0 and (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
            b = _bin(x, key_top, shift, n_bins)
            hist1[g if g >= 0 else g1, b] += 1
            hist2[b, h if h >= 0 else g2] += 1
            bins[e] = b
        else:
            bins[e] = UNUSABLE


@njit(cache=True)
def _keeps(hist, caps, total, slack):
    """Per group, the bin that completes its ``cap + slack`` heaviest elements; per bin, room.

    ``hist[b, g]`` counts a view's group ``g`` (column ``len(caps)``: no group) in bin ``b``.
    ``keep[g]`` is the first bin where the group's running count reaches ``caps[g] + slack``
    (``total + slack`` for no group; the last bin if never), and ``room[b]`` how many elements
    of bins ``<= b`` the view's caps would allow.
    """
    n_bins, width = hist.shape
    n_groups = width - 1
    keep = np.full(width, n_bins - 1, dtype=np.int64)
    room = np.zeros(n_bins, dtype=np.int64)
    count = np.zeros(width, dtype=np.int64)
    for b in range(n_bins):
        allowed = 0
        for g in range(width):
            count[g] += hist[b, g]
            cap = caps[g] if g < n_groups else total
            if count[g] >= cap + slack and keep[g] == n_bins - 1 and b < n_bins - 1:
                keep[g] = b
            allowed += min(count[g], cap) if g < n_groups else count[g]
        room[b] = allowed
    return keep, room


@njit(cache=True)
def _collect(bins, labels1, labels2, n_cols, g1, g2, keep1, keep2, floor, out):
    """Usable elements in bin ``<= floor`` and in bin ``<= keep`` of a group of either view.

    ``bins`` is from :func:`_histograms` (``floor < UNUSABLE``). Writes their indices to
    ``out`` (as long as ``bins``; untouched pages cost nothing) and returns how many.
    """
    # Every index is written and the count advances only for the kept ones: no branch to
    # mispredict on an element that is kept with probability ~0.2.
    n_out = 0
    if labels1.shape[0] == 0:  # matrix: row by row, a column's limit is min(floor, keep2[h])
        limit2 = np.minimum(keep2[:g2], floor)
        for g in range(g1):
            limit1 = min(keep1[g], floor)
            base = g * n_cols
            for h in range(n_cols):
                b = bins[base + h]
                out[n_out] = base + h
                n_out += (b <= limit1) | (b <= limit2[h])
        return n_out
    for e in range(bins.shape[0]):
        g = labels1[e]
        h = labels2[e]
        b = bins[e]
        out[n_out] = e
        n_out += (b <= floor) & (
            (b <= keep1[g if g >= 0 else g1]) | (b <= keep2[h if h >= 0 else g2])
        )
    return n_out
