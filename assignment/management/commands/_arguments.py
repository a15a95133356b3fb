"""Argument types the commands share: argparse's one-line error when a value is wrong."""

from __future__ import annotations

import argparse


def whole_number(text: str, least: int, most: int | None = None) -> int:
    """``text`` as an integer in ``[least, most]``, or argparse's one-line error saying so
    (most bounds are the services': they name the field)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < least or (most is not None and value > most):
        within = f"at least {least}" if most is None else f"from {least} to {most}"
        raise argparse.ArgumentTypeError(f"must be {within}, got {value}")
    return value


def non_negative(text: str) -> int:
    """A whole number of at least 0."""
    return whole_number(text, 0)


def positive(text: str) -> int:
    """A whole number of at least 1."""
    return whole_number(text, 1)


def port(text: str) -> int:
    """A TCP port to listen on."""
    return whole_number(text, 1, 65535)
