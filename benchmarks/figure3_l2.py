"""Issue 15, Figure 3: is exclusive LASSO's test-error lead over TVCS the weights or the support?

On Figure 3's instances (``figure3.generate``, the same seeds), for each trial:

* the Figure 3 methods as published: IHT and GradMP with the TVCS caps (default options),
  exclusive LASSO over rows and columns with ``lam`` validated (``figure2``);
* the same solvers on the squared hinge with a ridge term ``(l2 / 2) ||w||^2``
  (``SquaredHinge(..., l2=...)``), ``l2`` chosen on the validation split exclusive LASSO
  uses for ``lam`` (the first draw of ``np.random.default_rng([seed, n, t, 1])``): fitted on
  80% of the training samples for every value of :data:`L2_GRID`, rated by the unpenalised
  loss of the projected fit on the other 20%, refitted on all n (ties go to the smaller
  ``l2``; the grid holds 0, so the unpenalised fit is always a candidate);
* support swaps: a fixed support refitted, unpenalised or with a validated ``l2`` (the same
  rule), on IHT-TVCS's support and on exclusive LASSO's; each method's weights restricted to
  the other's support; and, as an oracle reference only, the true support refitted with a
  validated ``l2``.

Nothing is chosen with the test samples or (except the labelled oracle) the true support.
Metrics: the error on the :data:`figure3.N_TEST` test samples, and the expected error
``angle(w, w_true) / pi``, exact for the isotropic Gaussian features (no test-sample noise);
paired differences against IHT-TVCS, mean ± standard error over trials.

Run::

    nice -n 10 python benchmarks/figure3_l2.py --trials 30 --ns 500 700 800 \\
        --out docs/benchmarks/figure3-l2.md
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figure2 import (  # noqa: E402
    _best_iterate,
    _fit_exclusive_lasso,
    header,
    validation_split,
    write_report,
)
from figure3 import error_rate, generate  # noqa: E402

from projections.solvers import SquaredHinge, gradmp, iht, tvcs_projection  # noqa: E402

logger = logging.getLogger("figure3_l2")

#: Ridge weights tried on the validation split, increasing from 0 (the unpenalised fit).
L2_GRID = (0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)
BASE = "iht tvcs"
VARIANTS = (
    "iht tvcs",
    "gradmp tvcs",
    "exclusive lasso",
    "iht tvcs, l2 validated",
    "gradmp tvcs, l2 validated",
    "iht support, unpenalised refit",
    "iht support, l2 refit",
    "exclusive lasso support, unpenalised refit",
    "exclusive lasso support, l2 refit",
    "iht weights on exclusive lasso support",
    "exclusive lasso weights on iht support",
    "oracle: true support, l2 refit",
)
#: The variants whose ``l2`` is validated, with the name their choice is kept under.
VALIDATED = {
    "iht tvcs, l2 validated": "iht",
    "gradmp tvcs, l2 validated": "gradmp",
    "iht support, l2 refit": "iht support",
    "exclusive lasso support, l2 refit": "exclusive lasso support",
    "oracle: true support, l2 refit": "true support",
}


def expected_error(w: np.ndarray, w_true: np.ndarray) -> float:
    """``P(sign <X, w> != sign <X, w_true>) = angle(w, w_true) / pi`` for Gaussian ``X``.

    Parameters
    ----------
    w, w_true : ndarray, shape (20, 20)

    Returns
    -------
    float
        ``arccos(<w, w_true> / (||w|| ||w_true||)) / pi``; 0.5 when ``w = 0``.
    """
    norm = float(np.linalg.norm(w) * np.linalg.norm(w_true))
    if norm == 0.0:
        return 0.5
    return float(np.arccos(np.clip(np.vdot(w, w_true) / norm, -1.0, 1.0)) / np.pi)


def refit_on_support(A, y, support, l2: float, w0=None) -> np.ndarray:
    """``argmin SquaredHinge(A, y, l2=l2)`` over ``w`` zero off ``support`` (L-BFGS).

    ``A`` (n, 20, 20), ``y`` (n,), ``support`` bool (20, 20), ``w0`` a start (zeros if None).
    Returns ``w`` of shape (20, 20).
    """
    mask = np.asarray(support, dtype=bool)
    loss = SquaredHinge(A.reshape(A.shape[0], -1)[:, mask.reshape(-1)], y, l2=l2)
    start = np.zeros(int(mask.sum())) if w0 is None else np.asarray(w0)[mask]
    v = minimize(
        lambda z: (loss.value(z), loss.gradient(z)),
        start,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "gtol": 1e-10},
    ).x
    w = np.zeros(mask.shape)
    w[mask] = v
    return w


def choose_l2(fit, A, y, rng: np.random.Generator, grid=L2_GRID) -> tuple[float, list]:
    """The ``l2`` of ``grid`` whose fit on 80% of the samples has the smallest unpenalised
    validation loss on the other 20% (``figure2.validation_split(n, rng)``).

    ``fit(A, y, l2) -> w`` returns projected weights. Returns ``(l2, scores)``; ties go to
    the earlier (smaller) value.
    """
    val, keep = validation_split(A.shape[0], rng)
    val_loss = SquaredHinge(A[val], y[val])
    scores = [val_loss.value(fit(A[keep], y[keep], l2)) for l2 in grid]
    return grid[int(np.argmin(scores))], scores


def _validated(fit, A, y, split_seed, unpenalised=None) -> tuple[np.ndarray, float]:
    """``fit`` refitted on all samples with :func:`choose_l2`'s value (``unpenalised``, the
    fit with ``l2 = 0`` on all samples, reused when 0 is chosen)."""
    l2, _ = choose_l2(fit, A, y, np.random.default_rng(split_seed))
    if l2 == 0.0 and unpenalised is not None:
        return unpenalised, l2
    return fit(A, y, l2), l2


def trial_fits(n: int, t: int, seed: int) -> tuple[dict, dict, tuple]:
    """Every variant of :data:`VARIANTS` on trial ``t`` of Figure 3 at ``n``.

    Returns ``(fits, chosen, data)``: ``{variant: w}``, ``{name: l2}`` and
    ``(A_test, y_test, w_true, train_loss_of_iht)``.
    """
    A, y, A_test, y_test, w_true, structure = generate(n, t, seed)
    proj = tvcs_projection(structure)
    split = [seed, n, t, 1]

    def solver_fit(name):
        if name == "iht":
            return lambda a, b, l2: proj(iht(SquaredHinge(a, b, l2=l2), proj).solution).x
        return lambda a, b, l2: proj(_best_iterate(gradmp, SquaredHinge(a, b, l2=l2), proj, {})).x

    fits, chosen = {}, {}
    for s in ("iht", "gradmp"):
        fits[f"{s} tvcs"] = solver_fit(s)(A, y, 0.0)
        fits[f"{s} tvcs, l2 validated"], chosen[s] = _validated(
            solver_fit(s), A, y, split, fits[f"{s} tvcs"]
        )
    w_el, _ = _fit_exclusive_lasso(SquaredHinge, A, y, structure, np.random.default_rng(split))
    fits["exclusive lasso"] = w_el = proj(w_el).x
    w_iht = fits["iht tvcs"]
    supports = {"iht support": w_iht, "exclusive lasso support": w_el, "true support": w_true}
    for name, w in supports.items():
        if name != "true support":
            fits[f"{name}, unpenalised refit"] = refit_on_support(A, y, w != 0, 0.0, w)
        key = f"{name}, l2 refit" if name != "true support" else "oracle: true support, l2 refit"
        fits[key], chosen[name] = _validated(
            lambda a, b, l2, m=w != 0: refit_on_support(a, b, m, l2), A, y, split
        )
    fits["iht weights on exclusive lasso support"] = np.where(w_el != 0, w_iht, 0.0)
    fits["exclusive lasso weights on iht support"] = np.where(w_iht != 0, w_el, 0.0)
    return fits, chosen, (A_test, y_test, w_true, SquaredHinge(A, y).value(w_iht))


def run(ns, trials: int, seed: int) -> list[dict]:
    """One record per (n, trial): each variant's scores, the chosen ``l2`` values, sizes."""
    records = []
    for n in ns:
        for t in range(trials):
            fits, chosen, (A_test, y_test, w_true, train) = trial_fits(n, t, seed)
            rec = {"n": n, "t": t, "chosen": chosen, "iht_train_loss": train}
            for name, w in fits.items():
                rec[name] = {
                    "test_error": error_rate(w, A_test, y_test),
                    "expected_error": expected_error(w, w_true),
                    "recall": float(((w != 0) & (w_true != 0)).sum() / (w_true != 0).sum()),
                    "norm": float(np.linalg.norm(w)),
                    "size": int((w != 0).sum()),
                }
            records.append(rec)
        logger.info("n=%d done", n)
    return records


def _paired(records, name, key) -> str:
    d = np.array([r[name][key] - r[BASE][key] for r in records])
    if len(d) < 2:
        return f"{d.mean():+.4f}"
    return f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(len(d)):.4f}"


def report_tables(records, ns) -> list[str]:
    """A table per n: means and paired differences against IHT-TVCS, then the chosen l2."""
    out = []
    for n in ns:
        rec = [r for r in records if r["n"] == n]
        out += [
            f"## n = {n} ({len(rec)} trials)",
            "",
            "| variant | test error | expected error | recall | norm | test error - iht tvcs "
            "| expected error - iht tvcs |",
            "|---|---|---|---|---|---|---|",
        ]
        for name in VARIANTS:
            m = {k: np.mean([r[name][k] for r in rec]) for k in rec[0][name]}
            out.append(
                f"| {name} | {m['test_error']:.4f} | {m['expected_error']:.4f} | "
                f"{m['recall']:.3f} | {m['norm']:.2f} | {_paired(rec, name, 'test_error')} | "
                f"{_paired(rec, name, 'expected_error')} |"
            )
        counts = {k: Counter(r["chosen"][k] for r in rec) for k in rec[0]["chosen"]}
        out += [
            "",
            "l2 chosen (value: trials): "
            + "; ".join(
                f"{k}: " + ", ".join(f"{v:g}: {c[v]}" for v in L2_GRID if v in c)
                for k, c in counts.items()
            ),
            "",
            f"IHT-TVCS's training loss, largest over trials: "
            f"{max(r['iht_train_loss'] for r in rec):.2e}",
            "",
        ]
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ns", type=int, nargs="+", default=[500, 700, 800])
    parser.add_argument("--out", type=Path, help="markdown report")
    parser.add_argument("--json", type=Path, help="the per-trial records")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("projections").setLevel(logging.WARNING)
    start = time.perf_counter()
    records = run(args.ns, args.trials, args.seed)
    command = "python benchmarks/figure3_l2.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    title = "Figure 3, issue 15: weights or support? (validated ridge l2 against exclusive LASSO)"
    text = "\n".join(
        [
            *header(title, command.strip(), time.perf_counter() - start, args.trials),
            f"l2 grid: {', '.join(f'{v:g}' for v in L2_GRID)}.",
            "",
            *report_tables(records, args.ns),
        ]
    )
    print(text)
    if args.json:
        args.json.write_text(json.dumps(records))
    if args.out:
        write_report(args.out, text)


if __name__ == "__main__":
    main()
