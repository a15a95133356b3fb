"""benchmarks/overlapping_groups.py: ``--paper-scale`` runs the phase transition at the sizes of
Jain, Rao & Dhillon (NIPS 2016) and writes its own report; the default run keeps its options."""

import json

import numpy as np
import overlapping_groups as og
import pytest


def test_the_paper_scale_instance_has_the_papers_p_group_count_and_active_groups():
    X, y, w_true, groups, smax = og.instance(og.PAPER_PHASE, 1.0, 40, [0, 2, 1, 40, 0])
    assert groups.n_groups == 500
    assert groups.n_features == 500 * (15 - 5) + 5 == 5005
    assert X.shape == (40, 5005)
    assert y.shape == (40,)
    # every group has 5 coordinates of its own, so a group is wholly non-zero only when drawn
    active = [g for g, m in enumerate(groups.members) if np.all(w_true[m] != 0)]
    assert len(active) == 25
    assert np.array_equal(w_true != 0, groups.union(active))
    assert smax == 1.0


def test_the_ar1_covariance_reaches_the_papers_condition_numbers_at_its_p():
    for kappa in (50.0, 200.0):
        rho = og.ar1_rho(5005, kappa)
        assert 0 < rho < 1
        # sigma_max / sigma_min of rho^|i-j| tends to ((1 + rho) / (1 - rho))^2 as p grows
        assert ((1 + rho) / (1 - rho)) ** 2 == pytest.approx(kappa, rel=1e-3)


def test_the_wide_step_grid_never_ends_at_a_higher_training_loss():
    cfg = {"n_groups": 20, "size": 15, "overlap": 5, "active": 3}
    X, y, w_true, groups, smax = og.instance(cfg, 50.0, 120, [1, 2, 3])
    runs = {
        factors: og.run_iht(
            X, y, w_true, groups, 3, smax, fully_corrective=True, max_iter=30, factors=factors
        )[0]
        for factors in (og.STEP_FACTORS, og.WIDE_STEP_FACTORS)
    }
    assert set(og.STEP_FACTORS) < set(og.WIDE_STEP_FACTORS)
    assert runs[og.WIDE_STEP_FACTORS].objective <= runs[og.STEP_FACTORS].objective


def test_the_grid_table_puts_condition_numbers_in_columns_and_methods_in_each_cell():
    rows = {
        (k, n, m): [(0.0 if m == "GOMP" else 1.0, 0.1)]
        for k in (1.0, 200.0)
        for n in (500, 1000)
        for m in ("IHT", "GOMP")
    }
    table = og.grid_table(rows, (500, 1000), (1.0, 200.0), ("IHT", "GOMP"),
                          lambda r: f"{og.success_rate(r):.1f}")  # fmt: skip
    assert table[0] == "| n \\ κ (IHT / GOMP) | κ=1 | κ=200 |"
    assert table[2] == "| 500 | 0.0 / 1.0 | 0.0 / 1.0 |"
    assert len(table) == 4


def test_a_tiny_paper_scale_grid_runs_end_to_end(tmp_path):
    out = tmp_path / "paper.md"
    argv = ["--paper-scale", "--ns", "60", "80", "--kappas", "1", "10", "--trials", "1"]
    og.main([*argv, "--max-iter", "5", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "python benchmarks/overlapping_groups.py --paper-scale --ns 60 80" in text
    assert "| groups | M = 500 contiguous groups of 15" in text
    assert "M = 500 groups of 15, overlap 5, p = 5005" in text
    assert "| runs per point | 10 | 1 |" in text
    assert "not able to recover w* even once" in text
    assert "| n \\ κ (IHT / IHT-FC / IHT-FC wide / GOMP) | κ=1 | κ=10 |" in text
    assert (tmp_path / "paper_phase.png").stat().st_size > 0
    cells = json.loads((tmp_path / "paper.json").read_text(encoding="utf-8"))
    assert len(cells) == 2 * 2 * 4
    assert {c["method"] for c in cells} == set(og.PAPER_METHODS)
    assert all(len(c["errors"]) == 1 for c in cells)


def test_the_paper_scale_options_are_refused_without_the_preset(tmp_path):
    with pytest.raises(SystemExit):
        og.main(["--kappas", "50", "--out", str(tmp_path / "x.md")])


def test_the_paper_convergence_preset_has_figure_1s_sizes():
    c = og.PAPER_CONVERGENCE
    groups = og.OverlappingGroups.contiguous(c["n_groups"], c["size"], c["overlap"])
    assert groups.n_groups == 1000
    assert groups.n_features == 20005
    assert (c["active"], c["n"]) == (50, 5000)


def test_group_omp_reports_each_refit_to_its_callback():
    cfg = {"n_groups": 20, "size": 15, "overlap": 5, "active": 3}
    X, y, w_true, groups, _ = og.instance(cfg, 1.0, 150, [4, 5])
    seen = []
    w, _ = og.group_omp(X, y, groups, 3, callback=lambda w: seen.append(w.copy()))
    assert len(seen) == 3
    assert np.array_equal(seen[-1], w)
    trace = og.traced_gomp(X, y, w_true, groups, 3)
    assert len(trace) == 4
    assert trace[0][2] == 1.0
    assert [t for t, _, _ in trace] == sorted(t for t, _, _ in trace)
    assert trace[-1][1] < trace[0][1]


def test_a_small_convergence_run_writes_its_table_and_figure(tmp_path, monkeypatch):
    small = {"n_groups": 30, "size": 25, "overlap": 5, "active": 3, "n": 300}
    monkeypatch.setattr(og, "PAPER_CONVERGENCE", small)
    out = tmp_path / "conv.md"
    argv = ["--paper-scale", "--part", "convergence", "--max-iter", "20"]
    og.main([*argv, "--atomic-max-iter", "20", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "M = 30 groups of 25, overlap 5, 3 active, p = 605, n = 300" in text
    assert "CoGEnT and FW (Frank-Wolfe) at most 20 iterations" in text
    rows = [line for line in text.splitlines() if line.startswith(("| 1 |", "| 10 |"))]
    assert len(rows) == 2 * len(og.CONVERGENCE_METHODS) + 2  # and one headline row per κ
    assert (tmp_path / "conv.png").stat().st_size > 0
    data = json.loads((tmp_path / "conv.json").read_text(encoding="utf-8"))
    assert set(data) == {"1.0", "10.0"}
    assert data["1.0"]["GOMP"]["step"] is None
    assert len(data["1.0"]["GOMP"]["trace"]) == 4


def test_group_omp_on_raw_columns_differs_only_in_how_it_scores_groups():
    cfg = {"n_groups": 20, "size": 15, "overlap": 5, "active": 3}
    X, y, _, groups, _ = og.instance(cfg, 1.0, 200, [6, 7])
    # with orthonormal columns in every group the two scores coincide
    Q = X.copy()
    for m in groups.members[::2]:  # every other group: disjoint, as the overlap is 5 of 15
        Q[:, m] = np.linalg.qr(X[:, m])[0]
    even = og.OverlappingGroups([groups.members[g] for g in range(0, 20, 2)], X.shape[1])
    w_q, _ = og.group_omp(Q, y, even, 3)
    w_raw, _ = og.group_omp(Q, y, even, 3, orthonormal=False)
    assert np.allclose(w_q, w_raw)


def test_a_tiny_grid_can_run_group_omp_on_raw_columns_alone(tmp_path):
    out = tmp_path / "raw.md"
    argv = ["--paper-scale", "--ns", "60", "--kappas", "1", "--trials", "1"]
    og.main([*argv, "--methods", "GOMP", "GOMP raw", "--out", str(out)])
    cells = json.loads((tmp_path / "raw.json").read_text(encoding="utf-8"))
    assert {c["method"] for c in cells} == {"GOMP", "GOMP raw"}
    # the report's command can be pasted back into a shell: a method with a space is quoted
    assert "--methods GOMP 'GOMP raw'" in out.read_text(encoding="utf-8")


def test_dumped_rows_load_back_unchanged(tmp_path):
    rows = {(1.0, 500, "IHT"): [(0.5, 1.25), (0.01, 2.0)], (200.0, 3500, "GOMP"): [(0.2, 4.0)]}
    og.dump_rows(rows, tmp_path / "rows.json")
    assert og.load_rows(tmp_path / "rows.json") == rows


def test_the_oracle_radius_sums_the_norms_of_the_generators_group_decomposition():
    groups = og.OverlappingGroups.contiguous(4, 5, 2)  # p = 14; groups 1 and 2 share 7, 8
    w_true = np.zeros(14)
    w_true[groups.union([1, 2])] = 1.0  # coordinates 3..10
    # group 1 keeps its 5 coordinates, group 2 the 3 it does not share with group 1
    assert og.oracle_tau(w_true, groups) == pytest.approx(np.sqrt(5) + np.sqrt(3))


def test_the_scaled_down_convergence_part_runs_cogent_and_frank_wolfe(tmp_path, monkeypatch):
    small = {"n_groups": 20, "size": 25, "overlap": 5, "active": 2, "n": 200}
    monkeypatch.setattr(og, "CONVERGENCE", small)
    out = tmp_path / "conv.md"
    og.main(["--part", "convergence", "--kappas", "10", "--max-iter", "10",
             "--atomic-max-iter", "30", "--out", str(out)])  # fmt: skip
    text = out.read_text(encoding="utf-8")
    assert "M = 20 groups of 25, overlap 5, 2 active, p = 405, n = 200" in text
    assert "IHT-FC is about 10 times faster than the next best CoGEnT" in text
    assert "| 10 | CoGEnT | - | 30 |" in text
    assert "| 10 | FW | - | 30 |" in text
    assert (
        "| κ | f(w*) | IHT | IHT-FC | IHT-FC wide | GOMP | CoGEnT | FW | CoGEnT / IHT-FC |" in text
    )
    data = json.loads((tmp_path / "conv.json").read_text(encoding="utf-8"))
    assert data["10.0"]["tau"] > 0
    # the atomic solvers start at w = 0 and never end above it
    for method in ("CoGEnT", "FW"):
        trace = data["10.0"][method]["trace"]
        assert len(trace) == 31
        assert trace[-1][1] < trace[0][1]


def test_the_json_keeps_at_most_400_entries_of_a_trace_with_its_ends():
    trace = [(0.01 * i, 1.0 / (i + 1), 1.0) for i in range(11000)]
    conv = {10.0: {"tau": 1.0, "FW": {"step": None, "trace": trace, "seconds_all_steps": 1.0}}}
    kept = og.thinned(conv)["10.0"]["FW"]["trace"]
    assert len(kept) <= 400
    assert kept[0] == trace[0]
    assert kept[-1] == trace[-1]
    assert len(conv[10.0]["FW"]["trace"]) == 11000  # the plot's traces are left whole
