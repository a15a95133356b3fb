"""Turning domain errors into ``CommandError`` (exit status 1, the message on stderr)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError

from assignment.errors import DomainError


@contextmanager
def domain_errors_as_command_errors() -> Iterator[None]:
    try:
        yield
    except DomainError as exc:
        raise CommandError(str(exc)) from exc
