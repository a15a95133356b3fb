"""Password guessing stopped in one place: every sign-in (pages, admin, API token) counts here.

Failed sign-ins are counted per username and per client address in the shared cache
(``CACHES``, so every process and restart sees the same counts). After
``TVCS_SIGN_IN_MAX_FAILURES`` failures for a username within ``TVCS_SIGN_IN_LOCKOUT_SECONDS``
(or five times as many from one address), sign-ins for it are refused, even with the right
password, until the window has passed. A successful sign-in clears the username's count.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import receiver

logger = logging.getLogger(__name__)

#: An address may fail this many times the per-username limit (many names, one machine).
ADDRESS_FACTOR = 5


def _keys(username: str | None, address: str | None) -> list[tuple[str, int]]:
    limit = settings.TVCS_SIGN_IN_MAX_FAILURES
    keys = []
    if username:
        keys.append((f"sign-in-failures:user:{username.strip().lower()}", limit))
    if address:
        keys.append((f"sign-in-failures:address:{address}", ADDRESS_FACTOR * limit))
    return keys


def client_address(request) -> str | None:
    """The peer's address (behind a proxy, the proxy's: see TVCS_NUM_PROXIES for the API)."""
    return None if request is None else request.META.get("REMOTE_ADDR")


def sign_in_locked(*, username: str | None, address: str | None) -> bool:
    """Whether sign-ins for ``username`` or from ``address`` are refused for now."""
    return any((cache.get(key) or 0) >= limit for key, limit in _keys(username, address))


def lockout_message() -> str:
    minutes = max(1, round(settings.TVCS_SIGN_IN_LOCKOUT_SECONDS / 60))
    return (
        "Too many failed sign-ins for this account or from this address: try again in "
        f"{minutes} minutes."
    )


def _count_failure(username: str | None, address: str | None) -> None:
    for key, _ in _keys(username, address):
        cache.add(key, 0, timeout=settings.TVCS_SIGN_IN_LOCKOUT_SECONDS)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=settings.TVCS_SIGN_IN_LOCKOUT_SECONDS)


class LockoutFormMixin:
    """For a Django ``AuthenticationForm``: a locked account gets :func:`lockout_message`
    rather than "wrong password" (and the attempt is not counted)."""

    def clean(self):
        username = self.data.get("username")
        if sign_in_locked(username=username, address=client_address(self.request)):
            raise ValidationError(lockout_message(), code="locked")
        return super().clean()


class ThrottledModelBackend(ModelBackend):
    """Django's username and password check, refused while the account or address is locked."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        address = client_address(request)
        if sign_in_locked(username=username, address=address):
            logger.warning("sign-in refused (locked): %r from %s", username, address)
            raise PermissionDenied(lockout_message())
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            for key, _ in _keys(username, None):
                cache.delete(key)
        return user


@receiver(user_login_failed)
def _on_failure(sender, credentials, request=None, **kwargs):
    _count_failure(credentials.get("username"), client_address(request))
