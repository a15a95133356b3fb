"""No test module imports another (issue 14): what tests share lives in helper modules
(``engine_problems.py``, ``confusion_problems.py``, ``project_data.py``, conftest fixtures), so
running or changing one test file never runs or breaks another's tests.

The check reads every file under ``tests/`` with ``ast`` and fails on an import of a module
named ``test_*``, however it is spelled (``import test_x``, ``from test_x import ...``,
``from tests.a.test_x import ...``).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_test_modules(source: str) -> list[str]:
    """The ``test_*`` modules that ``source`` imports."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom):  # from . import test_x / from .test_x import y
            names = [node.module or ""] + [alias.name for alias in node.names]
        else:
            continue
        found += [n for n in names if n and n.rsplit(".", 1)[-1].startswith("test_")]
    return found


def test_the_check_finds_each_spelling_of_a_test_module_import():
    source = (
        "import numpy\nimport test_a\nfrom test_b import x\nfrom tests.c.test_d import y\n"
        "from . import test_e\nfrom engine_problems import test_like_name_is_not_a_module\n"
    )
    assert imported_test_modules(source) == ["test_a", "test_b", "tests.c.test_d", "test_e"]


def test_no_test_module_imports_another():
    offenders = {
        path.relative_to(TESTS).as_posix(): names
        for path in sorted(TESTS.rglob("*.py"))
        if (names := imported_test_modules(path.read_text(encoding="utf-8")))
    }
    assert not offenders, f"move what they share into a helper module: {offenders}"
