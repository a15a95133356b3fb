"""Post-processing of the OpenAPI schema (drf-spectacular's ``POSTPROCESSING_HOOKS``)."""

from __future__ import annotations

from collections.abc import Iterator

from assignment.api.serializers import KnownFieldsOnlyMixin


def _strict_serializers(cls: type = KnownFieldsOnlyMixin) -> Iterator[type]:
    for subclass in cls.__subclasses__():
        yield subclass
        yield from _strict_serializers(subclass)


def closed_request_bodies(result: dict, generator, request, public) -> dict:
    """``additionalProperties: false`` on the request bodies that refuse fields they do not
    take (:class:`~assignment.api.serializers.KnownFieldsOnlyMixin`), as the API does: a 400
    naming them. A project's PATCH stays open: it takes the project's representation back too.
    Their components are the serializer's name without ``Serializer``, with ``Request`` after
    it (``Patched`` before it for a partial update)."""
    names = set()
    for serializer in _strict_serializers():
        if not serializer.closed_schema:
            continue
        base = serializer.__name__.removesuffix("Serializer")
        names |= {f"{base}Request", f"Patched{base}Request"}
    for name, schema in result.get("components", {}).get("schemas", {}).items():
        if name in names:
            schema["additionalProperties"] = False
    return result
