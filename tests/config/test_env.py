"""Settings helpers read the environment strictly and say what they accept."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import cache_from_url, database_from_url, env_bool, env_dir, env_int, env_list


@pytest.mark.parametrize(("raw", "expected"), [("1", True), ("TRUE", True), ("off", False)])
def test_booleans_accept_the_usual_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("X_FLAG", raw)
    assert env_bool("X_FLAG", not expected) is expected


def test_a_malformed_boolean_fails_loudly(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG must be one of"):
        env_bool("X_FLAG", False)


def test_integers_are_checked_against_their_minimum(monkeypatch):
    monkeypatch.setenv("X_INT", "0")
    with pytest.raises(ImproperlyConfigured, match="X_INT must be at least 1"):
        env_int("X_INT", 5, minimum=1)
    monkeypatch.setenv("X_INT", "ten")
    with pytest.raises(ImproperlyConfigured, match="X_INT must be a whole number"):
        env_int("X_INT", 5)


def test_unset_variables_take_their_defaults(monkeypatch):
    monkeypatch.delenv("X_UNSET", raising=False)
    assert env_int("X_UNSET", 7) == 7
    assert env_list("X_UNSET", ["a"]) == ["a"]


def test_lists_split_on_commas_and_drop_blanks(monkeypatch):
    monkeypatch.setenv("X_LIST", "a, b,,c ")
    assert env_list("X_LIST", []) == ["a", "b", "c"]


def test_postgres_urls_become_psycopg2_settings():
    db = database_from_url("postgres://u%40x:p%2Fw@db.example:6543/tvcs")
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == (
        "u@x",
        "p/w",
        "db.example",
        "6543",
        "tvcs",
    )


def test_a_new_sqlite_database_is_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "data" / "db.sqlite3"
    database_from_url(f"sqlite:///{path}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.chmod(0o644)  # an existing file is the owner's choice and is left as it is
    database_from_url(f"sqlite:///{path}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_sqlite_urls_give_a_file_path(tmp_path):
    db = database_from_url(f"sqlite:///{tmp_path}/sub/db.sqlite3")
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == f"{tmp_path}/sub/db.sqlite3"
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]
    assert db["CONN_MAX_AGE"] == 60  # kept across requests: opening one costs ~0.6 ms
    assert (tmp_path / "sub").is_dir()


@pytest.mark.parametrize(
    ("url", "message"),
    [("mysql://x/y", "must start with sqlite://"), ("postgres://h:1/", "needs a database name")],
)
def test_unsupported_database_urls_are_rejected(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        database_from_url(url)


def test_the_cache_is_redis_by_url_else_files_every_process_shares(tmp_path):
    files = cache_from_url(None, folder=tmp_path / "cache")
    assert files["BACKEND"].endswith("FileBasedCache")
    assert files["LOCATION"] == str(tmp_path / "cache")
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    redis = cache_from_url("redis://cache:6379/1", folder=tmp_path)
    assert redis == {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://cache:6379/1",
    }
    with pytest.raises(ImproperlyConfigured, match="TVCS_CACHE_URL must start with redis://"):
        cache_from_url("memcached://x", folder=tmp_path)


def test_the_throttles_count_in_a_cache_shared_by_processes(settings):
    # Not the per-process memory cache, which restarts forget and WSGI workers multiply.
    assert "locmem" not in settings.CACHES["default"]["BACKEND"].lower()


def test_a_data_folder_is_created_and_one_that_cannot_be_fails_loudly(monkeypatch, tmp_path):
    monkeypatch.setenv("X_DIR", str(tmp_path / "a" / "b"))
    made = env_dir("X_DIR", tmp_path / "default")
    assert made.is_dir()
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("X_DIR", str(tmp_path / "file" / "under"))
    with pytest.raises(ImproperlyConfigured, match="X_DIR must be a folder tvcs-assign can"):
        env_dir("X_DIR", tmp_path)


def test_manage_py_says_a_bad_setting_in_one_line_without_a_traceback(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "TVCS_DATA_DIR": str(tmp_path), "TVCS_MAX_IMPORT_BYTES": "abc"}
    done = subprocess.run(
        [sys.executable, str(root / "manage.py"), "check"],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == "Error: TVCS_MAX_IMPORT_BYTES must be a whole number, got 'abc'\n"
