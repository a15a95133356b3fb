"""Private helpers shared by the solvers: argument checks, the projection runner, step rules."""

from __future__ import annotations

import inspect
import logging
import math
import time
from numbers import Integral, Real

import numpy as np

from projections.tvcs import _as_real

logger = logging.getLogger("projections.solvers")

#: Halvings tried by the backtracking rule before giving up and accepting the last trial.
MAX_HALVINGS = 50


class Breakdown(ArithmeticError):
    """Numerical breakdown: NaN or infinity from the loss or the projection, or no step that
    passes the backtracking test. The solvers catch it and return the last finite iterate."""


# -- argument checks ---------------------------------------------------------------------------


def check_int(value, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_nonneg_float(value, name: str, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return value


def check_finite_float(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_positive_float(value, name: str, *, alternative: str = "") -> float:
    """``value`` as a positive finite float; the error names ``name`` (and says
    ``alternative``, e.g. ``" or None"``, when the caller accepts something else too)."""
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ValueError(f"{name} must be a positive number{alternative}, got {value!r}")
    if not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{name} must be a positive finite number{alternative}, got {value!r}")
    return float(value)


def check_step(step) -> float | None:
    return None if step is None else check_positive_float(step, "step", alternative=" or None")


def check_time_limit(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ValueError(f"time_limit must be a positive number of seconds or None, got {value!r}")
    value = float(value)
    if not value > 0:
        raise ValueError(f"time_limit must be a positive number of seconds or None, got {value!r}")
    return value


def check_choice(value, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_bool(value, name: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_callback(callback):
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable or None, got {type(callback).__name__}")
    return callback


def check_methods(obj, role: str, names: tuple[str, ...]) -> None:
    missing = [n for n in names if not callable(getattr(obj, n, None))]
    if missing:
        raise TypeError(
            f"{role} must have method(s) {', '.join(names)}; "
            f"{type(obj).__name__} lacks {', '.join(missing)}"
        )


def initial_point(loss, w0) -> np.ndarray:
    """A fresh float64 copy of ``w0``, or zeros of ``loss.feature_shape`` when ``w0`` is None."""
    shape = getattr(loss, "feature_shape", None)
    if w0 is None:
        if shape is None:
            raise ValueError(
                f"w0 is required: {type(loss).__name__} has no feature_shape to start from zero"
            )
        return np.zeros(tuple(shape), dtype=np.float64)
    arr = _as_real(w0, "w0")
    if shape is not None:
        shape = tuple(shape)
        allowed = {shape, (math.prod(shape),)}
        if arr.shape not in allowed:
            raise ValueError(
                f"w0 has shape {arr.shape}, the loss expects "
                + " or ".join(str(s) for s in sorted(allowed, key=len, reverse=True))
            )
    if not np.all(np.isfinite(arr)):
        raise ValueError("w0 must be finite, got NaN or infinity")
    return np.array(arr, dtype=np.float64, copy=True)


# -- objective with a direction ----------------------------------------------------------------


class Objective:
    """``phi = f`` (minimise) or ``phi = -f`` (maximise), with shape and finiteness checks.

    ``f`` values (the loss as given) are what the solvers record; ``phi`` is what they descend.
    """

    def __init__(self, loss, *, maximize: bool, shape: tuple[int, ...]) -> None:
        self.loss = loss
        self.sign = -1.0 if maximize else 1.0
        self.shape = shape

    def f(self, w: np.ndarray) -> float:
        value = float(self.loss.value(readonly(w)))
        if not math.isfinite(value):
            raise Breakdown("the loss value is not finite")
        return value

    def phi(self, w: np.ndarray) -> float:
        return self.sign * self.f(w)

    def check_array(self, g, where: str) -> np.ndarray:
        g = np.asarray(g, dtype=np.float64)
        if g.shape != self.shape:
            if g.size != math.prod(self.shape):
                raise ValueError(f"{where} returned shape {g.shape}, expected {self.shape}")
            g = g.reshape(self.shape)
        if not np.all(np.isfinite(g)):
            raise Breakdown(f"{where} is not finite")
        return g

    def grad_phi(self, w: np.ndarray) -> np.ndarray:
        g = self.check_array(self.loss.gradient(readonly(w)), "the gradient")
        return self.sign * g

    def stochastic_grad_phi(self, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        g = self.loss.stochastic_gradient(readonly(w), rng)
        return self.sign * self.check_array(g, "the stochastic gradient")


def readonly(w: np.ndarray) -> np.ndarray:
    view = w.view()
    view.flags.writeable = False
    return view


# -- projections -------------------------------------------------------------------------------


def accepts_warm_start(fn) -> bool:
    """Whether ``fn`` can be called as ``fn(v, warm_start=...)``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            return True
        if p.name == "warm_start" and p.kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        ):
            return True
    return False


class Projector:
    """Calls a projection, times it, threads ``warm_start`` between calls, counts calls.

    ``counters`` may be shared by several projectors (GradMP's ``s`` and ``2s`` projections)
    so that the totals cover every call.
    """

    def __init__(self, projection, *, warm_start: bool, counters: dict | None = None) -> None:
        if not callable(projection):
            raise TypeError(
                f"projection must be callable (v -> result with .x and .support), "
                f"got {type(projection).__name__}"
            )
        self._fn = projection
        self._thread = warm_start and accepts_warm_start(projection)
        self._state = None
        self.counters = counters if counters is not None else new_counters()

    def __call__(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(x, support)`` of the projection of ``z``: fresh arrays of ``z``'s shape."""
        result, support = self._project(z)
        x = np.asarray(result.x, dtype=np.float64)
        if x.size != z.size:
            raise ValueError(
                f"the projection returned x of shape {x.shape} for an input of shape {z.shape}"
            )
        if not np.all(np.isfinite(x)):
            raise Breakdown("the projection returned a non-finite x")
        return np.array(x.reshape(z.shape), copy=True), support

    def support(self, z: np.ndarray) -> np.ndarray:
        """The support of the projection of ``z`` alone (its ``x`` is not read)."""
        return self._project(z)[1]

    def _project(self, z: np.ndarray):
        kwargs = {}
        if self._thread and self._state is not None:
            kwargs["warm_start"] = self._state
            self.counters["warm_started"] += 1
        start = time.perf_counter()
        result = self._fn(readonly(z), **kwargs)
        self.counters["seconds"] += time.perf_counter() - start
        self.counters["calls"] += 1
        if not hasattr(result, "x") or not hasattr(result, "support"):
            raise TypeError(
                f"the projection must return an object with .x and .support, "
                f"got {type(result).__name__}"
            )
        support = np.asarray(result.support, dtype=bool)
        if support.size != z.size:
            raise ValueError(
                f"the projection returned a support of shape {support.shape} for an input of "
                f"shape {z.shape}"
            )
        if self._thread:
            self._state = getattr(result, "warm_start", None)
        return result, support.reshape(z.shape).copy()


def new_counters() -> dict:
    return {"calls": 0, "warm_started": 0, "seconds": 0.0}


# -- step rules --------------------------------------------------------------------------------


def lipschitz_step(loss, method: str = "lipschitz") -> float | None:
    """``1 / loss.<method>()`` if the loss has that method and it gives a positive finite value."""
    fn = getattr(loss, method, None)
    if not callable(fn):
        return None
    lip = float(fn())
    if not math.isfinite(lip) or lip < 0:
        raise ValueError(f"{type(loss).__name__}.{method}() returned {lip!r}")
    if lip == 0.0:
        logger.warning(
            "%s.%s() is 0 (constant gradient); using step 1.0", type(loss).__name__, method
        )
        return 1.0
    return 1.0 / lip


def initial_backtracking_step(obj: Objective, w: np.ndarray, g: np.ndarray) -> float:
    """First trial step of the backtracking rule: ``1 / L_local`` from a gradient difference.

    ``L_local = ||grad(w - t g) - grad(w)|| / ||t g||`` for a small ``t``; ``1.0`` when the
    gradient is zero or does not change along ``-g``.
    """
    gnorm = float(np.linalg.norm(g))
    if gnorm == 0.0:
        return 1.0
    t = 1e-4 * max(1.0, float(np.linalg.norm(w))) / gnorm
    try:
        g2 = obj.grad_phi(w - t * g)
    except Breakdown:
        return 1.0
    curvature = float(np.linalg.norm(g2 - g)) / (t * gnorm)
    if not math.isfinite(curvature) or curvature <= 0.0:
        return 1.0
    return 1.0 / curvature


def sufficient_decrease(phi_new: float, phi_old: float, g, d, step: float) -> bool:
    """The quadratic upper-bound test ``phi(w + d) <= phi(w) + <g, d> + ||d||^2 / (2 step)``."""
    bound = phi_old + float(np.vdot(g, d)) + float(np.vdot(d, d)) / (2.0 * step)
    return phi_new <= bound + 1e-12 * max(1.0, abs(phi_old))


def backtracking_step(
    obj: Objective, proj: Projector, w, phi_w: float, g, step: float, floor: float | None = None
):
    """One projected-gradient step of the adaptive rule (Nesterov's estimate of the local
    curvature; :func:`~projections.solvers.iht`, :func:`~projections.solvers.group_iht`):
    ``P(w - step g)`` with ``step`` halved until the quadratic upper-bound test holds; a step
    at ``floor`` (``1 / L``, or None for no such step) is taken without the test, which it
    passes in exact arithmetic whatever the projection (the bound holds at every point).

    Returns ``(x, support, f(x), the step taken)``.
    """
    for _ in range(MAX_HALVINGS):
        if floor is not None and step <= floor:
            x, sup = proj(w - floor * g)
            return x, sup, obj.f(x), floor
        x, sup = proj(w - step * g)
        try:
            f_x = obj.f(x)
        except Breakdown:
            step *= 0.5
            continue
        if sufficient_decrease(obj.sign * f_x, phi_w, g, x - w, step):
            return x, sup, f_x, step
        step *= 0.5
    raise Breakdown(f"backtracking found no acceptable step after {MAX_HALVINGS} halvings")


class StepRule:
    """The step of a projected-gradient iteration: a constant, or the adaptive rule.

    ``step`` given: every iteration takes ``P(w - step g)``. ``step=None``: the adaptive rule
    (:func:`backtracking_step`): each iteration tries twice the step it accepted last (the first
    from ``floor``, else half of ``1 / L_local`` from a gradient difference) and halves it until
    the quadratic upper-bound test holds, never below ``floor`` (``1 / L``, or None). Used by
    :func:`~projections.solvers.iht` and :func:`~projections.solvers.group_iht`.
    """

    def __init__(self, step: float | None, floor: float | None) -> None:
        self.rule = "constant" if step is not None else "adaptive"
        self.floor = None if step is not None else floor  # 1 / L: always accepted
        self.step = step if step is not None else floor

    def take(self, obj: Objective, proj: Projector, w, phi_w: float, g):
        """``(x, support, f(x))`` for ``x = P(w - step g)``; ``phi_w`` is ``phi(w)``."""
        if self.rule == "constant":
            x, sup = proj(w - self.step * g)
            return x, sup, obj.f(x)
        if self.step is None:
            self.step = 0.5 * initial_backtracking_step(obj, w, g)
        x, sup, f_x, self.step = backtracking_step(
            obj, proj, w, phi_w, g, 2.0 * self.step, self.floor
        )
        return x, sup, f_x


def small_change(w_new: np.ndarray, w_old: np.ndarray, tol: float) -> bool:
    """``||w_new - w_old|| <= tol * max(||w_new||, ||w_old||)`` (true when both are zero)."""
    diff = float(np.linalg.norm(w_new - w_old))
    scale = max(float(np.linalg.norm(w_new)), float(np.linalg.norm(w_old)))
    return diff <= tol * scale or diff == 0.0


class Deadline:
    def __init__(self, time_limit: float | None) -> None:
        self.start = time.perf_counter()
        self.limit = time_limit

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def passed(self) -> bool:
        return self.limit is not None and self.elapsed() >= self.limit
