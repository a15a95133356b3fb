"""Planted TVCS-sparse problems shared by the solver tests (Yang et al., ICML 2017, §5.1)."""

from dataclasses import dataclass

import numpy as np
import pytest

from projections import TVCSStructure
from projections.solvers import tvcs_projection
from projections.tvcs import project


@dataclass(frozen=True)
class Planted:
    structure: TVCSStructure
    w_true: np.ndarray  # shape (10, 10)
    A: np.ndarray  # shape (n_samples, 10, 10)
    y: np.ndarray  # <A_i, w_true>, noiseless
    labels: np.ndarray  # sign(<A_i, w_true>)

    @property
    def projection(self):
        return tvcs_projection(self.structure, method="exact")


def make_planted(seed: int, n_samples: int) -> Planted:
    """A 10 x 10 model with 2-3 entries per row and column and 15 in all, as in §5.1.

    The support is the exact projection of a random matrix (so it is feasible and maximal);
    the values are ``±(0.5 + |N(0, 1)|)``, bounded away from zero so that the support is
    identifiable. ``A`` is an i.i.d. Gaussian design.
    """
    rng = np.random.default_rng(seed)
    structure = TVCSStructure.from_matrix(
        (10, 10),
        max_per_row=rng.integers(2, 4, size=10),
        max_per_col=rng.integers(2, 4, size=10),
        total=15,
    )
    support = project(rng.standard_normal((10, 10)), structure, method="exact").support
    values = rng.choice([-1.0, 1.0], size=(10, 10)) * (0.5 + np.abs(rng.standard_normal((10, 10))))
    w_true = np.where(support, values, 0.0)
    A = rng.standard_normal((n_samples, 10, 10))
    y = np.einsum("nij,ij->n", A, w_true)
    return Planted(structure, w_true, A, y, np.where(y >= 0, 1.0, -1.0))


@pytest.fixture(scope="module")
def planted() -> Planted:
    """Noiseless least-squares instance with enough samples (120 for 15 non-zeros of 100)."""
    return make_planted(seed=7, n_samples=120)


@pytest.fixture(scope="module")
def planted_classification() -> Planted:
    """The same kind of model with 300 samples, used with labels ``sign(<A_i, w_true>)``."""
    return make_planted(seed=11, n_samples=300)
