"""POST /api/projects/{id}/quality/estimate/ with a source (gold, answers, both) and an EM model."""

from __future__ import annotations

import pytest
from api_helpers import upload

from assignment import services
from assignment.engine.answer_quality import MODELS
from assignment.models import EstimateSource, QualityMatrix, QualitySource

pytestmark = pytest.mark.django_db


def estimate(api, project_id: int, **fields):
    return api.post(f"/api/projects/{project_id}/quality/estimate/", fields, format="json")


def test_an_estimate_from_the_collected_answers_says_how_it_was_made(api, filled_project):
    response = estimate(api, filled_project.pk, source="answers")
    assert response.status_code == 201, response.json()
    summary = response.json()
    assert summary["source"] == "estimated from collected answers by EM"
    assert summary["workers_without_gold"] is None  # no gold was used
    details = summary["details"]
    assert details["model"] == "one-coin"
    assert isinstance(details["converged"], bool)
    assert details["iterations"] >= 1
    assert (details["n_answers"], details["n_gold_answers"]) == (5, 0)
    assert QualityMatrix.objects.latest("created_at").source == QualitySource.FROM_ANSWERS
    assert api.get(f"/api/projects/{filled_project.pk}/quality/").json() == summary


def test_an_estimate_from_both_takes_the_dawid_skene_model_and_counts_gold(api, filled_project):
    response = estimate(api, filled_project.pk, source="both", model="dawid-skene")
    assert response.status_code == 201, response.json()
    summary = response.json()
    assert summary["source"] == "estimated from collected and gold answers by EM"
    assert summary["details"]["model"] == "dawid-skene"
    assert summary["details"]["n_gold_answers"] == 24
    assert summary["workers_without_gold"] == 0


def test_without_a_source_the_estimate_is_from_gold_as_before(api, filled_project):
    response = estimate(api, filled_project.pk)
    assert response.status_code == 201, response.json()
    assert response.json()["source"] == "estimated from gold answers"
    assert "model" not in response.json()["details"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"source": "crowd"}, "source"),
        ({"source": ""}, "source"),
        ({"source": "answers", "model": "two-coin"}, "model"),
        ({"source": "answers", "model": 1}, "model"),
    ],
)
def test_an_unknown_source_or_model_is_a_400_naming_the_field(api, filled_project, fields, field):
    before = QualityMatrix.objects.count()
    response = estimate(api, filled_project.pk, **fields)
    assert response.status_code == 400, response.json()
    assert list(response.json()["fields"]) == [field]
    assert QualityMatrix.objects.count() == before


def test_the_schema_offers_the_engines_models_and_the_sources(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    schemas = schema["components"]["schemas"]
    request = schemas["QualityEstimateRequest"]["properties"]
    assert request["source"]["allOf"] == [{"$ref": "#/components/schemas/EstimateSourceEnum"}]
    assert request["source"]["default"] == "gold"
    assert request["model"]["allOf"] == [{"$ref": "#/components/schemas/QualityModelEnum"}]
    assert schemas["EstimateSourceEnum"]["enum"] == list(EstimateSource.values)
    assert schemas["QualityModelEnum"]["enum"] == list(MODELS)


def test_a_model_for_an_estimate_from_gold_is_a_400_that_says_why(api, filled_project):
    response = estimate(api, filled_project.pk, source="gold", model="one-coin")
    assert response.status_code == 400
    assert (
        "model 'one-coin' is the worker model of an estimate from answers"
        in (response.json()["detail"])
    )


def test_a_fitted_strength_for_an_estimate_by_em_is_a_400_naming_it(api, filled_project):
    response = estimate(api, filled_project.pk, source="both", category_strength="auto")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("category_strength 'auto' is fitted only for")


def test_an_estimate_from_answers_of_a_project_without_answers_is_a_400(api, alice):
    project = services.project_create(owner=alice, name="no answers")
    upload(api, project.pk, "workers", "worker_id\nw1\n")
    upload(api, project.pk, "tasks", "task_id,category\nt1,birds\n")
    response = estimate(api, project.pk, source="answers")
    assert response.status_code == 400
    assert response.json()["detail"].startswith(
        f"project 'no answers' has no collected answers; upload them (the project's Data "
        f"page, POST /api/projects/{project.pk}/data/answers/"
    )
    assert not QualityMatrix.objects.filter(project=project).exists()
