"""Pages of the API's lists: ``?limit=&offset=``, with the page size capped."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """DRF's limit and offset, with ``limit`` at most ``TVCS_API_MAX_PAGE_SIZE``.

    A larger ``limit`` (even one beyond any database integer) gives the largest page instead of
    a server error; an ``offset`` past the end gives an empty page. What is not a whole number
    (``limit`` of at least 1, ``offset`` of at least 0) is a 400, as the schema says, instead of
    DRF's silent default.
    """

    @property
    def max_limit(self) -> int:
        return settings.TVCS_API_MAX_PAGE_SIZE

    def get_limit(self, request):
        self._check_whole(request, self.limit_query_param, least=1)
        return super().get_limit(request)

    def get_offset(self, request):
        self._check_whole(request, self.offset_query_param, least=0)
        return super().get_offset(request)

    @staticmethod
    def _check_whole(request, name: str, *, least: int) -> None:
        raw = request.query_params.get(name)
        if raw is None:
            return
        if not (raw.isascii() and raw.isdigit()) or int(raw) < least:
            raise ValidationError({name: [f"must be a whole number of at least {least}"]})
