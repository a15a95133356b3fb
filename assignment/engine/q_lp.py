"""The q-lp baseline's LP, solved over a few pairs and proved optimal over all of them.

The LP of :mod:`~assignment.engine.baselines` (Ho et al., 2013) has a variable per eligible
pair, but its optimum uses only a few. When the caps' optimum (one TVCS projection of
``sqrt(w)``, :func:`_relaxation`) keeps every task's credit within ``C`` it is the LP's optimum;
otherwise the LP is solved by *column generation*: HiGHS on a candidate set of pairs (the
restricted LPs of all rounds are one warm-started model, :class:`_WarmLP`), then every other
pair is priced with the duals, ``w_ij (1 - u_j) - a_i - b_j - beta``; when none exceeds
``PRICING_TOLERANCE`` the restricted optimum is optimal for the full LP. Else, on problems of
at most ``RELAXATION_MAX_PAIRS`` pairs, the Lagrangian bound (:class:`_Lagrangian`, one exact
projection over every pair at the credit prices ``u``) may still prove it optimal, which
pricing cannot under degenerate duals; if not, the bound's support names the pairs to add.
Elsewhere the most profitable pairs join; and it goes again (the full LP after
``FULL_LP_AFTER`` rounds). Pricing
goes by blocks of tasks, so no ``n x m`` float array is built. Pairs are kept *task-major*: key
``j n + i`` for worker ``i`` and task ``j``, ascending.

The steps and why the certificate holds: docs/design.md#column-generation.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from assignment.engine.problem import AssignmentProblem
from projections import TVCSStructure
from projections._exact.problem import scale_bits
from projections.tvcs import project

__all__ = ["QLPSolution", "q_lp_weights", "solve_q_lp"]

logger = logging.getLogger(__name__)

#: Each task starts with this many times its cap of heaviest eligible workers.
INITIAL_PER_TASK_FACTOR = 1
#: A pair outside the set whose reduced profit exceeds this enters it.
PRICING_TOLERANCE = 1e-9
#: Pricing and the start build weight blocks of about this many pairs.
BLOCK_PAIRS = 1 << 18
#: After this many restricted LPs without a proof, the LP over every usable pair (as q-lp did
#: before column generation, HiGHS's presolve on). Figure 4's instances need 2-4, a problem of
#: 400 categories 6; where every task ranks the workers alike (skill x difficulty quality, no
#: categories) the duals are degenerate and pricing brings in a task's cap of pairs round after
#: round (17 rounds at 100 x 1,000).
FULL_LP_AFTER = 20
#: The Lagrangian certificate (:class:`_Lagrangian`) proves the restricted optimum optimal
#: when its bound exceeds it by at most this times ``1 + |objective|`` (docs/design.md,
#: "Column generation": the bound already allows for the projection's rounding).
LAGRANGIAN_TOLERANCE = 1e-8
#: Up to this many pairs ``n m`` the LP without its credit rows is solved first, exactly, by one
#: TVCS projection over every usable pair (arrays of every pair, about 40 bytes each at the
#: peak: so only on problems this small, whichever form their quality has, and a problem by
#: category above it never gets an array of every pair).
RELAXATION_MAX_PAIRS = 3_000_000
#: How HiGHS solves a restricted LP of at least ``SIMPLEX_MAX_PAIRS`` pairs: interior point, then
#: crossover to a vertex. HiGHS's presolve is off: on these LPs (200 x 10,000) it took some
#: sixty times as long as solving the LP.
HIGHS = {"method": "highs-ipm", "options": {"presolve": False}}
#: Smaller restricted LPs go to the dual simplex: about twice as fast there from 1,000 to 5,000
#: pairs, still faster at 20,000, several times slower at 80,000.
SIMPLEX_MAX_PAIRS = 10_000
SIMPLEX = {"method": "highs-ds", "options": {"presolve": False}}
#: After the first restricted LP, each round's LP is the last one with its new pairs added as
#: columns, solved by HiGHS's dual simplex (strategy 1) from the last basis instead of afresh:
#: about a fifth of the CPU time of fresh interior-point LPs at 200 x 2,000 skill x
#: difficulty, r = 0.05, 75% of the caps. Not enough at 200 x 10,000 there: pricing still
#: brings in about 100,000 pairs a round for 9 rounds, and a warm round can take minutes.
WARM = {"simplex_strategy": 1}
#: Whether HiGHS's interior point ends with crossover to a vertex ("on", "off", "choose").
CROSSOVER = "on"
#: Between rounds, the warm LP's columns at 0 whose reduced profit is below minus this leave
#: it (pricing brings one back if it is ever worth it; None: none leave). The warm rounds slow
#: down as the LP nears its optimum, and far less with a lean LP: 200 x 4,000 skill x
#: difficulty, r = 0.05, 75% of the caps, 13.3 s against 70.7 s keeping every column (28.3 s
#: with a margin of 0.01), one process, same objective (docs/design.md#column-generation).
DROP_MARGIN = 1e-3


@dataclass(frozen=True)
class QLPSolution:
    """The LP optimum on the pairs it may use (every other pair is 0).

    Attributes
    ----------
    workers, tasks : ndarray of int64, shape (k,)
        The candidate pairs, task-major.
    x : ndarray of float64, shape (k,)
        The LP value of each pair, in [0, 1].
    objective : float
        ``sum_ij w_ij x_ij``.
    rounds : int
        Restricted LPs solved (0 when the caps' optimum was the LP's).
    optimal : bool
        Whether the solution is optimal for the full LP: pricing or the Lagrangian bound proved
        it, or every usable pair was in the LP (after ``FULL_LP_AFTER`` rounds).
    message : str
        How it was solved: HiGHS's last message and what proved it optimal ("proved optimal by
        pricing", "proved optimal by the Lagrangian bound (gap ...)", "every pair in the LP
        ..."), or that the caps' optimum was the LP's.
    """

    workers: np.ndarray
    tasks: np.ndarray
    x: np.ndarray
    objective: float
    rounds: int
    optimal: bool
    message: str


def q_lp_weights(quality, n_labels: int = 2) -> np.ndarray:
    """The LP weight of every pair: the squared skill ``((K Q - 1) / (K - 1))^2``.

    ``(2 Q - 1)^2`` for two labels (Ho et al. 2013); see the module docstring for ``K``.
    """
    q = np.asarray(quality, dtype=np.float64)
    return ((n_labels * q - 1.0) / (n_labels - 1)) ** 2


def _task_blocks(problem: AssignmentProblem):
    """Slices of consecutive tasks of about ``BLOCK_PAIRS`` pairs each."""
    n, m = problem.shape
    step = max(1, BLOCK_PAIRS // max(n, 1))
    for start in range(0, m, step):
        yield slice(start, min(m, start + step))


def _block_weights(problem: AssignmentProblem, table: np.ndarray, block: slice) -> np.ndarray:
    """The weights of the tasks in ``block`` from the quality ``table`` (workers x columns),
    task-major, shape (len(block), n_workers);
    ``-inf`` where a pair is ineligible or weighs nothing (never worth a variable)."""
    w = q_lp_weights(table[:, problem.task_column[block]].T, problem.n_labels)
    usable = w > 0
    if problem.eligible is not None:
        usable &= problem.eligible[:, block].T
    return np.where(usable, w, -np.inf)


def _top_per_row(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(row, column)`` of the ``counts[r]`` largest finite entries of each row, as keys
    ``row * n_cols + column`` would sort (row-major)."""
    c, n = values.shape
    k = int(min(n, counts.max(initial=0)))
    if k == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    part = (
        np.argpartition(-values, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (c, 1))
    )
    picked = np.take_along_axis(values, part, axis=1)
    order = np.argsort(-picked, axis=1, kind="stable")
    part = np.take_along_axis(part, order, axis=1)
    picked = np.take_along_axis(picked, order, axis=1)
    keep = (np.arange(k)[None, :] < counts[:, None]) & np.isfinite(picked)
    rows = np.broadcast_to(np.arange(c)[:, None], part.shape)[keep]
    return rows.astype(np.int64), part[keep].astype(np.int64)


def _initial_keys(problem: AssignmentProblem, table: np.ndarray) -> np.ndarray:
    """The start's pairs as sorted keys (``table``: the quality table): :func:`_shared_start`
    without an eligibility mask, else each task's ``INITIAL_PER_TASK_FACTOR * cap`` heaviest
    eligible workers."""
    if problem.eligible is None:
        return _shared_start(problem, table)
    n = problem.n_workers
    want = INITIAL_PER_TASK_FACTOR * problem.max_workers_per_task
    keys = []
    for block in _task_blocks(problem):
        rows, workers = _top_per_row(_block_weights(problem, table, block), want[block])
        keys.append((rows + block.start) * n + workers)
    return np.sort(np.concatenate(keys)) if keys else np.empty(0, np.int64)


def _enough_workers(column_weights, order, worker_caps, demand, n_tasks) -> np.ndarray:
    """Per column, how many of its heaviest workers (``order``, shape (n, b)) it takes for
    their capacity ``min(cap_i, n_tasks)`` to reach ``demand`` times
    ``INITIAL_PER_TASK_FACTOR``; never workers of weight 0. Shape (b,)."""
    capacity = np.minimum(worker_caps[order], n_tasks[None, :])
    reach = np.cumsum(capacity, axis=0) >= (INITIAL_PER_TASK_FACTOR * demand)[None, :]
    enough = np.where(reach.any(axis=0), reach.argmax(axis=0) + 1, order.shape[0])
    positive = (np.take_along_axis(column_weights, order, axis=0) > 0).sum(axis=0)
    return np.minimum(enough, positive)


def _equal_columns(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which columns of ``table`` are equal: ``(group of each column, first column of each
    group)``, shapes (n_columns,) and (n_groups,). A dense matrix made from categories gives
    the groups its categories give (the hash is summed row by row, the same for equal columns
    whatever the table's width; equality is then checked)."""
    n_rows, n_columns = table.shape
    v = np.random.default_rng(0).random(n_rows)
    h = np.zeros(n_columns)
    for i in range(n_rows):
        h += v[i] * table[i]
    _, first, group = np.unique(h, return_index=True, return_inverse=True)
    if first.size == n_columns:
        return np.arange(n_columns), np.arange(n_columns)
    same = np.empty(n_columns, bool)
    step = max(1, BLOCK_PAIRS // max(n_rows, 1))
    for start in range(0, n_columns, step):
        cols = slice(start, start + step)
        same[cols] = (table[:, cols] == table[:, first[group[cols]]]).all(axis=0)
    odd = np.flatnonzero(~same)  # a hash collision: a group of its own
    group[odd] = first.size + np.arange(odd.size)
    return group, np.concatenate([first, odd])


def _heaviest_first(weights: np.ndarray, depth: int) -> np.ndarray:
    """Each column's ``depth`` heaviest rows, heaviest first, shape (min(depth, n), b)."""
    n = weights.shape[0]
    if depth >= n:
        return np.argsort(-weights, axis=0, kind="stable")
    top = np.argpartition(-weights, max(depth, 1) - 1, axis=0)[: max(depth, 1)]
    order = np.argsort(-np.take_along_axis(weights, top, axis=0), axis=0, kind="stable")
    return np.take_along_axis(top, order, axis=0)


def _shared_start(problem: AssignmentProblem, table: np.ndarray) -> np.ndarray:
    """The start when tasks share a quality column (a category, or equal columns of a dense
    matrix): they rank workers alike, so each task's own heaviest workers would all be the same
    few, far beyond their caps. Instead each group of tasks takes its ``L`` heaviest workers,
    enough to fill its tasks' caps ``INITIAL_PER_TASK_FACTOR`` times over, and deals them out to
    its tasks in turn, ``cap_j`` each (a task alone: its ``cap_j`` heaviest). Sorted keys."""
    n = problem.n_workers
    caps = problem.max_workers_per_task
    column_group, first = _equal_columns(table)
    if first.size < table.shape[1]:
        table = table[:, first]
    task_group = column_group[problem.task_column]
    by_group = np.argsort(task_group, kind="stable")
    n_groups = table.shape[1]
    bounds = np.searchsorted(task_group[by_group], np.arange(n_groups + 1))
    demand = np.bincount(task_group, weights=caps, minlength=n_groups)
    n_tasks = np.diff(bounds)
    # no group needs more of its heaviest workers than this: each worker with a cap adds >= 1
    deepest = int(INITIAL_PER_TASK_FACTOR * demand.max(initial=0))
    deepest += int(np.sum(problem.max_tasks_per_worker == 0))
    keys = []
    step = max(1, BLOCK_PAIRS // max(n, 1))
    for start in range(0, n_groups, step):
        cols = slice(start, min(n_groups, start + step))
        weights = q_lp_weights(table[:, cols], problem.n_labels)
        order = _heaviest_first(weights, deepest)
        size = _enough_workers(
            weights, order, problem.max_tasks_per_worker, demand[cols], n_tasks[cols]
        )
        tasks = by_group[bounds[cols.start] : bounds[cols.stop]]
        column = task_group[tasks] - cols.start
        share = np.minimum(caps[tasks], size[column])
        first_slot = np.cumsum(caps[tasks]) - caps[tasks]
        first_slot -= first_slot[np.searchsorted(column, column)]  # slots run on in a column
        task_of = np.repeat(np.arange(tasks.size), share)
        slot = (
            first_slot[task_of]
            + np.arange(task_of.size)
            - np.repeat(np.cumsum(share) - share, share)
        )
        workers = order[slot % np.maximum(size[column[task_of]], 1), column[task_of]]
        keys.append(tasks[task_of] * n + workers)
    return np.unique(np.concatenate(keys)) if keys else np.empty(0, np.int64)


@dataclass(frozen=True)
class _Prices:
    """The restricted LP's duals as non-negative prices (0 on rows left out)."""

    credit: np.ndarray  # u, shape (m,)
    worker: np.ndarray  # a, shape (n,)
    task: np.ndarray  # b, shape (m,)
    budget: float  # beta


def _binding_rows(problem, workers, tasks, wk, credit_cap):
    """The rows the candidates can bind: credit rows, worker rows, task rows (indices) and
    whether the budget row is needed."""
    n, m = problem.shape
    cap_task = problem.max_workers_per_task
    order = np.lexsort((-wk, tasks))
    starts = np.searchsorted(tasks[order], np.arange(m))
    sorted_tasks = tasks[order]
    top = np.arange(tasks.size) - starts[sorted_tasks] < cap_task[sorted_tasks]
    credit_max = np.bincount(sorted_tasks[top], weights=wk[order][top], minlength=m)
    return (
        np.flatnonzero(credit_max > credit_cap),
        np.flatnonzero(np.bincount(workers, minlength=n) > problem.max_tasks_per_worker),
        np.flatnonzero(np.bincount(tasks, minlength=m) > cap_task),
        tasks.size > problem.budget,
    )


def _row_index(rows: np.ndarray, length: int, offset: int) -> np.ndarray:
    """Row number ``offset + r`` of group ``rows[r]``, -1 for groups left out."""
    index = np.full(length, -1, np.int64)
    index[rows] = offset + np.arange(rows.size)
    return index


def _highs_options(h, *, ipm: bool, presolve: bool = False):
    """HiGHS options (``h``: SciPy's binding): quiet, interior point or simplex (the dual
    simplex, ``WARM``'s strategy), presolve off unless asked."""
    options = h.HighsOptions()
    options.presolve = "on" if presolve else "off"
    options.output_flag, options.log_to_console = False, False
    options.solver = "ipm" if ipm else "simplex"
    options.run_crossover = CROSSOVER
    for name, value in WARM.items():
        setattr(options, name, value)
    return options


def _highs(w: np.ndarray, A: sp.csc_matrix, b: np.ndarray, *, presolve: bool = False):
    """``max w x`` subject to ``A x <= b``, ``0 <= x <= 1``: ``(x, row prices >= 0, objective,
    message)``, shapes (k,) and (r,).

    HiGHS through SciPy's own binding of it: ``linprog`` adds a Python loop over the columns
    (bound multipliers this method does not need) that cost about as much as HiGHS itself on
    the small LPs here. Where that private binding is missing, ``linprog``."""
    how = SIMPLEX if w.size < SIMPLEX_MAX_PAIRS else HIGHS
    try:
        from scipy.optimize._highspy import _core as h
    except ImportError:  # pragma: no cover - another SciPy layout
        res = linprog(-w, A_ub=A, b_ub=b, bounds=(0, 1), **how)
        if res.x is None:
            raise RuntimeError(f"q-lp: HiGHS found no solution: {res.message}") from None
        return np.clip(res.x, 0, 1), -res.ineqlin.marginals, float(-res.fun), str(res.message)
    lp = h.HighsLp()
    lp.num_col_, lp.num_row_ = w.size, b.size
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = w.size, b.size
    lp.a_matrix_.format_ = h.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    lp.col_cost_ = -w
    lp.col_lower_, lp.col_upper_ = np.zeros(w.size), np.ones(w.size)
    lp.row_lower_, lp.row_upper_ = np.full(b.size, -h.kHighsInf), b
    highs = h._Highs()
    highs.passOptions(_highs_options(h, ipm=how is HIGHS, presolve=presolve))
    highs.passModel(lp)
    highs.run()
    status = highs.getModelStatus()
    message = highs.modelStatusToString(status)
    if status != h.HighsModelStatus.kOptimal:
        raise RuntimeError(f"q-lp: HiGHS found no solution: {message}")
    solution = highs.getSolution()
    x = np.clip(np.asarray(solution.col_value), 0.0, 1.0)
    objective = -highs.getInfo().objective_function_value
    return x, -np.asarray(solution.row_dual), float(objective), message


def _restricted_lp(problem, workers, tasks, wk, credit_cap, *, presolve=False):
    """Solve the LP over the candidate pairs: ``(x, objective, prices, message)``."""
    n, m = problem.shape
    credit_rows, worker_rows, task_rows, budget_row = _binding_rows(
        problem, workers, tasks, wk, credit_cap
    )
    r1, r2, r3 = credit_rows.size, worker_rows.size, task_rows.size
    n_rows = r1 + r2 + r3 + int(budget_row)
    if n_rows == 0:  # nothing binds: every candidate at 1
        zero_m = np.zeros(m)
        return np.ones(wk.size), float(wk.sum()), _Prices(zero_m, np.zeros(n), zero_m, 0.0), ""
    var = np.arange(wk.size)
    parts = [
        (_row_index(credit_rows, m, 0)[tasks], wk),
        (_row_index(worker_rows, n, r1)[workers], np.ones(wk.size)),
        (_row_index(task_rows, m, r1 + r2)[tasks], np.ones(wk.size)),
    ]
    if budget_row:
        parts.append((np.full(wk.size, n_rows - 1), np.ones(wk.size)))
    row_of = np.concatenate([row for row, _ in parts])
    value = np.concatenate([val for _, val in parts])
    col_of = np.tile(var, len(parts))
    used = row_of >= 0
    A = sp.csc_matrix((value[used], (row_of[used], col_of[used])), shape=(n_rows, wk.size))
    b = np.concatenate(
        [
            np.full(r1, credit_cap),
            problem.max_tasks_per_worker[worker_rows],
            problem.max_workers_per_task[task_rows],
            [problem.budget] * int(budget_row),
        ]
    ).astype(float)
    x, dual, objective, message = _highs(wk, A, b, presolve=presolve)
    prices = _Prices(np.zeros(m), np.zeros(n), np.zeros(m), float(dual[-1]) if budget_row else 0.0)
    prices.credit[credit_rows] = dual[:r1]
    prices.worker[worker_rows] = dual[r1 : r1 + r2]
    prices.task[task_rows] = dual[r1 + r2 : r1 + r2 + r3]
    return x, objective, prices, message


def _rows_that_can_bind(problem: AssignmentProblem, table: np.ndarray, credit_cap: float):
    """Over every usable pair, the rows that can bind: :func:`_binding_rows` of all of them,
    one task block at a time. Returns (credit rows, worker rows, task rows, budget row?)."""
    n, m = problem.shape
    cap_task = problem.max_workers_per_task
    credit_max = np.zeros(m)
    per_worker = np.zeros(n, np.int64)
    per_task = np.zeros(m, np.int64)
    for block in _task_blocks(problem):
        w = _block_weights(problem, table, block)
        usable = np.isfinite(w)
        per_worker += usable.sum(axis=0)
        per_task[block] = usable.sum(axis=1)
        rows, workers = _top_per_row(w, cap_task[block])
        credit_max[block] = np.bincount(rows, weights=w[rows, workers], minlength=w.shape[0])
    return (
        np.flatnonzero(credit_max > credit_cap),
        np.flatnonzero(per_worker > problem.max_tasks_per_worker),
        np.flatnonzero(per_task > cap_task),
        per_task.sum() > problem.budget,
    )


class _WarmLP:
    """The restricted LP as one HiGHS model kept across pricing rounds.

    Its rows are fixed at the start: every row that any usable pair could bind
    (:func:`_rows_that_can_bind`). The first solve is HiGHS's interior point then crossover
    (dual simplex below ``SIMPLEX_MAX_PAIRS``), which leaves a basis; each round's new pairs
    join as columns at 0, where that basis stays primal feasible, and the dual simplex
    carries on from it (``WARM``) instead of solving from scratch; columns far from entering
    leave it between rounds (:meth:`drop`). Where SciPy's private
    binding of HiGHS is missing, :meth:`create` returns None and every round is a fresh LP.

    Attributes
    ----------
    keys : ndarray of int64
        The model's pairs, in the order they were added (its column order).
    """

    def __init__(self, h, problem, rows, credit_cap):
        n, m = problem.shape
        self._h, self.keys = h, np.empty(0, np.int64)
        self._n, self._m = n, m
        self._solved = False  # no basis yet
        credit, worker, task, budget = rows
        self._rows = (credit, worker, task)
        self._index = (
            _row_index(credit, m, 0),
            _row_index(worker, n, credit.size),
            _row_index(task, m, credit.size + worker.size),
        )
        self._budget = credit.size + worker.size + task.size if budget else -1
        b = np.concatenate(
            [
                np.full(credit.size, credit_cap),
                problem.max_tasks_per_worker[worker],
                problem.max_workers_per_task[task],
                [problem.budget] * int(budget),
            ]
        ).astype(float)
        lp = h.HighsLp()
        lp.num_col_, lp.num_row_ = 0, b.size
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = 0, b.size
        lp.a_matrix_.start_ = np.zeros(1, np.int32)
        lp.row_lower_, lp.row_upper_ = np.full(b.size, -h.kHighsInf), b
        self._highs = h._Highs()
        self._highs.passOptions(_highs_options(h, ipm=False))
        self._highs.passModel(lp)

    @classmethod
    def create(cls, problem: AssignmentProblem, table: np.ndarray, credit_cap: float):
        """The empty model, or None without SciPy's private HiGHS binding."""
        try:
            from scipy.optimize._highspy import _core as h
        except ImportError:  # pragma: no cover - another SciPy layout
            return None
        return cls(h, problem, _rows_that_can_bind(problem, table, credit_cap), credit_cap)

    def add(self, keys: np.ndarray, wk: np.ndarray) -> None:
        """Add the pairs ``keys`` (weights ``wk``) as columns at 0."""
        tasks, workers = np.divmod(keys, self._n)
        entries = [
            (self._index[0][tasks], wk),
            (self._index[1][workers], np.ones(wk.size)),
            (self._index[2][tasks], np.ones(wk.size)),
            (np.full(wk.size, self._budget), np.ones(wk.size)),
        ]
        row = np.stack([r for r, _ in entries], axis=1)
        value = np.stack([v for _, v in entries], axis=1)
        used = row >= 0
        start = np.concatenate([[0], np.cumsum(used.sum(axis=1))[:-1]]).astype(np.int32)
        self._highs.addCols(
            wk.size,
            -wk,
            np.zeros(wk.size),
            np.ones(wk.size),
            int(used.sum()),
            start,
            row[used].astype(np.int32),
            value[used],
        )
        self.keys = np.concatenate([self.keys, keys])

    def drop(self, margin: float) -> None:
        """Delete the columns at 0 (nonbasic at their lower bound) whose reduced profit is
        below ``-margin``; pricing brings them back if they are ever worth it."""
        h, highs = self._h, self._highs
        lower = np.array([s == h.HighsBasisStatus.kLower for s in highs.getBasis().col_status])
        cost = np.asarray(highs.getSolution().col_dual)  # reduced cost of min -w x
        gone = np.flatnonzero(lower & (cost > margin)).astype(np.int32)
        if gone.size:
            highs.deleteCols(gone.size, gone)
            self.keys = np.delete(self.keys, gone)

    def solve(self):
        """``(x, objective, prices, message)``, ``x`` in the model's column order."""
        h, highs = self._h, self._highs
        cold = not self._solved and self.keys.size >= SIMPLEX_MAX_PAIRS
        if cold:  # no basis yet: interior point and crossover, as a fresh LP would
            highs.passOptions(_highs_options(h, ipm=True))
        highs.run()
        if cold:
            highs.passOptions(_highs_options(h, ipm=False))
        self._solved = True
        status = highs.getModelStatus()
        message = highs.modelStatusToString(status)
        if status != h.HighsModelStatus.kOptimal:
            raise RuntimeError(f"q-lp: HiGHS found no solution: {message}")
        solution = highs.getSolution()
        dual = -np.asarray(solution.row_dual)
        credit, worker, task = self._rows
        prices = _Prices(np.zeros(self._m), np.zeros(self._n), np.zeros(self._m), 0.0)
        prices.credit[credit] = dual[: credit.size]
        prices.worker[worker] = dual[credit.size : credit.size + worker.size]
        prices.task[task] = dual[credit.size + worker.size : credit.size + worker.size + task.size]
        if self._budget >= 0:
            prices = _Prices(prices.credit, prices.worker, prices.task, float(dual[self._budget]))
        x = np.clip(np.asarray(solution.col_value), 0.0, 1.0)
        return x, -highs.getInfo().objective_function_value, prices, message


def _price(problem, table, keys, prices: _Prices) -> np.ndarray:
    """Sorted keys of the pairs outside ``keys`` worth adding: per task, up to its cap of the
    most profitable with reduced profit above ``PRICING_TOLERANCE``."""
    n = problem.n_workers
    found = []
    for block in _task_blocks(problem):
        w = _block_weights(problem, table, block)
        profit = w * (1.0 - prices.credit[block])[:, None]
        profit -= prices.worker[None, :]
        profit -= (prices.task[block] + prices.budget)[:, None]
        profit[~np.isfinite(w)] = -np.inf
        lo, hi = np.searchsorted(keys, [block.start * n, block.stop * n])
        profit.reshape(-1)[keys[lo:hi] - block.start * n] = -np.inf
        profit[profit <= PRICING_TOLERANCE] = -np.inf
        rows = np.flatnonzero(np.isfinite(profit).any(axis=1))
        if rows.size:
            limit = problem.max_workers_per_task[block][rows]
            r, workers = _top_per_row(profit[rows], limit)
            found.append((rows[r] + block.start) * n + workers)
    return np.concatenate(found) if found else np.empty(0, np.int64)


def _all_keys(problem: AssignmentProblem, table: np.ndarray) -> np.ndarray:
    """Every usable pair (eligible, weight above 0) as sorted keys."""
    n = problem.n_workers
    keys = []
    for block in _task_blocks(problem):
        rows, workers = np.nonzero(np.isfinite(_block_weights(problem, table, block)))
        keys.append((rows + block.start).astype(np.int64) * n + workers)
    return np.concatenate(keys) if keys else np.empty(0, np.int64)


class _Lagrangian:
    """Every usable pair's arrays and the caps' structure, built once: the LP without its
    credit rows, and the Lagrangian bound on the LP with the credit rows priced at ``u``.

    For prices ``u >= 0`` on the credit rows, ``L(u) = C sum_j u_j + max sum_ij w_ij (1 - u_j)
    x_ij`` over the caps and the budget (``0 <= x <= 1``) bounds the full LP from above (weak
    duality: the credit rows are relaxed). That polytope is totally unimodular, so the inner
    maximum is one exact TVCS projection of ``sqrt(max(w (1 - u_j), 0))`` over every usable
    pair (docs/design.md, "The TVCS projection"), whose support ``S(u)`` is an optimal 0/1
    vertex; ``u = 0`` is the LP without its credit rows (:func:`_relaxation`). Successive
    projections start from the last one's state (``warm_start``).

    Attributes
    ----------
    tasks, workers : ndarray of int64, shape (p,)
        Every usable pair, task-major (``p`` of them).
    n_workers : int
    wk : ndarray of float64, shape (p,)
        Their weights.
    """

    def __init__(self, problem: AssignmentProblem, table: np.ndarray, credit_cap: float):
        n = problem.n_workers
        self.tasks, self.workers = np.divmod(_all_keys(problem, table), n)
        self.wk = q_lp_weights(
            table[self.workers, problem.task_column[self.tasks]], problem.n_labels
        )
        self.structure = TVCSStructure.from_labels(
            self.workers,
            self.tasks,
            caps1=problem.max_tasks_per_worker,
            caps2=problem.max_workers_per_task,
            total=problem.budget,
        )
        self.n_workers, self._credit_cap, self._warm = n, credit_cap, None
        most = min(problem.budget, problem.max_workers_per_task.sum(), self.tasks.size)
        self._rounding = most * 2.0 ** -scale_bits(problem.n_workers + problem.n_tasks + 2)

    def support(self, u: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
        """``S(u)`` as a mask over the pairs, shape (p,); the weights ``max(w (1 - u_j), 0)``,
        shape (p,); whether the projection proved ``S(u)`` optimal (``u``: shape (m,), None
        for 0)."""
        weights = self.wk if u is None else np.maximum(self.wk * (1.0 - u[self.tasks]), 0.0)
        result = project(np.sqrt(weights), self.structure, warm_start=self._warm)
        self._warm = result.warm_start
        return result.support, weights, bool(result.optimal)

    def bound(self, u: np.ndarray) -> tuple[float, np.ndarray]:
        """``L(u)`` plus the projection's rounding allowance (so still an upper bound on the
        full LP; ``inf`` if the projection was not proved optimal), and ``S(u)`` as sorted
        keys."""
        u = np.maximum(u, 0.0)
        chosen, weights, optimal = self.support(u)
        # The projection is optimal for weights rounded to integer costs of step top 2^-bits:
        # the true optimum exceeds its support's weight by at most |S| + |S*| half-steps.
        slack = self._rounding * float(weights.max(initial=0.0))
        value = float(weights[chosen].sum()) + self._credit_cap * float(u.sum()) + slack
        keys = self.tasks[chosen] * self.n_workers + self.workers[chosen]
        return (value if optimal else np.inf), keys


def _relaxation(lagrangian: _Lagrangian, problem: AssignmentProblem, credit_cap: float):
    """The LP without its credit rows, solved exactly: the LP's optimum if it is one, else None.

    Without the credit rows the LP is ``max sum w_ij x_ij`` over the caps and the budget, whose
    constraint matrix is totally unimodular: an optimal vertex is 0/1, the support ``S``
    maximising ``sum_S w`` under the caps, which is the TVCS projection of ``sqrt(w)``
    (:class:`_Lagrangian` at ``u = 0``). Dropping rows can only raise the optimum, so when
    ``S`` keeps every task's credit ``sum_{i in S} w_ij`` within ``C`` it is optimal for the LP
    itself, and returned with ``x = 1`` on it. Otherwise the solution is None and ``S``'s
    pairs (sorted keys) join column generation's start: the LP's optimum moves weight off the
    tasks whose credit ``S`` exceeds, and keeps most of ``S`` elsewhere.

    Returns
    -------
    solution : QLPSolution or None
    keys : ndarray of int64, shape (|S|,)
    """
    tasks, workers, wk = lagrangian.tasks, lagrangian.workers, lagrangian.wk
    chosen = lagrangian.support()[0]
    chosen_keys = tasks[chosen] * problem.n_workers + workers[chosen]
    credit = np.bincount(tasks[chosen], weights=wk[chosen], minlength=problem.n_tasks)
    if credit.max(initial=0.0) > credit_cap:
        return None, chosen_keys
    return QLPSolution(
        workers[chosen],
        tasks[chosen],
        np.ones(int(chosen.sum())),
        float(wk[chosen].sum()),
        0,
        True,
        "the caps' optimum (one exact projection) keeps every task's credit within C",
    ), chosen_keys


def _warm_round(model: _WarmLP, keys: np.ndarray, table: np.ndarray, problem):
    """Add the pairs of ``keys`` (sorted) that ``model`` lacks, solve it from its last basis:
    :func:`_restricted_lp`'s answer, ``x`` in the order of ``keys``."""
    new = keys[~np.isin(keys, model.keys, assume_unique=True)]
    tasks, workers = np.divmod(new, problem.n_workers)
    model.add(new, q_lp_weights(table[workers, problem.task_column[tasks]], problem.n_labels))
    x, objective, prices, message = model.solve()
    return x[np.argsort(model.keys, kind="stable")], objective, prices, message


def _lagrangian_step(lagrangian, model_keys, new, prices, objective):
    """The Lagrangian certificate after pricing found ``new`` (keys): ``(proved, gap, keys to
    add)``. Proved when ``L(u) - objective <= LAGRANGIAN_TOLERANCE (1 + |objective|)``; else
    the pairs of ``S(u)`` outside the LP (``model_keys``, sorted) join, not pricing's: far fewer
    under degenerate duals, and adding each task's best priced pairs as well was slower (3-4x
    at 100 x 1,000, docs/benchmarks/q-lp-degenerate.md). Pricing's ``new`` joins only when
    ``S(u)`` lies inside the LP, which only rounding can leave with a gap."""
    bound, support = lagrangian.bound(prices.credit)
    gap = bound - objective
    if gap <= LAGRANGIAN_TOLERANCE * (1.0 + abs(objective)):
        return True, gap, new[:0]
    missing = np.setdiff1d(support, model_keys, assume_unique=True)
    if missing.size == 0:
        return False, gap, np.sort(new)
    return False, gap, missing


def solve_q_lp(problem: AssignmentProblem, credit_cap: float) -> QLPSolution:
    """The q-lp LP's optimum: the caps' optimum when it respects the credit caps
    (:func:`_relaxation`), else by column generation (module docstring).

    Parameters
    ----------
    problem : AssignmentProblem
    credit_cap : float
        ``C``, the cap on each task's credit ``sum_i w_ij x_ij``.

    Returns
    -------
    QLPSolution
    """
    table = problem.quality_table  # weights are made block by block, never for every pair
    keys = _initial_keys(problem, table)
    lagrangian = None
    if problem.n_workers * problem.n_tasks <= RELAXATION_MAX_PAIRS:
        lagrangian = _Lagrangian(problem, table, credit_cap)
        relaxed, chosen = _relaxation(lagrangian, problem, credit_cap)
        if relaxed is not None:
            return relaxed
        keys = np.union1d(keys, chosen)
    if keys.size == 0 or problem.budget == 0:
        tasks, workers = np.divmod(keys, problem.n_workers)
        return QLPSolution(workers, tasks, np.zeros(keys.size), 0.0, 0, True, "nothing to assign")
    return _column_generation(problem, table, credit_cap, keys, lagrangian)


def _column_generation(problem, table, credit_cap, keys, lagrangian) -> QLPSolution:
    """Rounds of restricted LP, pricing and the Lagrangian certificate from the start ``keys``
    (sorted, not empty) until one proves the restricted optimum optimal, or the full LP."""
    n = problem.n_workers
    model = _WarmLP.create(problem, table, credit_cap)
    full, proof = False, ""
    for rounds in range(1, FULL_LP_AFTER + 2):
        tasks, workers = np.divmod(keys, n)
        start = time.perf_counter()
        if model is None or full:
            wk = q_lp_weights(table[workers, problem.task_column[tasks]], problem.n_labels)
            x, objective, prices, message = _restricted_lp(
                problem, workers, tasks, wk, credit_cap, presolve=full
            )
        else:
            x, objective, prices, message = _warm_round(model, keys, table, problem)
        if full:  # every usable pair was in the LP
            proof = f"every pair in the LP after {FULL_LP_AFTER} rounds of pricing"
            break
        solved = time.perf_counter()
        new = _price(problem, table, keys, prices)
        if new.size == 0:
            proof = "proved optimal by pricing"
            break
        priced = time.perf_counter()
        if lagrangian is not None:
            proved, gap, new = _lagrangian_step(lagrangian, keys, new, prices, objective)
            if proved:
                proof = f"proved optimal by the Lagrangian bound (gap {gap:.2g})"
                break
            logger.debug("q-lp round %d: Lagrangian gap %.3g", rounds, gap)
        logger.debug(
            "q-lp round %d: %d pairs, objective %.9g, %d join; LP %.2f s, pricing %.2f s, "
            "bound %.2f s",
            *(rounds, keys.size, objective, new.size, solved - start, priced - solved),
            time.perf_counter() - priced,
        )
        if rounds == FULL_LP_AFTER:
            keys, full = _all_keys(problem, table), True
        else:
            if DROP_MARGIN is not None and model is not None:
                model.drop(DROP_MARGIN)
                keys = np.sort(model.keys)
            keys = np.union1d(keys, new)
    return QLPSolution(workers, tasks, x, objective, rounds, True, f"HiGHS: {message}; {proof}")
