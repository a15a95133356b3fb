"""The benchmarks' helper modules are scripts beside each other, not a package: import them
as ``benchmarks/`` does."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2] / "benchmarks"))  # last: never shadows
