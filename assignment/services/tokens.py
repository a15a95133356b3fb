"""API tokens: the one a sign-in gets, and a fresh one on request."""

from __future__ import annotations

import logging

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from assignment.selectors import (
    api_token_expiry,
)

logger = logging.getLogger(__name__)


def api_token_for_sign_in(*, user: AbstractBaseUser) -> str:
    """``user``'s API token, a new one if they had none or theirs expired."""
    token = Token.objects.filter(user=user).first()
    expiry = None if token is None else api_token_expiry(token=token)
    if token is not None and (expiry is None or expiry > timezone.now()):
        return token.key
    return api_token_renew(user=user)


def api_token_renew(*, user: AbstractBaseUser) -> str:
    """A new API token for ``user``, replacing any older one (which stops working at once)."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        token = Token.objects.create(user=user)
    logger.info("new API token for %s", user.get_username())
    return token.key
