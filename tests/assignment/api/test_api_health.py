"""/healthz: the database and the broker, without a token."""

from __future__ import annotations

import pytest
from django.db.utils import OperationalError
from rest_framework.test import APIClient

from assignment.api import health

pytestmark = pytest.mark.django_db


def test_health_is_ok_with_a_working_database_and_the_configured_broker():
    # The filesystem broker by default; Redis in CI's second pass.
    response = APIClient().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "broker": "ok"}


def test_health_is_503_when_the_broker_does_not_answer_and_names_no_host(settings, caplog):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = APIClient().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"database": "ok", "broker": "failing"}
    assert "127.0.0.1" not in response.content.decode()
    assert "broker check failed" in caplog.text  # the reason goes to the log only


def test_health_is_503_when_the_database_fails(monkeypatch):
    class Broken:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", Broken())
    response = APIClient().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"database": "failing", "broker": "ok"}
    assert "connection refused" not in response.content.decode()
