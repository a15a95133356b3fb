"""Frank–Wolfe and CoGEnT under the latent overlapping group norm or the SoG norm.

Both solve ``min f(w) s.t. ||w||_A <= tau`` over an atomic norm ``||w||_A = inf { sum_i c_i :
w = sum_i c_i a_i, c_i >= 0, a_i in A }``, whose unit ball is the convex hull of the atoms
``A``; the atom sets are in :mod:`projections.solvers._atoms`:

* ``per_group=None`` (default): the unit-l2 vectors supported on one group, which make
  ``||.||_A`` the latent overlapping group norm ``||w||_G = inf { sum_g ||v_g|| : sum_g v_g =
  w, supp(v_g) in G_g }`` (Jacob, Obozinski & Vert 2009; equation (2) of Jain, Rao & Dhillon,
  NIPS 2016): the convex competitors of Figure 1 (left, centre-left) of Jain, Rao & Dhillon;
* ``per_group=s``: the unit-l2 vectors supported on at most ``s`` coordinates of one group,
  the sparse overlapping groups (SoG) atoms of their Figure 2 (left), after the sparse
  overlapping sets lasso (Rao, Cox, Nowak & Rogers, NIPS 2013). ``||w||_A = inf { sum_g
  ||v_g||_(s) : sum_g v_g = w, supp(v_g) in G_g }`` with ``||.||_(s)`` the k-support norm
  (Argyriou, Foygel & Srebro, NIPS 2012) at ``k = s``; its dual is ``max_g`` of the l2 norm
  of the ``s`` largest ``|z_i|``, ``i in G_g``, which is what the oracle maximises.

The solvers:

* :func:`frank_wolfe` — the conditional-gradient method (Tewari, Ravikumar & Dhillon, "Greedy
  algorithms for structurally constrained high dimensional problems", NIPS 2011): move towards
  the atom most aligned with ``-grad f(w)``.
* :func:`cogent` — CoGEnT (Rao, Shah & Wright, "Forward–backward greedy algorithms for atomic
  norm regularization", IEEE TSP 63(21), 2015): the same forward step, an enhancement that
  re-optimises the weights of the atoms selected so far, and a backward step that drops an atom
  when doing so costs little.

Both keep the iterate's atom decomposition explicitly, as latent vectors each a non-negative
multiple of one atom, so that the sum of their norms ``<= tau`` certifies feasibility. Whole-
group atoms of the same group are merged into its ``v_g`` (a sum of atoms on ``G_g`` with
weights ``c_i`` has norm at most ``sum c_i``, so merging never loosens the bound). SoG atoms
are merged only when they have the same support: two atoms of one group on different
coordinates may sum to more than ``s`` non-zeros, whose l2 norm is only a lower bound on
their k-support norm, so they are kept as separate atoms.
"""

from __future__ import annotations

import numpy as np

from projections.groups import OverlappingGroups
from projections.solvers._atoms import GroupAtoms, SparseGroupAtoms
from projections.solvers._common import (
    Breakdown,
    Deadline,
    Objective,
    check_callback,
    check_choice,
    check_int,
    check_methods,
    check_nonneg_float,
    check_positive_float,
    check_step,
    check_time_limit,
    initial_point,
    lipschitz_step,
    new_counters,
    readonly,
)
from projections.solvers._loop import Steps, run
from projections.solvers.losses import LeastSquares
from projections.solvers.result import SolverResult

__all__ = ["cogent", "frank_wolfe", "project_group_norms"]

#: Step rules of the forward (Frank–Wolfe) step.
STEP_RULES = ("exact", "open_loop")
#: Step rules of CoGEnT's enhancement.
ENHANCE_RULES = ("backtracking", "safe")


def project_group_norms(norms: np.ndarray, tau: float) -> np.ndarray:
    """The Euclidean projection of non-negative ``norms`` onto ``{r >= 0 : sum r <= tau}``.

    Projecting latent vectors ``(v_g)`` onto ``{sum_g ||v_g|| <= tau}`` rescales each ``v_g`` to
    the projected norm ``r_g`` (the l1-ball projection of the norms: Duchi, Shalev-Shwartz,
    Singer & Chandra, ICML 2008, by sorting, ``O(m log m)`` for ``m`` norms).

    Parameters
    ----------
    norms : ndarray of float, shape (m,)
        Non-negative.
    tau : float
        Radius, ``> 0``.

    Returns
    -------
    ndarray of float, shape (m,)
        ``norms`` itself (a copy) when ``sum(norms) <= tau``; else ``max(norms - theta, 0)``
        with ``theta`` the threshold at which the sum is ``tau``.
    """
    norms = np.asarray(norms, dtype=np.float64)
    if norms.sum() <= tau:
        return norms.copy()
    u = np.sort(norms)[::-1]
    excess = np.cumsum(u) - tau
    rho = np.flatnonzero(u > excess / np.arange(1, u.size + 1))[-1]
    return np.maximum(norms - excess[rho] / (rho + 1), 0.0)


class _Slots:
    """CoGEnT's selected latent vectors laid end to end: ``v`` (all slots, one vector), each
    slot on its coordinates ``index[offsets[i]:offsets[i + 1]]`` of a vector of ``size``.

    One projected-gradient step is then a few vector operations over every slot at once, not
    a Python loop over them (a SoG run can hold a hundred slots). There is at least one slot and
    none is empty: the solver drops zero slots before its enhancement and skips it without
    any."""

    def __init__(self, parts: list, members: list, size: int) -> None:
        lengths = np.array([m.size for m in members], dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(lengths)))
        self.lengths, self.size = lengths, size
        self.index = np.concatenate(members)
        self.v = np.concatenate(parts)

    def projected_step(self, grad, step: float, tau: float) -> np.ndarray:
        """The slots after ``v_i - step * grad`` on each slot's coordinates, each rescaled to
        the projection of the slot norms onto ``sum_i ||v_i|| <= tau``."""
        moved = self.v - step * grad[self.index]
        norms = np.sqrt(np.add.reduceat(np.square(moved), self.offsets[:-1]))
        scaled = project_group_norms(norms, tau)
        factor = np.divide(scaled, norms, out=np.ones_like(norms), where=norms > 0)
        return moved * np.repeat(factor, self.lengths)

    def compose(self, v: np.ndarray) -> np.ndarray:
        """``sum_i v_i`` on a zero vector of ``size``."""
        return np.bincount(self.index, weights=v, minlength=self.size)

    def split(self) -> list:
        """The slots, one array each (views of ``v``)."""
        return np.split(self.v, self.offsets[1:-1])


class _FrankWolfeSteps(Steps):
    """One Frank–Wolfe step per iteration; the gradient and the oracle's atom of the current
    iterate are kept from the previous iteration, so each costs one gradient (at the atom, for
    the exact line search) and one loss value."""

    name = "frank_wolfe"

    def __init__(self, obj: Objective, atoms: GroupAtoms, w, rule: str, tol: float) -> None:
        self.obj, self.atoms, self.rule, self.tol = obj, atoms, rule, tol
        self.convergence = f"Frank-Wolfe gap <= tol={tol:g}"
        self.counters = new_counters()
        self.f = obj.f(w)
        self.gamma = None
        self.gaps: list[float] = []
        self.bounds: list[float] = []
        self._look(w, obj.grad_phi(w))

    def _look(self, w, grad) -> None:
        """Keep ``grad``, the oracle's atom at ``w`` and the gap ``<grad, w - s>``, and record
        the gap and the decomposition's bound."""
        self.grad = grad
        self.group, self.atom, norm = self.atoms.oracle(grad)
        gap = float(np.vdot(grad, w)) + self.atoms.tau * norm
        self.gaps.append(gap)
        self.bounds.append(self.atoms.bound())
        self.converged = gap <= self.tol

    def initial_value(self, w, support) -> float:
        return self.f

    def forward(self, it: int, w):
        """The Frank–Wolfe step towards the current atom: ``(w_next, grad f(w_next))``."""
        d = self.atom - w
        if self.rule == "exact":
            # f is quadratic: its gradient is affine, so grad f(w + gamma d) is a mix of two
            grad_s = self.obj.grad_phi(self.atom)
            curvature = float(np.vdot(grad_s - self.grad, d))
            slope = -float(np.vdot(self.grad, d))  # the gap, >= 0
            self.gamma = 1.0 if curvature <= 0 else min(1.0, max(0.0, slope / curvature))
            grad = (1.0 - self.gamma) * self.grad + self.gamma * grad_s
        else:
            self.gamma = 2.0 / (it + 1.0)  # 2 / (t + 2) with t = it - 1 counted from 0
            grad = None
        self.atoms.toward(self.group, self.atom, self.gamma)
        w_next = w + self.gamma * d
        return w_next, (self.obj.grad_phi(w_next) if grad is None else grad)

    def advance(self, it, w, support):
        w_next, grad = self.forward(it, w)
        self.atoms.drop_zeros()
        self.f = self.obj.f(w_next)
        self._look(w_next, grad)
        return w_next, w_next != 0

    def value(self, it, w, support) -> float:
        return self.f

    def describe(self) -> str:
        return f"tau={self.atoms.tau:g}, step rule {self.rule}{self.atoms.describe()}"

    def step_size(self) -> float | None:
        return self.gamma

    def details(self) -> dict:
        return {
            "gaps": np.asarray(self.gaps),
            "gap": self.gaps[-1],
            "atom_bounds": np.asarray(self.bounds),
            "atoms": dict(self.atoms.latent),
        }


def _checked(loss, groups, tau, per_group, step_rule, max_iter, tol, callback, time_limit):
    """The checks both solvers share; returns ``(w0 = 0, atoms, step_rule, ...)``."""
    check_methods(loss, "loss", ("value", "gradient"))
    if not isinstance(groups, OverlappingGroups):
        raise ValueError(
            f"groups must be an OverlappingGroups (build it once), got {type(groups).__name__}"
        )
    tau = check_positive_float(tau, "tau")
    if per_group is None:
        atoms = GroupAtoms(groups, tau)
    else:
        atoms = SparseGroupAtoms(groups, tau, check_int(per_group, "per_group", minimum=1))
    if step_rule is None:
        step_rule = "exact" if isinstance(loss, LeastSquares) else "open_loop"
    step_rule = check_choice(step_rule, "step_rule", STEP_RULES)
    if step_rule == "exact" and not isinstance(loss, LeastSquares):
        raise ValueError(
            "step_rule='exact' needs a quadratic loss (LeastSquares), "
            f"got {type(loss).__name__}; use 'open_loop'"
        )
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol")
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    w = initial_point(loss, None)
    if w.size != groups.n_features:
        raise ValueError(
            f"groups act on {groups.n_features} features, the loss has {w.size} "
            f"(feature_shape {w.shape})"
        )
    return w, atoms, step_rule, max_iter, tol, callback, time_limit


def frank_wolfe(
    loss,
    groups,
    *,
    tau: float,
    per_group: int | None = None,
    step_rule: str | None = None,
    max_iter: int = 1000,
    tol: float = 1e-6,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Frank–Wolfe (conditional gradient) on ``min f(w) s.t. ||w||_A <= tau``.

    From ``w_0 = 0``, each iteration computes::

        g*      = argmax_g ||grad_{G_g} f(w_t)||                 (the linear minimisation oracle)
        s_t     = -tau grad_{G_g*} f(w_t) / ||grad_{G_g*} f(w_t)||   (an atom, supported on G_g*)
        w_{t+1} = w_t + gamma_t (s_t - w_t)

    with ``gamma_t`` the exact line search ``argmin_{[0, 1]} f(w_t + gamma (s_t - w_t))``
    (closed form for least squares) or the open-loop ``2 / (t + 2)``. With ``per_group = s``
    (the SoG atoms) the oracle reads only the ``s`` largest ``|grad_i|`` of each group::

        S_g     = the s coordinates of G_g with the largest |grad_i f(w_t)|
        g*      = argmax_g ||grad_{S_g} f(w_t)||
        s_t     = -tau grad_{S_g*} f(w_t) / ||grad_{S_g*} f(w_t)||    (supported on S_g*)

    ``O(sum_g |G_g| log |G_g|)`` with the sort; ties go to the lower coordinate and group.

    Parameters
    ----------
    loss : Loss
        ``value(w)`` and ``gradient(w)``, ``w`` of ``p = groups.n_features`` coefficients.
    groups : OverlappingGroups
        The groups ``G_g``; every one is an atom's support.
    tau : float
        Radius ``> 0`` of the atomic-norm ball.
    per_group : int, optional
        ``None`` (default): whole-group atoms, the latent group norm ``||.||_G``. An integer
        ``s >= 1``: SoG atoms, unit-l2 vectors on at most ``s`` coordinates of one group (see
        the module; ``s`` at least every group's size gives the whole-group atoms).
    step_rule : {"exact", "open_loop"}, optional
        Default ``"exact"`` for :class:`~projections.solvers.LeastSquares` (the only loss it
        accepts: the closed form needs a quadratic ``f``), ``"open_loop"`` otherwise.
    max_iter : int, default 1000
        Iterations at most (``>= 0``).
    tol : float, default 1e-6
        Converged when the Frank–Wolfe gap ``<grad f(w_t), w_t - s_t> <= tol``; the gap bounds
        ``f(w_t) - min f`` over the ball (Jaggi, ICML 2013).
    callback : callable, optional
        ``callback(iteration, w, value)`` after each iteration; True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.

    Returns
    -------
    SolverResult
        ``solution`` is the last iterate, ``history`` ``f(w_0), f(w_1), ...``. ``details``
        adds ``gaps`` (ndarray, the gap at each iterate of ``history_iterations``), ``gap``
        (the last), ``atom_bounds`` (``sum_g ||v_g||`` of each iterate's decomposition, each
        ``<= tau``) and ``atoms`` (``{group: v_g}``, the solution's decomposition, ``v_g`` on
        ``groups.members[g]``; with ``per_group``, ``{(group, coordinates): v}``, ``v`` on the
        sorted tuple ``coordinates`` of at most ``per_group`` members of ``group``).

    Raises
    ------
    ValueError
        A bad ``tau``, ``per_group``, ``step_rule``, ``max_iter``, ``tol`` or ``time_limit``,
        ``groups`` that
        is not an :class:`~projections.groups.OverlappingGroups` or does not match the loss.
    TypeError
        ``loss`` lacks ``value`` or ``gradient``, or ``callback`` is not callable.

    Notes
    -----
    ``f(w_t) - f* <= 2 L D^2 / (t + 2)`` with ``D = 2 tau`` the ball's diameter (Jaggi 2013);
    line search keeps ``f(w_t)`` non-increasing. Each iteration costs one gradient (at the
    atom ``s_t``, from which the affine gradient of least squares at ``w_{t+1}`` follows), one
    loss value and ``O(sum_g |G_g|)`` for the oracle (with a sort for SoG). The gap
    ``<grad, w_t> + tau ||grad||_A*`` uses the dual norm the oracle computes, so it certifies
    SoG runs as it does whole-group runs. SoG atoms of different supports are kept apart (see
    the module), so a SoG run holds up to one latent vector per iteration.
    """
    w, atoms, rule, max_iter, tol, callback, time_limit = _checked(
        loss, groups, tau, per_group, step_rule, max_iter, tol, callback, time_limit
    )
    deadline = Deadline(time_limit)
    obj = Objective(loss, maximize=False, shape=w.shape)
    steps = _FrankWolfeSteps(obj, atoms, w, rule, tol)
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


class _CoGEnTSteps(_FrankWolfeSteps):
    """CoGEnT: the Frank–Wolfe step, then the enhancement, then at most one backward step."""

    name = "cogent"

    def __init__(self, obj, atoms, w, rule, tol, *, step, enhance, eta) -> None:
        super().__init__(obj, atoms, w, rule, tol)
        self.base_step, self.eta = step, eta
        self.enhance_steps, self.enhance_rule = enhance
        self.enhance_step: float | None = None
        self.backward: list[tuple[int, float, float]] = []
        self.removed = 0

    def enhance(self, w, grad):
        """``enhance_steps`` projected-gradient steps on the selected slots' latent vectors
        for ``min f(sum_g v_g) s.t. sum_g ||v_g|| <= tau``: ``(w, grad f(w), f(w))``.

        The safe step is ``base_step / sharing`` (``1 / L`` over the squared norm of ``(v_g)
        -> sum_g v_g``). With ``enhance_rule="backtracking"`` each step starts from twice the
        step accepted last and halves until :meth:`_accepts` holds or the safe step is
        reached (which always passes it); with ``"safe"`` every step is the safe one. The
        steps run on the loss restricted to the slots' coordinates when it has
        ``restricted`` (see :meth:`_restriction`), on the slots laid end to end in one
        vector (:class:`_Slots`)."""
        chosen = list(self.atoms.latent)
        if not chosen:  # the forward step added nothing (a zero gradient)
            return w, grad, self.obj.f(w)
        members = [self.atoms.members(key) for key in chosen]
        obj, local, z, g = self._restriction(w, grad, members)
        slots = _Slots([self.atoms.latent[key] for key in chosen], local, z.size)
        safe = self.base_step / self.atoms.sharing(chosen)
        step = safe
        if self.enhance_rule == "backtracking" and self.enhance_step is not None:
            step = max(2.0 * self.enhance_step, safe)
        f_z, moved = None, False
        for _ in range(self.enhance_steps):
            if moved:
                g = obj.grad_phi(z)
            while True:
                v_new = slots.projected_step(g, step, self.atoms.tau)
                z_new = slots.compose(v_new)
                moved2 = float(np.vdot(v_new - slots.v, v_new - slots.v))
                f_new = None if step <= safe else obj.f(z_new)
                if f_new is None:
                    break
                f_z = obj.f(z) if f_z is None else f_z
                if self._accepts(f_z, f_new, g, z_new - z, moved2, step):
                    break
                step = max(step / 2.0, safe)
            self.enhance_step = step
            slots.v, z, f_z = v_new, z_new, f_new
            moved = moved2 != 0.0
            if not moved:  # a fixed point of the restricted problem
                break
        self.atoms.latent.update(zip(chosen, slots.split(), strict=True))
        if obj is self.obj:
            g = obj.grad_phi(z) if moved else g
            w, grad = z.reshape(w.shape), g.reshape(w.shape)
        else:  # the whole gradient: the restricted one at the last z is never computed
            w = self.atoms.compose(w.shape)
            grad = self.obj.grad_phi(w)
        return w, grad, (self.obj.f(w) if f_z is None else f_z)

    def _restriction(self, w, grad, members: list) -> tuple:
        """``(objective, local members, z, grad at z)`` of the enhancement: on the union ``S``
        of the slots' coordinates when the loss has ``restricted`` (``w`` is 0 off ``S``, so
        the restricted loss equals ``f`` at every point the enhancement visits), else on all
        coordinates."""
        restricted = getattr(self.obj.loss, "restricted", None)
        if not callable(restricted):
            return self.obj, members, w.reshape(-1), grad.reshape(-1)
        index = np.unique(np.concatenate(members))
        obj = Objective(restricted(index), maximize=False, shape=(index.size,))
        local = [np.searchsorted(index, m) for m in members]
        return obj, local, w.reshape(-1)[index], grad.reshape(-1)[index]

    @staticmethod
    def _accepts(f_w, f_new, grad, dw, moved2, step) -> bool:
        """The descent-lemma test ``f(w+) <= f(w) + <grad f(w), w+ - w> + ||V+ - V||^2 / (2
        step)`` in the latent variables ``V`` (``<grad_V, V+ - V> = <grad f(w), w+ - w>``), with
        no slack for rounding: a rejection only moves the step towards the safe one."""
        bound = f_w + float(np.vdot(grad, dw)) + moved2 / (2.0 * step)
        return f_new <= bound

    def removed_values(self, w) -> np.ndarray:
        """``f(w - v_g)`` for every selected group ``g``: the loss's
        ``values_after_removing`` when it has one (least squares), else one value each."""
        parts = [(self.atoms.members(g), v) for g, v in self.atoms.latent.items()]
        fast = getattr(self.obj.loss, "values_after_removing", None)
        if callable(fast):
            values = np.asarray(fast(readonly(w), parts), dtype=np.float64)
            if not np.all(np.isfinite(values)):
                raise Breakdown("the loss value is not finite")
            return values
        values = []
        for index, v in parts:
            trial = w.reshape(-1).copy()
            trial[index] -= v
            values.append(self.obj.f(trial.reshape(w.shape)))
        return np.array(values)

    def backward_step(self, it: int, w, f_w: float, allowed: float):
        """Drop the atom whose removal raises ``f`` least if that rise is ``<= allowed``:
        ``(w, f(w), removed)``."""
        if len(self.atoms.latent) < 2:
            return w, f_w, False
        rises = dict(zip(self.atoms.latent, self.removed_values(w) - f_w, strict=True))
        g = min(rises, key=rises.get)
        self.backward.append((it, rises[g], allowed))
        if rises[g] > allowed:
            return w, f_w, False
        del self.atoms.latent[g]
        self.removed += 1
        return self.atoms.compose(w.shape), f_w + rises[g], True

    def advance(self, it, w, support):
        f_before = self.f
        w_next, grad = self.forward(it, w)
        self.atoms.drop_zeros()
        if self.enhance_steps:
            w_next, grad, f_next = self.enhance(w_next, grad)
            self.atoms.drop_zeros()
        else:
            f_next = self.obj.f(w_next)
        allowed = self.eta * max(f_before - f_next, 0.0)
        w_next, self.f, removed = self.backward_step(it, w_next, f_next, allowed)
        if removed:
            self.f = self.obj.f(w_next)
            grad = self.obj.grad_phi(w_next)
        self._look(w_next, grad)
        return w_next, w_next != 0

    def describe(self) -> str:
        return (
            f"{super().describe()}, {self.enhance_steps} enhancement steps "
            f"({self.enhance_rule}), eta={self.eta:g}"
        )

    def details(self) -> dict:
        return {
            **super().details(),
            "backward": list(self.backward),
            "removed": self.removed,
            "enhance_step": self.enhance_step,
        }


def cogent(
    loss,
    groups,
    *,
    tau: float,
    per_group: int | None = None,
    eta: float = 0.5,
    enhance_steps: int = 10,
    enhance_rule: str = "backtracking",
    step=None,
    step_rule: str | None = None,
    max_iter: int = 500,
    tol: float = 1e-6,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """CoGEnT (Rao, Shah & Wright, IEEE TSP 2015) on ``min f(w) s.t. ||w||_A <= tau``.

    From ``w_0 = 0`` with no atoms, each iteration runs three steps::

        forward:  the Frank-Wolfe step of :func:`frank_wolfe`; its atom's group joins the set
        enhance:  enhance_steps projected-gradient steps on the latent vectors of the selected
                  groups:  min f(sum_g v_g)  s.t.  sum_g ||v_g|| <= tau,  each step found by
                  backtracking from twice the last accepted one
        backward: g_b = argmin_g f(w - v_g) over the selected groups; drop it when
                  f(w - v_g_b) - f(w) <= eta * (f(w_t) - f(w))

    where ``f(w_t) - f(w)`` is the decrease the forward and enhancement steps just made. With
    ``per_group`` (SoG atoms) "group" reads "atom": each ``v`` is the latent vector of one
    support of at most ``per_group`` coordinates of a group, and stays on it.

    Parameters
    ----------
    loss : Loss
        ``value(w)`` and ``gradient(w)``; ``lipschitz()`` too unless ``step`` is given.
    groups : OverlappingGroups
    tau : float
        Radius ``> 0`` of the atomic-norm ball.
    per_group : int, optional
        ``None``: whole-group atoms; ``s >= 1``: SoG atoms, as in :func:`frank_wolfe`.
    eta : float, default 0.5
        Backward threshold in ``[0, 1)``: an atom is dropped only when that raises ``f`` by at
        most ``eta`` times the iteration's decrease, so each iteration still decreases ``f`` by
        at least ``(1 - eta)`` of it. 0 drops only atoms whose removal costs nothing.
    enhance_steps : int, default 10
        Projected-gradient steps of the enhancement (``>= 0``; 0 skips it).
    enhance_rule : {"backtracking", "safe"}, default "backtracking"
        The enhancement's step: backtracked from twice the step accepted last down to the safe
        step (see Notes), or always the safe step ``step / sharing``, which needs no loss
        value but moves little when many selected atoms share a coordinate.
    step : float, optional
        ``1 / L``, default ``1 / loss.lipschitz()``: divided by the most selected latent vectors
        sharing a coordinate (the squared norm of ``(v_g) -> sum_g v_g``) it is the enhancement's
        safe step, the floor of its backtracking, at which the descent-lemma test always holds.
    step_rule : {"exact", "open_loop"}, optional
        The forward step's rule, as in :func:`frank_wolfe`.
    max_iter : int, default 500
    tol : float, default 1e-6
        Converged when the Frank–Wolfe gap at the iterate is ``<= tol``.
    callback : callable, optional
        ``callback(iteration, w, value)`` after each iteration; True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.

    Returns
    -------
    SolverResult
        As :func:`frank_wolfe`'s; ``details`` adds ``backward`` (``(iteration, rise, allowed)``
        of every backward test, the removal made when ``rise <= allowed``), ``removed`` and
        ``enhance_step`` (the enhancement's last accepted step; None when it never ran).

    Raises
    ------
    ValueError
        As :func:`frank_wolfe` (``per_group`` included), and a bad ``eta``, ``enhance_steps``,
        ``enhance_rule`` or ``step`` (or no ``step`` for a loss without ``lipschitz()``).
    TypeError
        ``loss`` lacks ``value`` or ``gradient``, or ``callback`` is not callable.

    Notes
    -----
    Where the paper leaves freedom, this implementation chooses:

    * atoms of one group are merged into its latent vector ``v_g`` (see the module), so the
      enhancement re-optimises whole group components, not only their weights, over the
      ``tau``-ball restricted to the selected groups; it is projected gradient (the projection
      is :func:`project_group_norms` on the group norms) with ``enhance_steps`` steps, not an
      exact solve. With SoG atoms only atoms of one support are merged, and the enhancement
      moves each latent vector on its own support, so it re-optimises the selected atoms'
      directions within their supports and their weights;
    * the enhancement's step is backtracked with the descent-lemma test ``f(w+) <= f(w) +
      <grad f(w), w+ - w> + ||V+ - V||^2 / (2 step)`` in the latent variables ``V`` (Beck &
      Teboulle, SIAM J. Imaging Sci. 2009), from twice the step accepted last down to the safe
      ``step / sharing``. The safe step alone is the worst case over every direction and, with
      many SoG slots on one coordinate, tiny: the enhancement then barely moves (the SoG
      benchmark, ``docs/benchmarks/sparse_overlapping_groups.md``, runs both rules). The test
      has no slack: rounding that rejects a good step only backtracks towards the safe step;
    * the enhancement evaluates ``loss.restricted(S)`` when the loss has it (the linear-model
      losses do), ``S`` the selected slots' coordinates: ``w`` is 0 off ``S`` throughout, so
      it is the same function, at ``O(n |S|)`` a product instead of ``O(n p)``; one full
      gradient at its end feeds the next oracle call;
    * the backward step evaluates ``f(w - v_g)`` for every selected group (the loss's
      ``values_after_removing(w, [(index, v_g), ...])`` when it has one, as
      :class:`~projections.solvers.LeastSquares` does, else one loss value each) and removes at
      most one atom per iteration, without re-optimising afterwards;
    * the "forward decrease" the backward threshold compares with includes the enhancement's.

    The Frank–Wolfe gap certifies ``f(w_t) - min f <= gap`` whatever the atoms, so the
    stopping test is :func:`frank_wolfe`'s; convergence at Frank–Wolfe's ``O(1/t)`` rate at
    least follows from the forward step's decrease (Rao, Shah & Wright, Theorem 2).
    """
    w, atoms, rule, max_iter, tol, callback, time_limit = _checked(
        loss, groups, tau, per_group, step_rule, max_iter, tol, callback, time_limit
    )
    eta = check_nonneg_float(eta, "eta")
    if eta >= 1.0:
        raise ValueError(f"eta must be in [0, 1), got {eta!r}")
    enhance_steps = check_int(enhance_steps, "enhance_steps", minimum=0)
    enhance_rule = check_choice(enhance_rule, "enhance_rule", ENHANCE_RULES)
    step = check_step(step)
    deadline = Deadline(time_limit)
    if step is None and enhance_steps:
        step = lipschitz_step(loss)
        if step is None:
            raise ValueError(f"step is required: {type(loss).__name__} has no lipschitz()")
    obj = Objective(loss, maximize=False, shape=w.shape)
    enhance = (enhance_steps, enhance_rule)
    steps = _CoGEnTSteps(obj, atoms, w, rule, tol, step=step, enhance=enhance, eta=eta)
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)
