"""runproduct refuses a port already taken and fails when the server or the worker ends."""

from __future__ import annotations

import io
import socket
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from assignment.management.commands import runproduct

pytestmark = pytest.mark.django_db


def test_a_port_already_taken_is_refused_before_anything_starts(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("nothing may start")

    monkeypatch.setattr(runproduct.subprocess, "Popen", never)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = io.StringIO()
        with pytest.raises(CommandError, match=rf"cannot serve on 127.0.0.1:{port}: .*--port"):
            call_command("runproduct", port=port, no_demo=True, stdout=out)
    assert "running at" not in out.getvalue()


def test_a_server_that_ends_on_its_own_makes_the_command_fail(monkeypatch):
    started, popen = [], subprocess.Popen

    def ends_at_once(args, **kwargs):  # a real child process that exits with status 3
        started.append(args)
        if "runserver" in args:
            return popen([sys.executable, "-c", "raise SystemExit(3)"])
        return popen([sys.executable, "-c", "import time; time.sleep(60)"])

    monkeypatch.setattr(runproduct.subprocess, "Popen", ends_at_once)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CommandError, match=r"the web server \(exit status 3\) ended on its own"):
        call_command("runproduct", port=port, no_demo=True, stdout=io.StringIO())
    assert len(started) == 2


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--port", "99999", "must be from 1 to 65535, got 99999"),
        ("--port", "-1", "must be from 1 to 65535, got -1"),
        ("--port", "http", "must be a whole number, got 'http'"),
        ("--concurrency", "-2", "must be at least 1, got -2"),
    ],
)
def test_a_bad_port_or_concurrency_is_an_argument_error_before_anything_starts(
    monkeypatch, capsys, flag, value, message
):
    def never(*args, **kwargs):
        raise AssertionError("nothing may start")

    monkeypatch.setattr(runproduct.subprocess, "Popen", never)
    with pytest.raises(SystemExit) as caught:
        runproduct.Command().run_from_argv(["manage.py", "runproduct", flag, value, "--no-demo"])
    assert caught.value.code == 2
    assert f"argument {flag}: {message}" in capsys.readouterr().err


def test_a_host_that_is_no_address_is_refused_as_such_not_as_a_taken_port(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("nothing may start")

    monkeypatch.setattr(runproduct.subprocess, "Popen", never)
    with pytest.raises(CommandError, match="give --host an address of this machine") as caught:
        call_command("runproduct", host="256.1.1.1", port=8799, no_demo=True, stdout=io.StringIO())
    assert "already running" not in str(caught.value)
