"""/healthz: the database, the broker and the shared cache, without a token."""

from __future__ import annotations

import pytest
from django.db.utils import OperationalError
from rest_framework.test import APIClient

from assignment.api import health

pytestmark = pytest.mark.django_db


def test_health_is_ok_with_a_working_database_broker_and_cache():
    # The filesystem broker by default; Redis in CI's second pass.
    response = APIClient().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "broker": "ok", "cache": "ok"}


def test_health_is_503_when_the_broker_does_not_answer_and_names_no_host(settings, caplog):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = APIClient().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"database": "ok", "broker": "failing", "cache": "ok"}
    assert "127.0.0.1" not in response.content.decode()
    assert "broker check failed" in caplog.text  # the reason goes to the log only


def test_health_is_503_when_the_database_fails(monkeypatch):
    class Broken:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", Broken())
    response = APIClient().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"database": "failing", "broker": "ok", "cache": "ok"}
    assert "connection refused" not in response.content.decode()


def test_health_is_503_when_the_shared_cache_does_not_answer_and_names_no_host(settings, caplog):
    # The throttles and sign-in lockouts count in this cache: without it they cannot work.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    response = APIClient().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"database": "ok", "broker": "ok", "cache": "failing"}
    assert "127.0.0.1" not in response.content.decode()
    assert "cache check failed" in caplog.text
