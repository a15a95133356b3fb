"""A thread keeps its database connection across requests (both backends); PostgreSQL's is
checked before a request reuses it."""

from __future__ import annotations

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection, connections


@pytest.mark.django_db(transaction=True)
def test_a_request_reuses_the_connection_of_the_one_before():
    connection.ensure_connection()
    opened = connection.connection
    # What a server's thread does around each request (Django's request signals).
    request_finished.send(sender=None)
    request_started.send(sender=None)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert connection.connection is opened


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_dropped_is_replaced_at_the_next_request():
    if connection.vendor != "postgresql":
        pytest.skip("persistent connections are PostgreSQL's (CI's second pass)")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    # The server ends that session, as a restart or an idle timeout of PostgreSQL would.
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    close_old_connections()  # what Django does when a request starts
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
