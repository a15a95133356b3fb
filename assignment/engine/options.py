"""Method options as data: type, bounds and meaning, checked and described in one place.

Each method module declares its user-facing options as a tuple of :class:`Option`;
:func:`~assignment.engine.solve.method_option_specs` adds the defaults from the method's own
signature, so a default is written once (in the signature) and a bound once (here). The
services check requested options with :meth:`Option.check`, and the pages build their forms
from the same specs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = ["Option"]

_KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false"}


@dataclass(frozen=True)
class Option:
    """One keyword option of an assignment method.

    Attributes
    ----------
    name : str
        The keyword, as ``solve`` takes it.
    kind : {int, float, bool}
    help : str
        What the option does, in one or two sentences a user can act on.
    minimum, maximum : float or None
        Bounds (inclusive unless ``exclusive_minimum`` / ``exclusive_maximum``).
    nullable : bool
        ``None`` is allowed (for example "no time limit").
    default : object
        Filled from the method's signature by ``method_option_specs``.
    """

    name: str
    kind: type
    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    nullable: bool = False
    default: Any = None

    def with_default(self, default: Any) -> Option:
        """This option with its default set."""
        return replace(self, default=default)

    def describe(self) -> str:
        """What a valid value is, in words: ``"an integer >= 1"``, ``"a number in (0, 1)"``."""
        if self.kind is bool:
            text = "true or false"
        elif self.minimum is not None and self.maximum is not None:
            low = "(" if self.exclusive_minimum else "["
            high = ")" if self.exclusive_maximum else "]"
            text = f"{_KIND_NAMES[self.kind]} in {low}{self.minimum:g}, {self.maximum:g}{high}"
        elif self.minimum == 0 and self.exclusive_minimum:
            text = f"a positive {'integer' if self.kind is int else 'number'}"
        elif self.minimum is not None:
            sign = ">" if self.exclusive_minimum else ">="
            text = f"{_KIND_NAMES[self.kind]} {sign} {self.minimum:g}"
        else:
            text = _KIND_NAMES[self.kind]
        return f"{text}, or null for none" if self.nullable else text

    def parse(self, text: str) -> Any:
        """The value ``text`` spells (as typed on a command line), checked.

        ``true``/``false`` (also ``yes``/``no``, ``1``/``0``) for a bool, an integer or a
        number for the others, ``null`` or ``none`` for a nullable option's None; any case.

        Raises
        ------
        ValueError
            Naming the option and what a valid value is, if ``text`` spells none or one out
            of bounds.
        """
        word = text.strip().lower()
        if self.nullable and word in ("null", "none"):
            return None
        try:
            if self.kind is bool:  # as JSON spells them, as the API takes them
                value = {"true": True, "false": False}.get(word, ValueError)
                if value is ValueError:
                    raise ValueError(word)
            else:
                value = self.kind(word)
        except ValueError:
            value = None
        if value is None:
            raise ValueError(f"{self.name} must be {self.describe()}, got {text!r}")
        self.check(value)
        return value

    def check(self, value: Any) -> None:
        """Raise ``ValueError`` naming the option unless ``value`` is of its kind and bounds."""
        if value is None and self.nullable:
            return
        if not self._of_kind(value) or not self._within_bounds(value):
            raise ValueError(f"{self.name} must be {self.describe()}, got {value!r}")

    def _of_kind(self, value: Any) -> bool:
        if self.kind is bool:
            return isinstance(value, bool | np.bool_)
        if isinstance(value, bool | np.bool_):
            return False
        if self.kind is int:
            return isinstance(value, int | np.integer)
        return isinstance(value, int | float | np.number) and bool(np.isfinite(value))

    def _within_bounds(self, value: Any) -> bool:
        if self.kind is bool:
            return True
        if self.minimum is not None and (
            value <= self.minimum if self.exclusive_minimum else value < self.minimum
        ):
            return False
        return self.maximum is None or (
            value < self.maximum if self.exclusive_maximum else value <= self.maximum
        )
