"""The exact projection's tuning constants.

The other modules read them as ``levers.NAME`` when they run, so that a test can force one
(``monkeypatch.setattr(levers, "RELABELS", 0)``) and see the method stay optimal.
"""

#: Extra elements kept per group beyond its cap when building the candidate graph.
SLACK = 2
#: The candidate graph keeps elements at least as heavy as the lightest weight bin from which
#: the caps alone would still allow ``BUDGET_MARGIN * total`` elements.
BUDGET_MARGIN = 1.5
#: Weight bins per octave (a power of two, at most 2**52) and number of bins (at most 255:
#: a bin fits in a byte beside ``candidates.UNUSABLE``).
BINS_PER_OCTAVE = 8
N_BINS = 8 * 16 + 1
#: How often the 16-octave weight window may move down (heavy tails; see
#: :func:`projections._exact.candidates.cold_candidates`).
WINDOW_MOVES = 4
#: Coordinate-descent sweeps for the starting prices of a cold start, and the first phase's
#: ``eps`` as a fraction of the largest cost (a warm start whose flow is further from optimal
#: than that starts cold).
SWEEPS = 2
START = 1024
#: Before the first phase, the non-candidates with reduced cost below ``AHEAD * eps`` at the
#: starting prices join the candidate graph.
AHEAD = 0.5
#: A refine gives up after ``RELABELS * n_nodes`` relabels and resumes at a larger eps (and
#: the allowance doubles, so that scaling always ends).
RELABELS = 64
#: Cost-scaling factor between phases.
ALPHA = 16
#: The certificate pass keeps the non-candidates with reduced cost below ``POOL * eps`` in a
#: pool, and later passes scan only the pool, as long as prices have not moved too far; no
#: pool while ``POOL * eps`` exceeds ``max cost / POOL_WINDOW`` (it would hold most elements).
POOL = 16
POOL_WINDOW = 64
#: A certificate pass adds at most ``ADMIT * (candidates + nodes)`` violators, the worst.
ADMIT = 1.0
#: A refine at ``eps`` works on the arcs whose residual reduced cost is below ``ACTIVE * eps``.
ACTIVE = 8
