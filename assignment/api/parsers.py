"""The API's JSON body parser: DRF's, with a body nested too deeply for Python's decoder a 400
like any malformed JSON (the decoder raises RecursionError, which DRF lets through as a 500)."""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(
                "JSON parse error - the body is nested too deeply (no request of this API "
                "nests more than a few levels)"
            ) from None
