"""tvcs-iht's steps written out plainly, as the engine ran them before they moved onto
:func:`projections.solvers.stochastic_iht` (issue 14), with the later steps' narrower search
(``FOLLOW_UP_PAIRS``): the reference the loop is compared with (not a test module)."""

from __future__ import annotations

import numpy as np

from assignment.engine._problem_accuracy import accuracy_of as exact_accuracy
from assignment.engine._sampled_votes import clip_to_support
from assignment.engine.search_pairs import search_pairs
from assignment.engine.surrogate import Surrogate
from assignment.engine.surrogate_multiclass import MulticlassSurrogate
from assignment.engine.tvcs_iht import FOLLOW_UP_PAIRS
from projections.tvcs import project


def reference_steps(problem, start, start_acc, *, rng, options):
    """``(best, best_acc, t, history, stop)`` of the steps from ``start``; ``stop`` is
    ``"patience"`` or ``"max_iter"``."""
    max_iter, step, eval_every, patience, min_improvement = (
        options[k] for k in ("max_iter", "step", "eval_every", "patience", "min_improvement")
    )
    pairs = search_pairs(problem, start)
    oracle = (Surrogate if problem.n_labels == 2 else MulticlassSurrogate)(
        problem, pairs=pairs, temperature=options["temperature"], batch_size=options["batch_size"]
    )
    x, warm = pairs.restrict(start).astype(np.float64), None
    follow_up, searched = FOLLOW_UP_PAIRS * problem.budget, None
    best, best_acc, history, stale = start, start_acc, [(0, start_acc)], 0
    t = 0
    for t in range(1, max_iter + 1):
        _, y, projection_input = oracle.step(x, rng, step / np.sqrt(1.0 + t / 10.0))
        if searched is None:  # the first step: every pair; keep its follow_up largest inputs
            ranked = np.sort(projection_input)[::-1]
            threshold = ranked[min(follow_up, ranked.size) - 1]
            searched = ((projection_input >= threshold) & (projection_input > 0)) | (x > 0)
        else:  # later steps: those, the start's pairs and the current support
            projection_input = np.where(searched | (x > 0), projection_input, 0.0)
        res = project(projection_input, pairs.structure, warm_start=warm)
        warm = res.warm_start
        x = clip_to_support(y, res.support)
        if t % eval_every == 0 or t == max_iter:
            support = pairs.expand(res.support)
            acc = exact_accuracy(problem, support)
            history.append((t, acc))
            stale = 0 if acc > best_acc + min_improvement else stale + 1
            if acc > best_acc:
                best, best_acc = support, acc
        if stale >= patience and t < max_iter:
            return best, best_acc, t, history, "patience"
    return best, best_acc, t, history, "max_iter"
