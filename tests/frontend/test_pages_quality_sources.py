"""The quality page's form learns from gold answers, collected answers or both, and the page
says how the latest matrix was made."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from page_helpers import fill_from_samples

from assignment import selectors, services
from assignment.engine.answer_quality import MODELS
from assignment.models import EstimateSource, QualityMatrix, QualitySource

pytestmark = pytest.mark.django_db

ESTIMATE = {"worker_strength": "10", "category_strength": "5"}


@pytest.fixture
def crowd(alice):
    """Workers, tasks, gold and collected answers from the sample files; no quality matrix."""
    project = services.project_create(owner=alice, name="crowd")
    fill_from_samples(project, kinds=("workers", "tasks", "gold_items", "gold_answers", "answers"))
    return project


def how_made(page: str) -> str:
    """The page's sentence on how the latest matrix was made, without markup."""
    found = re.search(r'<p class="muted" id="how-made">(.*?)</p>', page, re.S)
    assert found, "the page does not say how the matrix was made"
    return re.sub(r"<[^>]+>", "", found.group(1))


def test_the_form_offers_every_source_and_every_model_of_the_engine(client, crowd):
    page = client.get(reverse("frontend:quality", args=[crowd.pk])).content.decode()
    for source in EstimateSource.values:
        assert f'name="source" value="{source}"' in page
    for model in MODELS:
        assert f'name="model" value="{model}"' in page
    assert re.search(r'name="source" value="gold"[^>]*checked', page)


def test_learning_from_the_collected_answers_stores_a_matrix_and_says_how(client, crowd):
    url = reverse("frontend:quality", args=[crowd.pk])
    response = client.post(url, {**ESTIMATE, "source": "answers", "model": "one-coin"})
    assert response.status_code == 302
    matrix = QualityMatrix.objects.get(project=crowd)
    assert matrix.source == QualitySource.FROM_ANSWERS
    page = client.get(url).content.decode()
    iterations = matrix.details["iterations"]
    assert (
        f"Quality estimated by EM (one-coin) from 9 collected answers: 4 workers \u00d7 6 "
        f"tasks, converged in {iterations} iterations." in page
    )
    assert "estimated from collected answers by EM" in page
    sentence = how_made(page)
    assert sentence.startswith(
        "Learnt by EM with the one-coin worker model from 9 collected answers, 2 labels in 2 "
        f"categories: converged in {iterations} iterations, log-likelihood "
    )
    assert "workers without gold answers (no gold was used)" in page


def test_learning_from_both_with_dawid_skene_names_the_gold_answers_it_used(client, crowd):
    url = reverse("frontend:quality", args=[crowd.pk])
    client.post(url, {**ESTIMATE, "source": "both", "model": "dawid-skene"})
    matrix = QualityMatrix.objects.get(project=crowd)
    assert matrix.source == QualitySource.GOLD_AND_ANSWERS
    assert matrix.details["model"] == "dawid-skene"
    sentence = how_made(client.get(url).content.decode())
    assert sentence.startswith(
        "Learnt by EM with the dawid-skene worker model from 9 collected answers and 16 gold "
        "answers (gold items as tasks of known truth)"
    )


def test_a_model_chosen_with_gold_is_refused_as_the_api_refuses_it(client, crowd):
    url = reverse("frontend:quality", args=[crowd.pk])
    response = client.post(url, {**ESTIMATE, "source": "gold", "model": "dawid-skene"})
    assert response.status_code == 400
    assert "counts them, with no worker model" in response.content.decode()
    assert not QualityMatrix.objects.filter(project=crowd).exists()


def test_the_default_model_left_selected_with_gold_is_not_used(client, crowd):
    url = reverse("frontend:quality", args=[crowd.pk])
    response = client.post(url, {**ESTIMATE, "source": "gold", "model": "one-coin"})
    assert response.status_code == 302
    matrix = QualityMatrix.objects.get(project=crowd)
    assert matrix.source == QualitySource.ESTIMATED
    assert "model" not in matrix.details
    assert how_made(client.get(url).content.decode()).startswith(
        "Estimated from 16 gold answers in 2 categories"
    )


def test_an_estimate_that_did_not_converge_is_a_warning_that_says_how_to_let_it(client, crowd):
    url = reverse("frontend:quality", args=[crowd.pk])
    client.post(url, {**ESTIMATE, "source": "answers", "max_iterations": 1})
    assert QualityMatrix.objects.get(project=crowd).details["iterations"] == 1
    page = client.get(url).content.decode()
    assert "The EM did not converge in 1 iteration; the matrix is stored all the same." in page
    assert 'more "EM iterations at most" to let it converge' in page.replace("&quot;", '"')
    assert "did not converge in 1 iteration (stored all the same;" in how_made(page)
    assert 'href="#id_max_iterations"' in page


def test_a_bound_on_em_iterations_with_gold_is_refused_as_the_api_refuses_it(client, crowd):
    url = reverse("frontend:quality", args=[crowd.pk])
    response = client.post(url, {**ESTIMATE, "source": "gold", "max_iterations": 5})
    assert response.status_code == 400
    assert "with no EM to bound" in response.content.decode()
    assert not QualityMatrix.objects.filter(project=crowd).exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"source": "crowd"}, "source"), ({"source": "answers", "model": "two-coin"}, "model")],
)
def test_an_unknown_source_or_model_is_a_form_error(client, crowd, fields, field):
    url = reverse("frontend:quality", args=[crowd.pk])
    response = client.post(url, {**ESTIMATE, **fields})
    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert not QualityMatrix.objects.filter(project=crowd).exists()


def test_learning_from_answers_without_answers_says_what_to_upload(client, alice):
    project = services.project_create(owner=alice, name="no answers")
    fill_from_samples(project, kinds=("workers", "tasks"))
    url = reverse("frontend:quality", args=[project.pk])
    response = client.post(url, {**ESTIMATE, "source": "answers"})
    assert response.status_code == 400
    assert "project &#x27;no answers&#x27; has no collected answers; upload them" in (
        response.content.decode()
    )


def test_a_fitted_strength_with_answers_is_refused_on_the_page(client, crowd):
    url = reverse("frontend:quality", args=[crowd.pk])
    response = client.post(
        url, {"worker_strength": "auto", "category_strength": "5", "source": "both"}
    )
    assert response.status_code == 400
    assert "worker_strength &#x27;auto&#x27; is fitted only for" in response.content.decode()


@pytest.mark.parametrize("model", MODELS)
def test_the_project_page_gives_the_bayes_labels_accuracy_now_beside_dawid_skenes(
    client, crowd, model
):
    client.post(
        reverse("frontend:quality", args=[crowd.pk]),
        {**ESTIMATE, "source": "answers", "model": model},
    )
    page = client.get(reverse("frontend:project", args=[crowd.pk])).content.decode()
    overview = selectors.round_overview(
        project=crowd, readiness=selectors.run_readiness(project=crowd)
    )
    votes = re.search(r'<span id="rounds-votes">(.*?)</span>', page, re.S)
    if model == "one-coin":  # no confusion matrices: the two votes give the same labels
        assert overview.bayes_accuracy_now is None
        assert votes is None
        return
    assert f"<strong>{overview.accuracy_now:.4f}</strong>" in page
    assert votes.group(1) == (
        "with the Dawid\u2013Skene labels, under the quality's confusion matrices, and "
        f"{overview.bayes_accuracy_now:.4f} with the Bayes labels (the default download)"
    )
