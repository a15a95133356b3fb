"""The OpenAPI schema validates without warnings, and the docs page works offline."""

from __future__ import annotations

import re

import pytest
import yaml
from django.contrib.staticfiles import finders
from django.core.management import call_command
from rest_framework.test import APIClient

from assignment.engine import METHODS, method_spec
from assignment.models import WorkerModel

pytestmark = pytest.mark.django_db


def test_the_schema_validates_without_warnings(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    schema = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert schema["openapi"].startswith("3.")
    assert {
        "/api/token/",
        "/api/projects/",
        "/api/projects/{project_id}/",
        "/api/projects/{project_id}/data/{kind}/",
        "/api/projects/{project_id}/labels/",
        "/api/projects/{project_id}/quality/",
        "/api/projects/{project_id}/quality/estimate/",
        "/api/projects/{project_id}/runs/",
        "/api/projects/{project_id}/rounds/preview/",
        "/api/projects/{project_id}/comparisons/",
        "/api/runs/",
        "/api/runs/{run_id}/",
        "/api/runs/{run_id}/cancel/",
        "/api/runs/{run_id}/withdraw/",
        "/api/runs/{run_id}/hand-out/",
        "/api/runs/{run_id}/assignment/",
        "/api/comparisons/{comparison_id}/",
        "/healthz",
    } == set(schema["paths"])


def test_the_schema_says_which_endpoints_need_a_token(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schema = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert schema["components"]["securitySchemes"]["tokenAuth"]["type"] == "apiKey"
    assert schema["components"]["securitySchemes"]["cookieAuth"]["in"] == "cookie"
    public = {("/api/token/", "post"), ("/healthz", "get")}
    for url, operations in schema["paths"].items():
        for method, operation in operations.items():
            security = operation.get("security", [])
            if (url, method) in public:
                assert security in ([], [{}]), (url, method)
            else:
                # A token, or the session of a signed-in browser (with its CSRF token).
                assert security == [{"tokenAuth": []}, {"cookieAuth": []}], (url, method)
    upload = schema["paths"]["/api/projects/{project_id}/data/{kind}/"]["post"]
    assert list(upload["requestBody"]["content"]) == ["multipart/form-data"]


def test_the_schema_says_round_is_a_boolean(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    components = yaml.safe_load(path.read_text(encoding="utf-8"))["components"]["schemas"]
    for name in ("RunCreateRequest", "ComparisonCreateRequest"):
        assert components[name]["properties"]["round"]["type"] == "boolean", name
        assert components[name]["properties"]["round"]["default"] is False, name


def test_the_schema_is_served_to_a_token_holder(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert "/api/runs/{run_id}/" in response.json()["paths"]


def test_the_docs_page_loads_swagger_ui_from_this_server_not_a_cdn(alice):
    client = APIClient()
    client.force_login(alice)  # a browser with a session (e.g. from /admin/)
    response = client.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    # Every script and stylesheet is this server's (a CSRF token may spell "cdn" by chance).
    addresses = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']+)', page)
    assert addresses
    assert not [a for a in addresses if re.match(r"(?i)(https?:)?//", a)]
    assert "cdn." not in page.lower()
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")


def test_the_schema_gives_the_prior_the_open_interval_the_server_enforces(tmp_path, api):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schemas = yaml.safe_load(path.read_text(encoding="utf-8"))["components"]["schemas"]
    for name in ("ProjectCreateRequest", "PatchedProjectUpdateRequest"):
        prior = schemas[name]["properties"]["default_prior"]
        assert (prior["minimum"], prior["exclusiveMinimum"]) == (0, True)
        assert (prior["maximum"], prior["exclusiveMaximum"]) == (1, True)
    for prior in (0, 1):
        response = api.post("/api/projects/", {"name": f"p{prior}", "default_prior": prior})
        assert response.status_code == 400


def test_the_schema_lists_every_methods_options_from_the_engines_registry(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schemas = yaml.safe_load(path.read_text(encoding="utf-8"))["components"]["schemas"]
    options = schemas["RunCreateRequest"]["properties"]["options"]
    assert options["additionalProperties"] is False
    expected = {o.name: o for m in METHODS for o in method_spec(m).options}
    assert set(options["properties"]) == set(expected)
    for name, option in expected.items():
        described = options["properties"][name]
        assert described["default"] == option.default
        if option.maximum is not None:
            assert described["maximum"] == option.maximum


def test_the_model_the_api_schema_and_the_engine_name_the_same_methods(tmp_path):
    from assignment.models import Method

    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schemas = yaml.safe_load(path.read_text(encoding="utf-8"))["components"]["schemas"]
    method = schemas["RunCreateRequest"]["properties"]["method"]
    if "$ref" in method:
        method = schemas[method["$ref"].rsplit("/", 1)[1]]
    assert tuple(method["enum"]) == METHODS
    assert tuple(Method.values) == METHODS


def test_the_api_takes_and_shows_a_projects_distribution_over_its_labels(tmp_path, api):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schemas = yaml.safe_load(path.read_text(encoding="utf-8"))["components"]["schemas"]
    for name in ("Project", "ProjectCreateRequest", "PatchedProjectUpdateRequest"):
        described = schemas[name]["properties"]["default_label_prior"]
        assert (described["type"], described["nullable"]) == ("object", True)
        assert described["additionalProperties"]["exclusiveMaximum"] is True
    created = api.post(
        "/api/projects/",
        {"name": "pets", "labels": ["cat", "dog", "bird"], "default_label_prior": None},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["default_label_prior"] is None
    url = f"/api/projects/{created.json()['id']}/"
    changed = api.patch(
        url, {"default_label_prior": {"bird": 0.25, "cat": 0.5, "dog": 0.25}}, format="json"
    )
    assert changed.status_code == 200
    assert changed.json()["default_label_prior"] == {"cat": 0.5, "dog": 0.25, "bird": 0.25}
    for wrong, message in (
        ({"cat": 0.5, "dog": 0.5}, "no probability for the label 'bird'"),
        ([0.5, 0.25, 0.25], "Must be an object"),
    ):
        refused = api.patch(url, {"default_label_prior": wrong}, format="json")
        assert refused.status_code == 400
        assert message in str(refused.json())
    assert api.get(url).json()["default_label_prior"] == {"cat": 0.5, "dog": 0.25, "bird": 0.25}


def test_the_schema_says_a_runs_chosen_under_is_one_of_the_worker_models_or_null(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schemas = yaml.safe_load(path.read_text(encoding="utf-8"))["components"]["schemas"]
    field = schemas["Run"]["properties"]["chosen_under"]
    assert field["readOnly"]
    assert field["nullable"]
    enum = schemas[field["oneOf"][0]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert sorted(enum) == sorted(WorkerModel.values) == ["dawid_skene", "symmetric"]
    assert "null until the run has succeeded" in field["description"]


def test_the_schema_describes_handing_out_a_run(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schema = yaml.safe_load(path.read_text(encoding="utf-8"))
    operation = schema["paths"]["/api/runs/{run_id}/hand-out/"]["post"]
    assert "requestBody" not in operation
    assert set(operation["responses"]) == {"200", "404", "409"}
    run = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert run == "#/components/schemas/Run"
    handed_out_at = schema["components"]["schemas"]["Run"]["properties"]["handed_out_at"]
    assert handed_out_at["format"] == "date-time"
    assert handed_out_at["nullable"] is True
    assert "handed_out_at" in schema["components"]["schemas"]["ComparisonRow"]["properties"]


def test_the_schema_closes_the_request_bodies_that_refuse_unknown_fields(tmp_path, api):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--file", str(path))
    schemas = yaml.safe_load(path.read_text(encoding="utf-8"))["components"]["schemas"]
    closed = {
        name for name, schema in schemas.items() if schema.get("additionalProperties") is False
    }
    assert closed == {
        "ProjectCreateRequest",
        "UploadRequest",
        "QualityEstimateRequest",
        "RunCreateRequest",
        "ComparisonCreateRequest",
        "SignInRequest",
    }
    response = api.post("/api/projects/", {"name": "p", "colour": "red"}, format="json")
    assert response.status_code == 400
    assert "colour" in response.json()["fields"]


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_a_client_not_signed_in_gets_a_json_401_from_the_schema_and_the_docs(client, path):
    response = client.get(path, HTTP_ACCEPT="*/*")  # curl's
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Authentication credentials were not provided."}


def test_the_schema_comes_as_json_when_asked_for(alice):
    api = APIClient()
    api.force_authenticate(alice)
    response = api.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")
