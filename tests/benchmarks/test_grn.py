"""benchmarks/grn.py checks the paper's ordering honestly and refuses bad options."""

import numpy as np
import pytest
from grn import METRICS, main, ordering_check, paper_table

AUC, MCC = METRICS.index("AUC"), METRICS.index("MCC")


def _results(tvcs_auc, baseline_auc):
    tvcs = np.full((3, len(METRICS)), 0.5)
    base = np.full((3, len(METRICS)), 0.4)
    tvcs[:, AUC], base[:, AUC] = tvcs_auc, baseline_auc
    return {"TVCS (GradMP)": tvcs, "PCC": base}


def test_the_ordering_holds_when_tvcs_leads_on_both_metrics():
    lines = ordering_check(_results([0.9, 0.8, 0.85], [0.6, 0.7, 0.65]))
    assert all("best: holds" in line for line in lines)
    auc_line = next(line for line in lines if "AUC" in line)
    assert "next PCC (0.650; paired difference +0.200 ± 0.100, TVCS ahead on 3 of 3)" in auc_line


def test_a_baseline_ahead_on_auc_is_named_with_its_paired_difference():
    lines = ordering_check(_results([0.6, 0.7, 0.8], [0.7, 0.8, 0.6]))
    auc_line = next(line for line in lines if "AUC" in line)
    assert "not best: PCC (0.700; paired difference +0.000" in auc_line
    assert "TVCS ahead on 1 of 3" in auc_line
    assert "best: holds" in next(line for line in lines if "MCC" in line)


def test_the_ordering_is_checked_on_the_binary_auc_too():
    results = _results([0.9, 0.8, 0.85], [0.6, 0.7, 0.65])
    results["PCC"][:, METRICS.index("AUC (binary)")] = 0.7  # TVCS has 0.5
    lines = ordering_check(results)
    binary = next(line for line in lines if "AUC (binary)" in line)
    assert binary.startswith("- TVCS (GradMP), AUC (binary) 0.500: not best: PCC (0.700;")
    assert len(lines) == 3


def test_the_paper_table_shows_that_only_the_tvcs_auc_is_that_of_a_binary_prediction():
    rows = {row.split(" | ")[0].strip("| "): row for row in paper_table()[2:]}
    assert rows["Our Method (TVCS)"].endswith("| 0.7136 ± 0.0306 | 0.7136 |")
    assert rows["GENIE3"].endswith("| 0.5662 ± 0.0244 | 0.5298 |")
    assert len(rows) == 7


def test_the_area_row_runs_one_to_five_regulators_per_target():
    from grn import AREA_LEVELS, MAX_REGULATORS

    assert [round(c * MAX_REGULATORS, 9) for c in AREA_LEVELS] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["--networks", "1"], "--networks"),
        (["--skip", "LASSO"], "--skip"),
        (["--tigress-runs", "0"], "--tigress-runs"),
        (["--stability-runs", "0"], "--stability-runs"),
        (["--area-runs", "0"], "--area-runs"),
        (["--mi-estimator", "ksg"], "--mi-estimator"),
    ],
)
def test_bad_options_are_refused_naming_them(argv, name, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert name in capsys.readouterr().err


def test_aracne_predicts_only_the_pairs_its_pruning_keeps():
    from grn import METHODS

    rng = np.random.default_rng(0)
    series = rng.standard_normal((2, 20, 6))
    edges, scores, loss = METHODS["ARACNE"](series, 25)
    assert loss is None
    assert edges.sum() < 25  # the pruning left fewer than 25 pairs
    assert np.all(scores[edges] > 0)
