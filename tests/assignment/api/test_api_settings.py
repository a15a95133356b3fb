"""The REST API's settings from the environment."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import _throttle_rate


def test_a_throttle_rate_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("TVCS_UPLOAD_RATE", raising=False)
    assert _throttle_rate("TVCS_UPLOAD_RATE", "60/hour") == "60/hour"
    monkeypatch.setenv("TVCS_UPLOAD_RATE", " 5/minute ")
    assert _throttle_rate("TVCS_UPLOAD_RATE", "60/hour") == "5/minute"


@pytest.mark.parametrize("value", ["60", "60/week", "0/hour", "x/hour", "-1/day", ""])
def test_a_malformed_throttle_rate_fails_loudly_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("TVCS_UPLOAD_RATE", value)
    with pytest.raises(ImproperlyConfigured, match="TVCS_UPLOAD_RATE must be a number of requests"):
        _throttle_rate("TVCS_UPLOAD_RATE", "60/hour")
