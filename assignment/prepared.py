"""Reads whose SQL the ORM compiles once per process and database, for the hottest queries.

Django compiles a queryset into SQL every time it runs it: for a one-row read by primary key,
such as a run's status polled every second by every client, building and compiling the
queryset costs ten times what the database then does (~0.25 ms of CPU against ~0.02 ms).
A :class:`PreparedRead` builds its queryset once, with a placeholder value for each parameter,
keeps the SQL the ORM makes of it, and then runs that SQL with each call's values through
``Model.objects.raw()``, which turns the rows into model instances with the ORM's own column
conversions (dates, JSON) and leaves the columns it does not select deferred. The SQL is the
ORM's: the same joins, columns and conditions as the queryset.

Only for querysets whose parameters are integers (primary keys), each a value of its own in
the query, such as ``filter(pk=run_id, project__owner=user_id)``: the placeholders are found
by their values among the compiled query's parameters.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Model, QuerySet

#: A stored key is a signed 64-bit integer at most: a value beyond matches no row (as the ORM's
#: lookups make of it) instead of overflowing the database's integers.
KEY_RANGE = range(-(2**63), 2**63)

#: Values no real query has, one per parameter, to find them among the compiled parameters.
_PLACEHOLDERS = (-7_919_000_001, -7_919_000_002, -7_919_000_003, -7_919_000_004)


class PreparedRead:
    """``build(**parameters)``, a queryset, compiled once; ``first(**values)`` runs it.

    ``PreparedRead(lambda run_id: Run.objects.only("status").filter(pk=run_id), "run_id")``
    then ``.first(run_id=12)``: that run (with only its status read), or None.
    """

    def __init__(self, build: Callable[..., QuerySet], *names: str) -> None:
        if not 1 <= len(names) <= len(_PLACEHOLDERS):
            raise ValueError(f"a PreparedRead takes 1 to {len(_PLACEHOLDERS)} parameters")
        self.build, self.names = build, names
        #: By database alias: the model, the SQL, and for each of its parameters the name of
        #: the value it takes (or None and the query's own constant).
        self._compiled: dict[str, tuple[type[Model], str, list[tuple[str | None, object]]]] = {}

    def compile(self, using: str = DEFAULT_DB_ALIAS):
        """(model, SQL, parameter slots) of the query on database ``using``, compiled once."""
        compiled = self._compiled.get(using)
        if compiled is None:
            placeholders = dict(zip(self.names, _PLACEHOLDERS, strict=False))
            queryset = self.build(**placeholders)
            sql, params = queryset.query.get_compiler(using=using).as_sql()
            name_of = {value: name for name, value in placeholders.items()}
            slots = [(name_of.get(p) if type(p) is int else None, p) for p in params]
            missing = set(self.names) - {name for name, _ in slots}
            if missing:
                raise ValueError(f"{sorted(missing)} are not values of the query: {sql}")
            compiled = self._compiled[using] = (queryset.model, sql, slots)
        return compiled

    def first(self, *, using: str = DEFAULT_DB_ALIAS, **values: int) -> Model | None:
        """The query's first row with these values, or None (also for a value no key has).

        For queries of one row or a few (no ``LIMIT`` is added)."""
        if set(values) != set(self.names):
            raise TypeError(f"values of {', '.join(self.names)} expected, got {sorted(values)}")
        for name, value in values.items():
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} must be an integer, got {value!r}")
        if any(value not in KEY_RANGE for value in values.values()):
            return None
        model, sql, slots = self.compile(using)
        params = [constant if name is None else values[name] for name, constant in slots]
        return next(iter(model._default_manager.db_manager(using).raw(sql, params)), None)
