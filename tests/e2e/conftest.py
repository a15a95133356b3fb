"""Fixtures of the end-to-end tests: a clean broker and real worker processes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.conf import settings
from worker_process import Worker


def pytest_collection_modifyitems(config, items):
    """Every end-to-end test is slow: real worker processes, a real browser."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def clean_broker():
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    for key in ("data_folder_in", "processed_folder"):
        if key in options:
            shutil.rmtree(options[key], ignore_errors=True)
            Path(options[key]).mkdir(parents=True)
    if settings.CELERY_BROKER_URL.startswith("redis://"):
        from config.celery import app

        app.control.purge()


@pytest.fixture
def workers(tmp_path, clean_broker):
    started: list[Worker] = []

    def start(name: str, *, concurrency: int = 1, **env: str) -> Worker:
        worker = Worker(tmp_path, name, concurrency=concurrency, **env)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test's report says where the browser was and what it showed."""
    report = yield
    driver = item.funcargs.get("browser") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and driver is not None:
        try:
            text = driver.find_element("tag name", "body").text[:3000]
            report.sections.append(
                ("browser", f"at {driver.current_url} ({driver.title}):\n{text}")
            )
        except Exception as exc:  # the browser itself may be what failed
            report.sections.append(("browser", f"could not read the page: {exc!r}"))
    return report
