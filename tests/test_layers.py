"""Dependencies point one way: projections <- assignment.engine <- the Django app.

Every module of both packages is imported (found by walking the packages, so a new module is
covered the day it is added) in one fresh interpreter, and the modules loaded afterwards must
include nothing of Django and nothing of the app (docs/design.md#layers).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# One interpreter: walk the packages, import every module (``__main__`` runs a command line,
# so it is left out), and report what was imported and what was loaded as a result.
_WALK_AND_IMPORT = """
import importlib, json, pkgutil, sys
walked = []
for name in sys.argv[1:]:
    package = importlib.import_module(name)
    walked.append(name)
    for info in pkgutil.walk_packages(package.__path__, prefix=name + "."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        importlib.import_module(info.name)
        walked.append(info.name)
print(json.dumps({"walked": walked, "loaded": sorted(sys.modules)}))
"""


def _walk_and_import(*packages: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _WALK_AND_IMPORT, *packages],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.splitlines()[-1])


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.fixture(scope="module")
def projections_modules() -> dict:
    return _walk_and_import("projections")


@pytest.fixture(scope="module")
def engine_modules() -> dict:
    return _walk_and_import("assignment.engine")


def test_the_walk_finds_the_private_and_nested_modules(projections_modules, engine_modules):
    # Guards the walk itself: a walk that found only the package would pass everything below.
    assert {
        "projections._exact",
        "projections._exact.projection",
        "projections._mincostflow",
        "projections._mincostflow.scaling",
        "projections.solvers",
    } <= set(projections_modules["walked"])
    assert any(
        _within(m, "projections.solvers") and m != "projections.solvers"
        for m in projections_modules["walked"]
    )
    assert {"assignment.engine.solve", "assignment.engine._sampled_votes"} <= set(
        engine_modules["walked"]
    )


def test_projections_imports_neither_django_nor_the_rest_of_the_project(projections_modules):
    loaded = projections_modules["loaded"]
    assert not [m for m in loaded if _within(m, "django")]
    assert not [m for m in loaded if _within(m, "assignment")]
    assert not [m for m in loaded if _within(m, "frontend") or _within(m, "config")]


def test_the_engine_imports_no_django_and_nothing_of_the_app(engine_modules):
    loaded = engine_modules["loaded"]
    assert not [m for m in loaded if _within(m, "django") or _within(m, "celery")]
    app = [m for m in loaded if _within(m, "assignment") and not _within(m, "assignment.engine")]
    assert app == ["assignment"]  # the package itself, whose __init__ imports nothing
    assert not [m for m in loaded if _within(m, "frontend") or _within(m, "config")]


def test_a_django_import_in_the_engine_would_be_caught(tmp_path):
    # The check is only worth having if it can fail: a module in a walked package that imports
    # Django shows up in the loaded modules.
    package = tmp_path / "layered_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_deep.py").write_text("import django.conf\n")
    out = subprocess.run(
        [sys.executable, "-c", _WALK_AND_IMPORT, "layered_probe"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
    )
    loaded = json.loads(out.stdout.splitlines()[-1])["loaded"]
    assert "django.conf" in loaded
