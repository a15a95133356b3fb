"""Static files come from the WSGI server itself (WhiteNoise), without DEBUG or a web server."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.parametrize(
    "path",
    ["/static/frontend/site.css", "/static/admin/css/base.css", "/static/frontend/live.js"],
)
def test_static_files_are_served_without_debug(settings, path):
    assert not settings.DEBUG
    response = Client().get(path)
    assert response.status_code == 200
    assert int(response.headers["Content-Length"]) > 0
    assert "max-age" in response.headers["Cache-Control"]


def test_a_missing_static_file_is_a_404():
    assert Client().get("/static/frontend/no-such-file.css").status_code == 404
