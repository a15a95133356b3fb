"""The one way the pages pick a page of a list from ``?page=``."""

from __future__ import annotations

from django.core.paginator import Page, Paginator


def page_of(items, per_page: int, number) -> Page:
    """The page ``number`` (``?page=``'s text) of ``items``: page 1 for a number below 1 or
    one that is not a number, the last page for one past it (Django's ``get_page`` gives the
    last page for 0 and below)."""
    try:
        number = max(1, int(number))
    except (TypeError, ValueError):
        number = 1
    return Paginator(items, per_page).get_page(number)
