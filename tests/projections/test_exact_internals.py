"""The exact projection's internal levers: each still gives the HiGHS optimum when forced."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import highs_optimum
from projection_checks import assert_valid_projection, random_matrix_instance

from projections import TVCSStructure
from projections._dual import _kth_largest, _threshold, dual_prices
from projections._exact import graph as exact_graph
from projections._exact import levers
from projections._mincostflow import (
    build_residual_graph,
    fill_skeleton,
    flows_by_ident,
    layout,
    price_update,
    refine,
    select_active,
    skeleton_graph,
)
from projections.tvcs import project


@pytest.mark.parametrize("seed", range(5))
def test_kth_largest_and_threshold_match_sorting(seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(-20, 20, size=int(rng.integers(1, 60)))  # many ties
    ranked = np.sort(values)[::-1]
    for k in range(1, values.size + 1):
        buf = values.copy()
        assert _kth_largest(buf, buf.size, k) == ranked[k - 1]
        assert np.all(buf[: k - 1] >= ranked[k - 1])
    for k in range(values.size + 2):
        t = _threshold(values.copy(), values.size, k)
        assert t >= 0
        if k < values.size:
            # at most k values are above the threshold, at least k at or above it
            assert np.sum(values > t) <= k
            assert t == 0 or np.sum(values >= t) >= k
        else:
            assert t == 0


@pytest.mark.parametrize("seed", range(6))
def test_selection_matches_sorting_on_large_and_wide_ranging_inputs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5000))
    values = [
        rng.integers(-5, 5, n),  # many ties
        (rng.standard_normal(n) * 1e15).astype(np.int64),
        np.concatenate(
            [
                rng.integers(-(2**61), -(2**61) + 10, n // 2),
                rng.integers(2**61 - 10, 2**61, n - n // 2),
            ]
        ),  # a huge range
    ][seed % 3]
    ranked = np.sort(values)[::-1]
    for k in {1, n // 2, n - 1, int(rng.integers(1, n))}:
        for max_rounds in (-1, 0, 3):  # (0 and 3: the sorting fallback, at once or later)
            buf = values.copy()
            assert _kth_largest(buf, n, k, max_rounds) == ranked[k - 1]
            assert np.all(buf[: k - 1] >= ranked[k - 1])
        mid = ranked[k] + (ranked[k - 1] - ranked[k]) // 2
        assert _threshold(values.copy(), n, k) == max(mid, 0)


def _arcs_for(weights, structure):
    """The fixed arcs and one arc per usable element, numbered as in
    :func:`projections._exact.solve`.

    Returns ``n_nodes, fixed (tails, heads, caps), elements, (tails, heads), costs`` (element
    arc costs are ``-costs``, weights scaled by 1000 and rounded).
    """
    g1, g2 = structure.caps1.shape[0], structure.caps2.shape[0]
    source, sink = g1 + g2, g1 + g2 + 1
    elements = np.flatnonzero(weights > 0)
    l1, l2 = structure.labels1[elements], structure.labels2[elements]
    tails = np.where(l1 >= 0, l1, source).astype(np.int64)
    heads = np.where(l2 >= 0, g1 + l2, sink).astype(np.int64)
    costs = np.rint(weights[elements] * 1000).astype(np.int64)
    fixed = (
        np.concatenate([np.full(g1, source), g1 + np.arange(g2), [sink]]).astype(np.int64),
        np.concatenate([np.arange(g1), np.full(g2, sink), [source]]).astype(np.int64),
        np.concatenate([structure.caps1, structure.caps2, [structure.total]]).astype(np.int64),
    )
    return g1 + g2 + 2, fixed, elements, (tails, heads), costs


def _graph_for(weights, structure):
    """The residual graph of every usable element, as :func:`projections._exact.solve` builds it."""
    n_nodes, (fixed_t, fixed_h, caps), elements, (tails, heads), costs = _arcs_for(
        weights, structure
    )
    graph = build_residual_graph(
        n_nodes,
        np.concatenate([fixed_t, tails]),
        np.concatenate([fixed_h, heads]),
        np.concatenate([caps, np.ones(elements.size, np.int64)]),
        np.concatenate([np.zeros(caps.size, np.int64), -costs]),
        np.zeros(caps.size + elements.size, np.int64),
    )
    return graph, caps.size, elements, costs


@pytest.mark.parametrize("sweeps", [1, 3, 30])
def test_coordinate_descent_prices_are_a_dual_bound(sweeps):
    """Weak duality: the dual objective of the prices bounds the optimum from above."""
    rng = np.random.default_rng(sweeps)
    V, rows, cols, total = random_matrix_instance(rng, 12, 30, 0.6)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    weights = V.ravel() ** 2
    graph, n_fixed, elements, costs = _graph_for(weights, structure)
    first, last, _, head, _, cost, _, ident, _ = graph
    g1, g2 = rows.size, cols.size
    u = np.zeros(g1 + 1, np.int64)
    v = np.zeros(g2 + 1, np.int64)
    lam, price = dual_prices(
        first,
        last,
        head,
        cost,
        ident,
        n_fixed,
        structure.caps1,
        structure.caps2,
        total,
        u,
        v,
        np.int64(0),
        sweeps,
    )
    assert lam >= 0
    assert np.all(u >= 0)
    assert np.all(v >= 0)
    np.testing.assert_array_equal(price[:g1], u[:g1] + lam)
    np.testing.assert_array_equal(price[g1 : g1 + g2], -v[:g2])
    r, c = np.divmod(elements, V.shape[1])
    slack = np.maximum(costs - u[r] - v[c] - lam, 0)
    dual = rows @ u[:g1] + cols @ v[:g2] + total * lam + slack.sum()
    best = highs_optimum(np.rint(weights * 1000) * (weights > 0), structure)
    assert dual >= best - 1e-6


def _medium(seed, budget=0.8):
    V, rows, cols, total = random_matrix_instance(np.random.default_rng(seed), 40, 200, budget)
    return V, TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("RELABELS", 0),  # every refine below the top eps stops at once and resumes coarser
        ("RELABELS", 1),
        ("START", 2**40),  # first phase at eps = 1
        ("START", 1),
        ("SWEEPS", 0),  # no coordinate descent: only the histogram's lam
        ("AHEAD", 0.0),
        ("POOL_WINDOW", 1),  # a certificate pool from the first check on
        ("POOL", 1),
        ("ADMIT", 0.001),  # a certificate pass adds one violator at a time (the worst)
    ],
)
def test_exact_stays_optimal_with_each_lever_forced(monkeypatch, setting, value):
    monkeypatch.setattr(levers, setting, value)
    for seed, budget in ((2, 0.8), (3, 0.3)):
        V, structure = _medium(seed, budget)
        result = project(V, structure)
        assert_valid_projection(V, structure, result)
        assert result.optimal
        assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


def test_the_slack_lever_reaches_the_histogram_kernel(monkeypatch):
    # SLACK is read when the candidates are chosen, not frozen into the compiled kernel.
    V, structure = _medium(2, 0.3)
    counts = []
    for slack in (0, 40):
        monkeypatch.setattr(levers, "SLACK", slack)
        counts.append(project(V, structure).details["candidate_elements"])
    assert counts[0] < counts[1]


def test_rebuilding_the_graph_when_it_lacks_room_keeps_the_flow(monkeypatch):
    monkeypatch.setattr(exact_graph, "add_arcs", lambda *args: False)  # always rebuild
    monkeypatch.setattr(levers, "BUDGET_MARGIN", 0.3)  # a candidate graph that misses a lot
    monkeypatch.setattr(levers, "SLACK", 0)
    for seed, budget in ((2, 0.8), (3, 0.3)):
        V, structure = _medium(seed, budget)
        result = project(V, structure)
        assert result.details["candidate_rounds"] > 1  # some violators were added
        assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


def test_a_warm_start_from_unrelated_prices_still_gives_the_optimum():
    V, structure = _medium(4)
    other = np.random.default_rng(99).standard_normal(V.shape) * 30
    state = project(other, structure).warm_start
    warm = project(V, structure, warm_start=state)
    assert warm.optimal
    assert warm.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


def test_a_warm_start_from_the_same_input_is_taken_and_stays_optimal():
    V, structure = _medium(5)
    first = project(V, structure)
    assert first.details["warm_started"] is False
    again = project(V, structure, warm_start=first.warm_start)
    assert again.details["warm_started"] is True
    assert again.optimal
    np.testing.assert_array_equal(again.support, first.support)


@pytest.mark.parametrize("noise", [1e-9, 1e-4, 1e-2])
def test_warm_starts_along_a_converging_sequence_match_highs(noise):
    V, structure = _medium(6, 0.5)
    rng = np.random.default_rng(7)
    state = project(V, structure).warm_start
    for _ in range(4):
        V = V + noise * rng.standard_normal(V.shape)
        warm = project(V, structure, warm_start=state)
        state = warm.warm_start
        assert_valid_projection(V, structure, warm)
        assert warm.optimal
        assert warm.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)
        if noise <= 1e-4:  # close enough for the warm path (further away it starts cold)
            assert warm.details["warm_started"] is True


def test_a_warm_start_on_a_general_structure_matches_highs():
    rng = np.random.default_rng(12)
    p = 400
    structure = TVCSStructure.from_labels(
        rng.integers(-1, 15, p),
        rng.integers(-1, 25, p),
        caps1=rng.integers(0, 12, 15),
        caps2=rng.integers(0, 6, 25),
        total=60,
    )
    v = rng.standard_normal(p)
    state = project(v, structure).warm_start
    v = v + 1e-3 * rng.standard_normal(p)
    warm = project(v, structure, warm_start=state)
    assert_valid_projection(v, structure, warm)
    assert warm.objective == pytest.approx(highs_optimum(v**2, structure), rel=1e-9)


@pytest.mark.parametrize("general", [False, True])
def test_weights_that_round_to_zero_cost_fill_the_remaining_room_heaviest_first(general):
    v = np.array([1e6, 3e-11, 1e-11, 2e-11, 0.0, 4e-11])  # tiny: below the cost resolution
    if general:
        structure = TVCSStructure.from_labels(
            [0, -1, 0, 1, 1, 1], [0, 0, -1, -1, 1, 1], caps1=[3, 1], caps2=[2, 3], total=4
        )
    else:
        structure = TVCSStructure.from_matrix((2, 3), max_per_row=2, max_per_col=1, total=4)
    result = project(v, structure)
    assert_valid_projection(v, structure, result)
    chosen = set(np.flatnonzero(result.support).tolist())
    if general:
        # 1e6 first; then 4e-11 (group 1 / 1), 3e-11 (no group / 0), 1e-11 (0 / none) fit
        assert chosen == {0, 5, 1, 2}
    else:
        # rows [1e6, 3e-11, 1e-11] and [2e-11, 0, 4e-11]: columns 0 and 2 go to the larger
        assert chosen == {0, 1, 5}


@pytest.mark.parametrize("tiny", [1e-160, 1e-300, 3e-162])
def test_subnormal_and_tiny_weights_are_still_projected_exactly(tiny):
    rng = np.random.default_rng(3)
    V = tiny * rng.standard_normal((5, 7))  # v**2 is subnormal or zero
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=2, max_per_col=2, total=6)
    result = project(V, structure)
    assert_valid_projection(V, structure, result)
    scaled = (V.ravel() ** 2) * 2.0**600  # exact: a power of two; of order tiny**2 * 1e180
    assert result.objective * 2.0**600 == pytest.approx(highs_optimum(scaled, structure), rel=1e-9)
    again = project(V * 1.000001, structure, warm_start=result.warm_start)
    assert again.optimal


@pytest.mark.parametrize("relabels", [0, 1, 3])
@pytest.mark.parametrize("seed", range(3))
def test_stopped_refines_on_rank_one_weights_stay_feasible_and_optimal(monkeypatch, relabels, seed):
    # Row and column factors make most weights comparable: the histograms keep a poor
    # candidate graph, refines stop often, and the excess they leave must survive the arcs
    # being switched off at the next eps (a node with excess and no active residual arc).
    monkeypatch.setattr(levers, "RELABELS", relabels)
    rng = np.random.default_rng(seed)
    n, m = 30, 150
    V = np.outer(rng.uniform(0.5, 2, n), rng.uniform(0.5, 2, m)) * rng.uniform(0.9, 1.1, (n, m))
    rows = rng.integers(1, m // 4 + 1, n)
    cols = rng.integers(1, n // 4 + 1, m)
    total = int(0.8 * min(rows.sum(), cols.sum()))
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    result = project(V, structure)
    assert_valid_projection(V, structure, result)
    assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_select_active_saturates_the_arcs_far_below_the_threshold(seed):
    """After select_active: no residual arc of reduced cost <= -threshold, the active pairs
    are exactly those with a residual arc within the threshold, the guards bound the inactive
    residual arcs, and the excesses are those of the flow."""
    rng = np.random.default_rng(seed)
    V, rows, cols, total = random_matrix_instance(rng, 10, 40, 0.6)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    weights = V.ravel() ** 2
    graph, n_fixed, elements, costs = _graph_for(weights, structure)
    first, last, act, head, rescap, cost, rev, ident, guard = graph
    g1, g2 = rows.size, cols.size
    n_nodes = g1 + g2 + 2
    u = np.zeros(g1 + 1, np.int64)
    v = np.zeros(g2 + 1, np.int64)
    _, price = dual_prices(
        first, last, head, cost, ident, n_fixed, *(structure.caps1, structure.caps2), total,
        u, v, np.int64(0), 2,
    )  # fmt: skip
    excess = np.zeros(n_nodes, np.int64)
    threshold = int(costs.max()) // 8
    select_active(*graph, price, threshold, excess)
    slots = np.concatenate([np.arange(first[x], last[x]) for x in range(n_nodes)])
    tails = np.repeat(np.arange(n_nodes), last - first[:-1])
    reduced = cost[slots] + price[tails] - price[head[slots]]
    residual = rescap[slots] > 0
    assert not np.any(residual & (reduced <= -threshold))
    active = slots < act[tails]
    near = residual & (np.abs(reduced) < threshold)
    pair_near = near | near[np.searchsorted(slots, rev[slots])]
    np.testing.assert_array_equal(active, pair_near)
    off = residual & ~active
    assert np.all(guard[tails[off]] >= (price[head[slots]] - cost[slots])[off])
    flows = flows_by_ident(first, last, rescap, ident, n_fixed + elements.size)
    fixed_t = np.concatenate([np.full(g1, g1 + g2), g1 + np.arange(g2), [g1 + g2 + 1]])
    fixed_h = np.concatenate([np.arange(g1), np.full(g2, g1 + g2 + 1), [g1 + g2]])
    r, c = np.divmod(elements, V.shape[1])
    arc_t = np.concatenate([fixed_t, r])
    arc_h = np.concatenate([fixed_h, g1 + c])
    net = np.bincount(arc_h, flows, n_nodes) - np.bincount(arc_t, flows, n_nodes)
    np.testing.assert_array_equal(excess, net)
    assert flows[n_fixed:].sum() > 0  # some element arcs were saturated
    # a refine from there ends with a circulation
    _, _, finished = refine(*graph, price, max(1, threshold // 8), excess, 10**9)
    assert finished
    assert not excess.any()


@pytest.mark.parametrize("seed", range(4))
def test_layout_of_a_skeleton_matches_select_active(seed):
    """The cold start's one-pass layout leaves the graph select_active leaves (same slots,
    flows and excesses, same order), with guards that still bound the inactive residual arcs
    (and are no looser)."""
    rng = np.random.default_rng(seed)
    V, rows, cols, total = random_matrix_instance(rng, 12, 50, [0.8, 0.3, 0.05, 1.0][seed])
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    weights = V.ravel() ** 2
    graph, n_fixed, _, costs = _graph_for(weights, structure)
    first, last, _, head, _, cost, _, ident, _ = graph
    g1, g2 = rows.size, cols.size
    n_nodes = g1 + g2 + 2
    _, price = dual_prices(
        first, last, head, cost, ident, n_fixed, *(structure.caps1, structure.caps2), total,
        np.zeros(g1 + 1, np.int64), np.zeros(g2 + 1, np.int64), np.int64(0), 2,
    )  # fmt: skip
    fixed_caps = np.concatenate([structure.caps1, structure.caps2, [structure.total]])
    for threshold in (int(costs.max()) // 8, int(costs.max()) // 100 + 1):
        graph, *_ = _graph_for(weights, structure)
        skeleton = _graph_for_skeleton(weights, structure)
        excess, laid = np.zeros(n_nodes, np.int64), np.zeros(n_nodes, np.int64)
        select_active(*graph, price, threshold, excess)
        layout(skeleton, price, threshold, laid, fixed_caps)
        for a, b in zip(graph[:8], skeleton[:8], strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(excess, laid)
        _, last, act, head, rescap, cost, _, _, guard = skeleton
        assert np.all(guard <= graph[8])
        for x in range(n_nodes):
            off = np.arange(act[x], last[x])
            off = off[rescap[off] > 0]
            if off.size:
                assert guard[x] == np.max(price[head[off]] - cost[off])
            else:
                assert guard[x] == np.iinfo(np.int64).min


def _graph_for_skeleton(weights, structure):
    """:func:`_graph_for`'s graph as a skeleton (head, cost and ident only)."""
    n_nodes, (fixed_t, fixed_h, caps), elements, (tails, heads), costs = _arcs_for(
        weights, structure
    )
    degree = np.bincount(tails, minlength=n_nodes) + np.bincount(heads, minlength=n_nodes)

    def fill_units(last, head, cost, ident, id0):
        fill_skeleton(last, head, cost, ident, id0, tails, heads, -costs)

    return skeleton_graph(
        n_nodes,
        fixed_t,
        fixed_h,
        caps,
        np.zeros(caps.size, np.int64),
        degree,
        elements.size,
        fill_units,
    )


@pytest.mark.parametrize("seed", range(6))
def test_a_global_price_update_keeps_eps_optimality_and_makes_excesses_admissible(seed):
    """After saturating every arc of negative reduced cost (as a refine starts), the update
    only lowers prices, by whole multiples of eps, never below a node's guard, keeps every
    residual arc eps-optimal, and leaves each node with excess an admissible arc out of it
    (or its price at its guard)."""
    rng = np.random.default_rng(seed)
    V, rows, cols, total = random_matrix_instance(rng, 6, 15, 0.6)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    graph, *_ = _graph_for(V.ravel() ** 2, structure)
    first, last, act, head, rescap, cost, rev, _, guard = graph
    n_nodes = first.size - 1
    price = rng.integers(-3000, 3000, n_nodes)
    excess = np.zeros(n_nodes, np.int64)
    tails = np.repeat(np.arange(n_nodes), np.diff(first))
    for a in range(first[-1]):
        v = tails[a]
        if a < last[v] and rescap[a] > 0 and cost[a] + price[v] - price[head[a]] < 0:
            excess[v] -= rescap[a]
            excess[head[a]] += rescap[a]
            rescap[rev[a]] += rescap[a]
            rescap[a] = 0
    in_use = np.concatenate([np.arange(first[v], last[v]) for v in range(n_nodes)])
    residual = in_use[rescap[in_use] > 0]
    reduced = cost[residual] + price[tails[residual]] - price[head[residual]]
    assert excess.any()
    assert np.all(reduced >= 0)
    # eps above every reduced cost: no distance exceeds the number of nodes, the search
    # settles every node with excess
    for eps in (int(reduced.max()) + 1, 500):
        before = price.copy()
        guard[:] = np.iinfo(np.int64).min
        capped = rng.random(n_nodes) < 0.3
        guard[capped] = price[capped] - eps * rng.integers(0, 3, capped.sum())
        work = np.empty((5, n_nodes + 1), np.int64)
        price_update(first, act, head, rescap, cost, rev, guard, price, eps, excess, work)
        fall = before - price
        assert np.all(fall >= 0)
        assert np.all(fall % eps == 0)
        assert np.all(price[capped] >= guard[capped])
        reduced = cost[residual] + price[tails[residual]] - price[head[residual]]
        assert np.all(reduced >= -eps)
        if eps > 500:
            admissible = np.zeros(n_nodes, bool)
            admissible[tails[residual[reduced < 0]]] = True
            at_guard = capped & (price == guard)
            assert np.all(admissible[excess > 0] | at_guard[excess > 0])
        price = before


@pytest.mark.slow
def test_heavy_tailed_weights_keep_the_candidate_graph_small_and_stay_exact():
    """v = exp(2 z) spans ~40 octaves: the weight window moves down to where the caps bite
    (it used to sit at the top, which made nearly every element a candidate)."""
    rng = np.random.default_rng(21)
    V = np.exp(2 * rng.standard_normal((60, 600)))
    rows, cols = rng.integers(1, 151, 60), rng.integers(1, 16, 600)
    structure = TVCSStructure.from_matrix(
        V.shape, max_per_row=rows, max_per_col=cols, total=int(0.8 * min(rows.sum(), cols.sum()))
    )
    result = project(V, structure)
    assert_valid_projection(V, structure, result)
    assert result.optimal
    assert result.details["candidate_elements"] < 0.4 * V.size
    assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


@pytest.mark.parametrize("budget_fraction", [0.1, 0.3])
def test_rank_one_weights_under_a_binding_budget_start_at_its_price_and_stay_exact(
    budget_fraction, caplog
):
    """Skill x ease weights (v = outer(a, b)): every column ranks the rows alike, so when the
    budget binds most group prices are 0 and only the budget's price says where the close calls
    are. The first phase starts at that scale: no refine gives up for prices far from its eps
    (from 0.1 to 0.3 of the caps, 40 x 2,000 used to stop six or seven times, starting at
    eps 1)."""
    rng = np.random.default_rng(5)
    V = np.outer(rng.uniform(0.0, 1.0, 40), rng.uniform(0.2, 1.0, 2000))
    total = int(budget_fraction * min(40 * 100, 2000 * 2))
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=100, max_per_col=2, total=total)
    with caplog.at_level("DEBUG", logger="projections._exact.phases"):
        result = project(V, structure)
    assert not [r for r in caplog.records if "stopped after" in r.getMessage()]
    assert_valid_projection(V, structure, result)
    assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_one_weights_at_full_budget_start_at_the_rows_prices_and_stay_exact(seed, caplog):
    """Skill x ease weights again, the budget not binding: coordinate descent prices the few
    rows (workers) and leaves the many columns' prices at 0, so a percentile over all groups
    said "no close calls" and the first phase ran at eps 1, far below the prices' error. Each
    side's prices count on their own: no refine gives up (30 x 600 used to stop two to four
    times; q-lp's caps' optimum at 200 x 10,000, seven times, 78 s of its 85)."""
    rng = np.random.default_rng(seed)
    V = np.outer(rng.uniform(0.0, 1.0, 30), rng.uniform(0.2, 1.0, 600))
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=18, max_per_col=1, total=540)
    with caplog.at_level("DEBUG", logger="projections._exact.phases"):
        result = project(V, structure)
    assert not [r for r in caplog.records if "stopped after" in r.getMessage()]
    assert_valid_projection(V, structure, result)
    assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


def test_a_certificate_pass_adds_only_the_worst_violators_and_the_projection_stays_exact(
    monkeypatch,
):
    """Rank-one weights with a tight starting graph make most elements violate at first; with
    ADMIT the graph grows by the worst of them only, and ends smaller, still optimal."""
    monkeypatch.setattr(levers, "BUDGET_MARGIN", 0.3)
    monkeypatch.setattr(levers, "SLACK", 0)
    rng = np.random.default_rng(8)
    V = np.outer(rng.uniform(0.0, 1.0, 30), rng.uniform(0.2, 1.0, 400))
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=40, max_per_col=3, total=900)
    sizes = {}
    for admit in (1e9, 0.05):
        monkeypatch.setattr(levers, "ADMIT", admit)
        result = project(V, structure)
        assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)
        sizes[admit] = result.details["candidate_elements"]
    assert sizes[0.05] < sizes[1e9]
