"""manage.py estimate_quality --source gold|answers|both --model one-coin|dawid-skene."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from project_data import ALL_CSV, make_project

from assignment.models import QualityMatrix, QualitySource
from assignment.services import project_data_import

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def fill(project, kinds=("workers", "tasks", "gold_items", "gold_answers", "answers")) -> None:
    for kind in kinds:
        project_data_import(
            project=project,
            kind=kind,
            file=io.BytesIO(ALL_CSV[kind].encode()),
            file_name=f"{kind}.csv",
        )


def test_estimating_from_the_answers_says_how_the_em_went():
    fill(make_project())
    out = run("estimate_quality", "--project", "demo", "--source", "answers")
    matrix = QualityMatrix.objects.get()
    assert matrix.source == QualitySource.FROM_ANSWERS
    assert re.fullmatch(
        rf"Estimated quality matrix {matrix.pk} of project 'demo': 3 workers x 3 tasks from 4 "
        r"answers and 0 gold answers by EM \(one-coin\): converged in \d+ iterations, "
        r"log-likelihood -\d+\.\d; population accuracy 0\.\d{3}, mean quality 0\.\d{3}; 0 "
        r"workers without answers get the population estimate\.\n",
        out,
    ), out


def test_estimating_from_both_with_dawid_skene_counts_the_gold_answers():
    fill(make_project())
    out = run("estimate_quality", "--project", "demo", "--source", "both", "--model", "dawid-skene")
    matrix = QualityMatrix.objects.get()
    assert matrix.source == QualitySource.GOLD_AND_ANSWERS
    assert matrix.details["model"] == "dawid-skene"
    assert "from 4 answers and 6 gold answers by EM (dawid-skene)" in out


def test_without_a_source_the_estimate_is_from_gold():
    fill(make_project())
    out = run("estimate_quality", "--project", "demo")
    assert QualityMatrix.objects.get().source == QualitySource.ESTIMATED
    assert "from 6 gold answers; population accuracy" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--source", "crowd"), "argument --source: invalid choice: 'crowd'"),
        (("--source", "answers", "--model", "two-coin"), "argument --model: invalid choice"),
        (("--model", "dawid-skene"), "model 'dawid-skene' is the worker model of an estimate"),
        (("--max-iterations", "0"), "max_iterations 0 bounds the EM of an estimate from answers"),
        (("--source", "answers", "--worker-strength", "auto"), "worker_strength 'auto' is"),
        (("--source", "answers", "--max-iterations", "-1"), "must be at least 0, got -1"),
    ],
)
def test_a_bad_source_model_or_combination_fails_clearly(args, message):
    fill(make_project())
    with pytest.raises(CommandError, match=re.escape(message)):
        run("estimate_quality", "--project", "demo", *args)
    assert not QualityMatrix.objects.exists()


def test_estimating_from_answers_without_answers_says_what_to_do():
    fill(make_project(), kinds=("workers", "tasks", "gold_items", "gold_answers"))
    with pytest.raises(
        CommandError,
        match=r"project 'demo' has no collected answers; upload them \(.*, or manage\.py "
        r"import_data --kind answers\) or estimate from gold",
    ):
        run("estimate_quality", "--project", "demo", "--source", "answers")


def test_an_estimate_that_did_not_converge_is_reported_as_such():
    fill(make_project())
    out = run(
        "estimate_quality", "--project", "demo", "--source", "answers", "--max-iterations", "0"
    )
    assert "did NOT converge in 0 iterations (stored all the same)" in out
    assert QualityMatrix.objects.get().details["converged"] is False
