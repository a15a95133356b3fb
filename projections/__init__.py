"""Structured-sparsity projections and the IHT-family solvers that use them.

This package is a library in its own right: it imports nothing from Django or from the rest
of tvcs-assign.
"""

from projections.result import ProjectionResult
from projections.structure import TVCSStructure

__all__ = ["ProjectionResult", "TVCSStructure"]
