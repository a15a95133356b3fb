"""Why Figure 2's exact-recovery rate stays below 1 at n = 400: which true entries IHT misses.

For each trial of ``benchmarks/figure2.py``'s generator at one ``n``, runs IHT with the TVCS
projection (as Figure 2 does) and prints the smallest true magnitude and the magnitudes of the
true entries the solution misses. Run::

    nice -n 10 python benchmarks/figure2_misses.py --n 400 --trials 15
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figure2 import generate

from projections.solvers import LeastSquares, iht, tvcs_projection


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("| trial | non-zeros | smallest true abs(w) | missed true abs(w) |")
    print("|---|---|---|---|")
    for t in range(args.trials):
        A, y, w_true, structure = generate(args.n, t, args.seed)
        w = iht(LeastSquares(A, y), tvcs_projection(structure)).solution
        missed = np.abs(w_true[(w_true != 0) & (w == 0)])
        smallest = np.abs(w_true[w_true != 0]).min()
        print(
            f"| {t} | {int((w_true != 0).sum())} | {smallest:.4f} | "
            + (", ".join(f"{m:.4f}" for m in missed) or "none (exact)")
            + " |"
        )


if __name__ == "__main__":
    main()
