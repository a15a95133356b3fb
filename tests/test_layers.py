"""Dependencies point one way: projections <- assignment.engine <- the Django app."""

from __future__ import annotations

import subprocess
import sys


def imported_modules(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_projections_imports_neither_django_nor_the_rest_of_the_project():
    modules = imported_modules("projections.tvcs, projections.solvers, projections.cardinality")
    assert not any(m == "django" or m.startswith("django.") for m in modules)
    assert not any(m == "assignment" or m.startswith("assignment.") for m in modules)


def test_the_engine_imports_no_django():
    modules = imported_modules("assignment.engine")
    assert not any(m == "django" or m.startswith("django.") for m in modules)
