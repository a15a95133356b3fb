"""Token authentication whose tokens expire (``TVCS_TOKEN_MAX_AGE_DAYS``)."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from assignment import selectors


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refused once the token is older than the maximum age."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        expires = selectors.api_token_expiry(token=token)
        if expires is not None and expires <= timezone.now():
            raise AuthenticationFailed(
                f"this token expired on {expires:%Y-%m-%d %H:%M} UTC; get a new one with "
                "POST /api/token/ (username and password) or on the pages' API token page"
            )
        return user, token


class ExpiringTokenScheme(OpenApiAuthenticationExtension):
    """The schema names it like DRF's token scheme (``tokenAuth``)."""

    target_class = ExpiringTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Token-based authentication with required prefix "Token"; tokens '
            "expire after TVCS_TOKEN_MAX_AGE_DAYS days.",
        }
