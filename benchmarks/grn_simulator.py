"""Small gene regulatory networks with hub regulators and noisy time series (a data generator).

Stands in for GeneNetWeaver's 30-gene DREAM subnetworks with 10% noise (Yang et al., ICML 2017,
section 5.3), which cannot be downloaded here. What is simulated, exactly:

* **Network.** ``n_genes`` genes; ``n_hubs`` hub regulators, each regulating
  ``hub_targets`` genes drawn at random (never itself), then ``n_extra`` further edges between
  random distinct genes, every gene keeping at most ``max_regulators`` regulators. Edge
  weights are ``±U(0.4, 0.8)`` with random signs. ``W[i, j] != 0`` means gene ``j`` regulates
  gene ``i`` (rows are targets, columns regulators).
* **Dynamics.** A stable linear system ``x_{t+1} = P x_t + e_t`` with
  ``P = decay * I + c * W``, ``c <= 1`` the largest factor keeping the spectral radius of
  ``P`` at most ``spectral_radius`` (< 1), and process noise ``e_t ~ N(0, process_noise^2 I)``.
* **Experiments.** ``n_series`` time series of ``n_times`` points each, from independent
  random initial states ``x_1 ~ N(0, I)``.
* **Measurement noise.** Each observed value is the true one plus Gaussian noise whose standard
  deviation is ``noise`` (0.1 = 10%) times that gene's standard deviation over all clean time
  points.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

__all__ = ["GRNData", "simulate_grn"]


@dataclass(frozen=True)
class GRNData:
    """A simulated network and its observed time series.

    Attributes
    ----------
    weights : ndarray, shape (n_genes, n_genes)
        The true regulation weights ``c * W`` (zero diagonal): ``weights[i, j]`` is the effect
        of gene ``j`` at time ``t`` on gene ``i`` at ``t + 1``.
    transition : ndarray, shape (n_genes, n_genes)
        ``P = decay * I + weights``.
    clean : ndarray, shape (n_series, n_times, n_genes)
        The noiseless expression levels.
    series : ndarray, shape (n_series, n_times, n_genes)
        The observed levels, ``clean`` plus the measurement noise.
    hubs : ndarray of int, shape (n_hubs,)
        The hub regulators.
    """

    weights: np.ndarray
    transition: np.ndarray
    clean: np.ndarray
    series: np.ndarray
    hubs: np.ndarray

    @property
    def edges(self) -> np.ndarray:
        """The true edges, boolean of shape ``(n_genes, n_genes)``."""
        return self.weights != 0


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_float(value, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not low <= value < high:
        raise ValueError(f"{name} must be a number in [{low}, {high}), got {value!r}")
    return float(value)


def _network(rng, n_genes, n_hubs, hub_targets, n_extra, max_regulators) -> tuple:
    """Boolean edges (rows targets, columns regulators) and the hubs."""
    edges = np.zeros((n_genes, n_genes), dtype=bool)
    hubs = rng.choice(n_genes, size=n_hubs, replace=False)
    for hub in hubs:
        free = np.flatnonzero((edges.sum(axis=1) < max_regulators) & (np.arange(n_genes) != hub))
        if free.size < hub_targets:
            raise ValueError("hub_targets is too large for n_genes and max_regulators")
        edges[rng.choice(free, size=hub_targets, replace=False), hub] = True
    added, attempts = 0, 0
    while added < n_extra and attempts < 100 * (n_extra + 1):
        attempts += 1
        i, j = rng.choice(n_genes, size=2, replace=False)
        if not edges[i, j] and edges[i].sum() < max_regulators:
            edges[i, j] = True
            added += 1
    return edges, np.sort(hubs)


def simulate_grn(
    n_genes: int = 30,
    *,
    n_hubs: int = 3,
    hub_targets: int = 6,
    n_extra: int = 12,
    max_regulators: int = 3,
    n_series: int = 10,
    n_times: int = 21,
    decay: float = 0.5,
    spectral_radius: float = 0.9,
    process_noise: float = 0.1,
    noise: float = 0.1,
    rng=None,
) -> GRNData:
    """Simulate a hub-structured network and ``n_series`` noisy time series of it.

    Parameters
    ----------
    n_genes, n_hubs, hub_targets, n_extra, max_regulators : int
        Network size and shape (see the module docstring).
    n_series, n_times : int
        Number of time series and of time points per series (``n_times >= 2``).
    decay : float in [0, 1)
        Self-persistence on the diagonal of ``P``.
    spectral_radius : float in (0, 1)
        Bound on the spectral radius of ``P`` (the weights are scaled down when above it).
    process_noise : float >= 0
        Standard deviation of the dynamics' noise ``e_t``.
    noise : float >= 0
        Measurement noise as a fraction of each gene's clean standard deviation.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    GRNData
    """
    n_genes = _check_int(n_genes, "n_genes", 2)
    n_hubs = _check_int(n_hubs, "n_hubs", 0)
    hub_targets = _check_int(hub_targets, "hub_targets", 1)
    n_extra = _check_int(n_extra, "n_extra", 0)
    max_regulators = _check_int(max_regulators, "max_regulators", 1)
    n_series = _check_int(n_series, "n_series", 1)
    n_times = _check_int(n_times, "n_times", 2)
    decay = _check_float(decay, "decay", 0.0, 1.0)
    spectral_radius = _check_float(spectral_radius, "spectral_radius", 1e-9, 1.0)
    process_noise = _check_float(process_noise, "process_noise", 0.0, np.inf)
    noise = _check_float(noise, "noise", 0.0, np.inf)
    if n_hubs > n_genes:
        raise ValueError(f"n_hubs must be at most n_genes = {n_genes}, got {n_hubs}")
    if decay >= spectral_radius:
        raise ValueError(f"decay must be below spectral_radius, got {decay} >= {spectral_radius}")
    rng = np.random.default_rng(rng)
    edges, hubs = _network(rng, n_genes, n_hubs, hub_targets, n_extra, max_regulators)
    raw = edges * rng.uniform(0.4, 0.8, edges.shape) * rng.choice([-1.0, 1.0], edges.shape)
    weights = _scale_to_radius(raw, decay, spectral_radius)
    transition = decay * np.eye(n_genes) + weights
    clean = np.empty((n_series, n_times, n_genes))
    clean[:, 0] = rng.standard_normal((n_series, n_genes))
    for t in range(1, n_times):
        shock = process_noise * rng.standard_normal((n_series, n_genes))
        clean[:, t] = clean[:, t - 1] @ transition.T + shock
    sd = clean.reshape(-1, n_genes).std(axis=0)
    series = clean + noise * sd * rng.standard_normal(clean.shape)
    return GRNData(weights, transition, clean, series, hubs)


def _scale_to_radius(raw: np.ndarray, decay: float, radius: float) -> np.ndarray:
    """``c * raw``, ``c <= 1`` the largest with ``rho(decay I + c raw) <= radius`` (bisection)."""
    n = raw.shape[0]

    def rho(c: float) -> float:
        return float(np.max(np.abs(np.linalg.eigvals(decay * np.eye(n) + c * raw))))

    if rho(1.0) <= radius:  # e.g. an acyclic network: P's eigenvalues are all ``decay``
        return raw.copy()
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if rho(mid) < radius else (low, mid)
    return low * raw
