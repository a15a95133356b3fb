"""The atom sets of :mod:`~projections.solvers.conditional_gradient`: the iterate's atom
decomposition and the linear minimisation oracle over ``tau`` times the atoms.

* :class:`GroupAtoms` — the latent overlapping group norm (Jacob, Obozinski & Vert, ICML
  2009): atoms are the unit-l2 vectors supported on one whole group ``G_g``.
* :class:`SparseGroupAtoms` — the sparse overlapping groups (SoG) norm: atoms are the unit-l2
  vectors supported on at most ``per_group`` coordinates of one group, the atoms CoGEnT uses
  for the SoG experiment of Jain, Rao & Dhillon (NIPS 2016, section 5, Figure 2), after the
  sparse overlapping sets of Rao, Cox, Nowak & Rogers (NIPS 2013). Restricted to one group,
  their gauge is the k-support norm (Argyriou, Foygel & Srebro, NIPS 2012), whose dual is the
  l2 norm of the ``k`` largest magnitudes.

Both keep the iterate as *slots*: ``latent[key]`` is a vector on the coordinates
``members(key)``, and every slot is a non-negative multiple of one atom, so ``w = sum_key
latent[key]`` with ``sum_key ||latent[key]|| <= tau`` certifies ``||w||_atoms <= tau``.
"""

from __future__ import annotations

import numpy as np

from projections.groups import OverlappingGroups


class GroupAtoms:
    """Whole-group atoms: one slot per group used, keyed by the group's index.

    Atoms of the same group are merged into its slot ``v_g``: a sum of atoms on ``G_g`` with
    weights ``c_i`` is supported on ``G_g`` and has norm at most ``sum c_i``, so it is
    ``||v_g||`` times an atom and merging never loosens the bound.
    """

    def __init__(self, groups: OverlappingGroups, tau: float) -> None:
        self.groups, self.tau = groups, tau
        self.latent: dict = {}

    def members(self, key) -> np.ndarray:
        """The coordinates, shape ``(|G_g|,)``, of slot ``key``."""
        return self.groups.members[key]

    def bound(self) -> float:
        """``sum_key ||latent[key]||``, an upper bound on the atomic norm of the iterate."""
        return float(sum(np.linalg.norm(v) for v in self.latent.values()))

    def compose(self, shape) -> np.ndarray:
        """``w = sum_key latent[key]``, shape ``shape``."""
        w = np.zeros(self.groups.n_features)
        for key, v in self.latent.items():
            w[self.members(key)] += v
        return w.reshape(shape)

    def oracle(self, grad: np.ndarray) -> tuple:
        """``(g*, s, ||grad_{G_g*}||)``: the atom ``s = -tau grad_G / ||grad_G||`` on the group
        with the largest gradient norm (the minimiser of ``<grad, s>`` over the ``tau``-ball;
        ``s = 0`` when the gradient is zero). Ties go to the lower group index."""
        flat = grad.reshape(-1)
        norms = np.sqrt(self.groups.incidence @ np.square(flat))
        best = int(np.argmax(norms))
        s = np.zeros(flat.size)
        if norms[best] > 0:
            members = self.groups.members[best]
            s[members] = -self.tau * flat[members] / norms[best]
        return best, s.reshape(grad.shape), float(norms[best])

    def toward(self, key, s: np.ndarray, gamma: float) -> None:
        """``w <- (1 - gamma) w + gamma s`` for the oracle's atom ``s`` in slot ``key``."""
        for h in self.latent:
            self.latent[h] = (1.0 - gamma) * self.latent[h]
        part = gamma * s.reshape(-1)[self.members(key)]
        self.latent[key] = self.latent.get(key, 0.0) + part

    def drop_zeros(self) -> None:
        self.latent = {key: v for key, v in self.latent.items() if np.any(v)}

    def sharing(self, keys: list) -> float:
        """The most slots among ``keys`` holding one coordinate: the squared operator norm of
        ``(v_key) -> sum_key v_key``."""
        return np.asarray(self.groups.incidence[keys].sum(axis=0)).max()

    def describe(self) -> str:
        return ""


class SparseGroupAtoms(GroupAtoms):
    """SoG atoms: unit-l2 vectors on at most ``per_group`` coordinates of one group.

    A slot is keyed by ``(g, coordinates)``, the atom's group and its sorted support
    (``len(coordinates) <= per_group``). Atoms with the same support share a slot: their sum
    is a multiple of one atom of that support, with norm at most the sum of their weights.
    Atoms of one group with *different* supports are kept in separate slots: their sum may have
    more than ``per_group`` non-zeros, and its l2 norm is then only a lower bound on its cost
    (the k-support norm is at least the l2 norm), so merging them could hide an infeasible
    iterate. The enhancement of :func:`~projections.solvers.cogent` moves each slot on its own
    support, so it stays a multiple of one atom.

    Parameters
    ----------
    groups : OverlappingGroups
    tau : float
        Radius ``> 0``.
    per_group : int
        ``>= 1``; at least the largest group's size gives the whole-group atoms (in other
        slots' keys).
    """

    def __init__(self, groups: OverlappingGroups, tau: float, per_group: int) -> None:
        super().__init__(groups, tau)
        self.per_group = per_group
        width = max(m.size for m in groups.members)
        # members padded with the index p, which reads a magnitude 0 appended to |grad|
        self.table = np.full((groups.n_groups, width), groups.n_features, dtype=np.int64)
        for g, m in enumerate(groups.members):
            self.table[g, : m.size] = m
        self.index: dict = {}

    def members(self, key) -> np.ndarray:
        return self.index[key]

    def oracle(self, grad: np.ndarray) -> tuple:
        """``((g*, coordinates), s, score)``: each group's score is the l2 norm of its
        ``per_group`` largest ``|grad|`` (ties to the lower coordinate); on the group with the
        largest score (ties to the lower index), ``s = -tau grad_S / ||grad_S||`` on those
        coordinates ``S`` (the non-zero ones; ``s = 0`` when the gradient is zero there). The
        score is the dual SoG norm of ``grad`` and ``<grad, s> = -tau score`` is the minimum
        over ``tau`` times the atoms."""
        flat = grad.reshape(-1)
        magnitudes = np.append(np.abs(flat), 0.0)[self.table]
        order = np.argsort(-magnitudes, axis=1, kind="stable")[:, : self.per_group]
        top = np.take_along_axis(magnitudes, order, axis=1)
        norms = np.sqrt(np.einsum("ij,ij->i", top, top))
        best = int(np.argmax(norms))
        chosen = np.sort(self.table[best, order[best]][top[best] > 0])
        s = np.zeros(flat.size)
        if norms[best] > 0:
            s[chosen] = -self.tau * flat[chosen] / norms[best]
        key = (best, tuple(chosen.tolist()))
        self.index.setdefault(key, chosen)
        return key, s.reshape(grad.shape), float(norms[best])

    def drop_zeros(self) -> None:
        super().drop_zeros()
        self.index = {key: self.index[key] for key in self.latent}

    def sharing(self, keys: list) -> float:
        if not keys:
            return 1.0
        return float(np.bincount(np.concatenate([self.index[k] for k in keys])).max())

    def describe(self) -> str:
        return f", SoG atoms of at most {self.per_group} coordinates"
