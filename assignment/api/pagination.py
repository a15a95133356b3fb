"""Pages of the API's lists: ``?limit=&offset=``, with the page size capped."""

from __future__ import annotations

from django.conf import settings
from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """DRF's limit and offset, with ``limit`` at most ``TVCS_API_MAX_PAGE_SIZE``.

    A larger ``limit`` (even one beyond any database integer) gives the largest page instead of
    a server error; an ``offset`` past the end gives an empty page.
    """

    @property
    def max_limit(self) -> int:
        return settings.TVCS_API_MAX_PAGE_SIZE
