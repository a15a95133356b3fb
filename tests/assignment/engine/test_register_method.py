"""Adding a method is one file plus one registry line: a toy method, registered, runs in ``solve``.

The toy lives in its own module file (written to a temporary directory), as a new method would
in ``assignment/engine/``; :func:`~assignment.engine.solve.register_method` adds the line the
registry (``_REGISTRY`` in ``solve.py``) would hold.
"""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from assignment.engine.problem import AssignmentProblem
from assignment.engine.solve import (
    check_options,
    method_options,
    method_spec,
    register_method,
    solve,
)

# ``assignment.engine.solve`` is also the name of the function the package exports.
solve_module = importlib.import_module("assignment.engine.solve")

TOY_MODULE = '''
"""A toy method: the most reliable pairs, by the exact projection of |2 Q - 1| ** power."""

import numpy as np

from assignment.engine.method_output import MethodOutput
from assignment.engine.options import Option
from projections.tvcs import project

OPTIONS = (Option("power", float, "Exponent of the reliability weights.", minimum=0,
                  exclusive_minimum=True),)
CALLS = []


def most_reliable(problem, *, rng, power=2.0):
    CALLS.append(power)
    weights = np.abs(2.0 * problem.quality - 1.0) ** power
    support = project(problem.mask(weights).ravel(), problem.structure).support
    return support.reshape(problem.shape)


def most_reliable_output(problem, *, progress=None, power=2.0):
    """The same assignment as a MethodOutput, with a message and details; no ``rng``."""
    assignment = most_reliable(problem, rng=None, power=power)
    if progress is not None:
        progress(0.5, "projected")
    return MethodOutput.from_assignment(
        assignment, message="projected once", details={"power": power}
    )
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """Register the toy method for one test; the registry is as it was afterwards."""
    (tmp_path / "toy_reliable_method.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("_REGISTRY", "METHODS", "_BY_NAME"):
        value = getattr(solve_module, name)
        monkeypatch.setattr(solve_module, name, dict(value) if isinstance(value, dict) else value)
    solve_module._specs.cache_clear()
    register_method(
        "toy-reliable",
        title="most reliable pairs",
        description="The exact projection of reliability weights.",
        module="toy_reliable_method",
        solver="most_reliable",
        options="OPTIONS",
    )
    yield __import__("toy_reliable_method")
    monkeypatch.undo()
    sys.modules.pop("toy_reliable_method", None)
    solve_module._specs.cache_clear()


def _problem():
    rng = np.random.default_rng(3)
    quality = rng.uniform(0.5, 0.95, size=(6, 9))
    eligible = rng.random((6, 9)) < 0.8
    return AssignmentProblem(
        quality, max_workers_per_task=2, max_tasks_per_worker=3, budget=12, eligible=eligible
    )


def test_a_registered_method_is_listed_with_its_metadata_and_defaults(toy):
    assert solve_module.METHODS[-1] == "toy-reliable"
    spec = method_spec("toy-reliable")
    assert (spec.title, spec.description) == (
        "most reliable pairs",
        "The exact projection of reliability weights.",
    )
    assert method_options("toy-reliable") == ["power"]
    assert spec.options[0].default == 2.0  # from the solver's signature
    check_options("toy-reliable", {"power": 1.0})
    with pytest.raises(ValueError, match="power must be a positive number"):
        check_options("toy-reliable", {"power": 0.0})
    with pytest.raises(ValueError, match="unknown option"):
        check_options("toy-reliable", {"depth": 1})


def test_solve_runs_a_registered_method_with_its_options(toy):
    problem = _problem()
    result = solve(problem, method="toy-reliable", seed=0, power=1.0)
    assert toy.CALLS == [1.0]
    assert result.method == "toy-reliable"
    assert problem.is_feasible(result.assignment)
    assert result.n_assigned == 12  # the caps allow 12 pairs and the budget is 12
    # solve evaluates the method's assignment with the same exact accuracy as any other's.
    assert result.expected_accuracy == pytest.approx(
        solve_module.evaluate(problem, result.assignment)[0]
    )
    reference = solve(problem, method="random", seed=0)
    assert result.expected_accuracy > reference.expected_accuracy


def test_a_method_returning_a_method_output_keeps_its_message_and_details_in_the_result(toy):
    register_method(
        "toy-output",
        title="most reliable pairs, as a MethodOutput",
        description="The same projection, reported.",
        module="toy_reliable_method",
        solver="most_reliable_output",
        options="OPTIONS",
    )
    problem = _problem()
    reports = []
    result = solve(problem, method="toy-output", power=1.0, progress=lambda *a: reports.append(a))
    plain = solve(problem, method="toy-reliable", power=1.0)
    np.testing.assert_array_equal(result.assignment, plain.assignment)
    assert (result.message, result.details, result.iterations) == (
        "projected once",
        {"power": 1.0},
        1,
    )
    assert (plain.message, plain.details) == ("", {})
    assert reports[0] == (0.5, "projected")


def test_a_name_is_registered_once(toy):
    with pytest.raises(ValueError, match="already registered"):
        register_method(
            "greedy", title="", description="", module="toy_reliable_method", solver="x"
        )


def test_the_registry_is_as_it_was_after_the_toy():
    assert "toy-reliable" not in solve_module.METHODS
    with pytest.raises(ValueError, match="method must be one of"):
        method_spec("toy-reliable")
