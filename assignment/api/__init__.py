"""The REST API under ``/api/`` (README, "REST API"): token-authenticated, per-owner.

Views validate the request with a serializer, call a service (writes) or a selector (reads) and
serialise the result; domain errors become HTTP errors in :mod:`assignment.api.errors`.
"""
