"""The production settings pass Django's deployment checks with no warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The production environment the README documents (secrets made up for the test).
PRODUCTION = {
    "DJANGO_SECRET_KEY": "x" * 20 + "-made-up-for-this-test-only-" + "y" * 30,
    "DJANGO_ALLOWED_HOSTS": "tvcs.example.org",
    "TVCS_HTTPS": "1",
    "TVCS_HSTS_PRELOAD": "1",
    "TVCS_NUM_PROXIES": "1",
}


def deploy_check(environment: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **environment}
    env["TVCS_DATA_DIR"] = str(tmp_path)
    env.pop("DJANGO_DEBUG", None)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_production_settings_pass_check_deploy(tmp_path):
    result = deploy_check(PRODUCTION, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_without_https_check_deploy_warns(tmp_path):
    result = deploy_check({**PRODUCTION, "TVCS_HTTPS": "0"}, tmp_path)
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT" in result.stdout + result.stderr


def test_a_soft_time_limit_above_the_hard_one_is_refused_at_start(tmp_path):
    """Celery would accept the worker and then refuse to enqueue every task."""
    limits = {"TVCS_RUN_SOFT_TIME_LIMIT": "120", "TVCS_RUN_TIME_LIMIT": "60"}
    result = deploy_check({**PRODUCTION, **limits}, tmp_path)
    assert result.returncode != 0
    assert "TVCS_RUN_SOFT_TIME_LIMIT (120 s) must not exceed TVCS_RUN_TIME_LIMIT (60 s)" in (
        result.stderr
    )
