"""Reading data files, CSV or JSON, row by row with the line each row starts on.

A data file is a table: CSV with a header line, or a JSON list of objects that all have the same
keys. :func:`open_data_file` reads the header (and the first row) at once, so that an empty file,
a header without rows or a wrong delimiter are reported before anything else, and then
:meth:`DataFile.rows` streams the rest: memory stays bounded by one line (CSV) or one object plus
a 64 KiB read-ahead (JSON), whatever the size of the file.

Every problem raises :class:`~assignment.errors.ImportValidationError` naming the file, the line
and, where there is one, the column: the file must be UTF-8 (a byte-order mark is tolerated; UTF-16
and other encodings are rejected with the line of the first bad byte), contain no NUL byte, no
line longer than :data:`MAX_LINE_BYTES`, be no larger than the ``max_bytes`` given, and be valid
CSV (RFC 4180 quoting, comma-separated) or valid JSON (no NaN / Infinity, no duplicate keys).

Values are returned as they are in the file: strings for CSV cells (untrimmed), JSON values for
JSON. Interpreting them (trimming, numbers, ids) is :mod:`assignment.importers`' job.
"""

from __future__ import annotations

import codecs
import csv
import json
import os
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from assignment.errors import ImportValidationError

__all__ = [
    "FORMATS",
    "FORMULA_TRIGGERS",
    "MAX_LINE_BYTES",
    "DataFile",
    "Row",
    "open_data_file",
    "parse_json_text",
    "quote_formula",
    "unquote_formula",
]

FORMATS = ("csv", "json")

#: Longest physical line of a CSV file, and longest JSON object, in bytes (1 MiB). A longer one
#: is almost certainly not a table (a binary file, a whole file without line breaks).
MAX_LINE_BYTES = 1 << 20

#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP CSV injection;
#: ASVS V1.2.10). Exports prefix such user-given cells with a single quote
#: (:func:`quote_formula`); imports of CSV files remove that quote again
#: (:func:`unquote_formula`), so that an export imports back unchanged.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\x00")


def invisible_character(text: str) -> str:
    """Why ``text``, a name that must match the same name typed elsewhere (an id, a category,
    a label), cannot be one: it holds an invisible format character (a byte order mark, a
    zero-width space: Unicode category Cf), which would make it differ while looking the same;
    "" if it holds none."""
    at = next((k for k, char in enumerate(text) if unicodedata.category(char) == "Cf"), None)
    if at is None:
        return ""
    char = text[at]
    name = unicodedata.name(char, "a format character")
    return f"contains an invisible character, U+{ord(char):04X} ({name}), at position {at + 1}"


def _formula_like(text: str) -> bool:
    """Whether ``text``, its leading single quotes aside, starts with a formula trigger."""
    return text.lstrip("'")[:1] in FORMULA_TRIGGERS and text.lstrip("'") != ""


def quote_formula(text: str) -> str:
    """``text`` with a ``'`` in front if a spreadsheet would take it for a formula, or if it
    is such a text quoted already (``'=x`` becomes ``''=x``), so that :func:`unquote_formula`
    gives back every text exactly: ``unquote_formula(quote_formula(t)) == t`` for every ``t``.
    """
    return "'" + text if _formula_like(text) else text


def unquote_formula(text: str) -> str:
    """Undo :func:`quote_formula`: drop one leading ``'`` before a formula-like rest."""
    return text[1:] if text.startswith("'") and _formula_like(text[1:]) else text


_CHUNK_BYTES = 1 << 16
_UTF8_BOM = codecs.BOM_UTF8
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_JSON_WHITESPACE = " \t\n\r"
#: Delimiters people use by mistake, named in the message when the header has one column.
_OTHER_DELIMITERS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


@dataclass(frozen=True, slots=True)
class Row:
    """One row: the line of the file it starts on, and its values by column name."""

    line: int
    values: dict[str, object]
    item: int | None = None  # the object's number in a JSON file (1-based); None in CSV

    @property
    def where(self) -> str:
        """Where the row is, as a message says it: ``line 7``, ``line 1, object 3``."""
        return f"line {self.line}" + ("" if self.item is None else f", object {self.item}")


class _LimitedReader:
    """A binary stream that fails once more than ``max_bytes`` have been read from it."""

    def __init__(self, file: BinaryIO, *, name: str, max_bytes: int) -> None:
        self._file = file
        self._name = name
        self._max_bytes = max_bytes
        self.bytes_read = 0

    def _count(self, data: bytes) -> bytes:
        self.bytes_read += len(data)
        if self.bytes_read > self._max_bytes:
            raise ImportValidationError(self._name, None, None, _too_large(self._max_bytes))
        return data

    def read(self, size: int) -> bytes:
        return self._count(self._file.read(size))

    def readline(self, size: int) -> bytes:
        return self._count(self._file.readline(size))


def _too_large(max_bytes: int) -> str:
    return (
        f"is larger than the import limit of {max_bytes:,} bytes (TVCS_MAX_IMPORT_BYTES); "
        "split it into several files"
    )


def _declared_size(file: BinaryIO) -> int | None:
    """The file's size if it is known without reading it (a real file, a Django upload)."""
    size = getattr(file, "size", None)
    if isinstance(size, int):
        return size
    try:
        return os.fstat(file.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return None


class DataFile:
    """An open data file: ``name``, ``format`` ("csv" or "json"), ``columns`` and :meth:`rows`.

    ``header_line`` is the line of the CSV header, or of the first JSON object (whose keys are
    the columns). Create it with :func:`open_data_file`. The rows can be iterated once.
    """

    def __init__(
        self,
        *,
        name: str,
        format: str,
        columns: tuple[str, ...],
        header_line: int,
        rows: Iterator[Row],
    ) -> None:
        self.name = name
        self.format = format
        self.columns = columns
        self.header_line = header_line
        self._rows = rows

    def rows(self) -> Iterator[Row]:
        """The rows in file order (at least one), each with its line and its values."""
        return self._rows

    def error(self, line: int | None, column: str | None, message: str) -> ImportValidationError:
        """An :class:`ImportValidationError` about this file."""
        return ImportValidationError(self.name, line, column, message)

    def row_error(self, row: Row, column: str | None, message: str) -> ImportValidationError:
        """An :class:`ImportValidationError` about ``row``: its line, and its object in JSON."""
        return ImportValidationError(self.name, row.line, column, message, item=row.item)


def open_data_file(
    *, file: BinaryIO, name: str, max_bytes: int, format: str | None = None
) -> DataFile:
    """Open a binary stream as a data file and read its header and first row.

    Parameters
    ----------
    file : binary file object
        Read sequentially from its current position (``read`` and ``readline``); not closed.
    name : str
        How messages name the file (usually its base name).
    max_bytes : int
        Size limit: checked up front when the size is known (a real file, a Django upload) and
        while reading otherwise.
    format : "csv" or "json", optional
        Default: from the name's suffix (``.csv``, ``.json``), else JSON if the first
        character that is not white space is ``[``, else CSV.

    Raises
    ------
    ImportValidationError
        Too large, empty, not UTF-8, not valid CSV / JSON, no header or no row after it.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    size = _declared_size(file)
    if size is not None and size > max_bytes:
        raise ImportValidationError(name, None, None, _too_large(max_bytes))
    reader = _LimitedReader(file, name=name, max_bytes=max_bytes)
    head = reader.read(4)
    if head[:2] in _UTF16_BOMS:
        raise ImportValidationError(
            name,
            1,
            None,
            "is UTF-16 encoded (it starts with a UTF-16 byte-order mark); save it as UTF-8",
        )
    if format is None:
        format, head = _guess_format(name, head, reader)
    if format == "json":
        return _open_json(name, head, reader)
    return _open_csv(name, head, reader)


def _looks_like(format: str, start: str) -> str:
    """The message for a file of the other format: a JSON list read as CSV, or the reverse."""
    other = "CSV" if format == "JSON" else "JSON"
    return (
        f"looks like {format}, not {other} (it starts with {start!r}): give the file a "
        f".{format.lower()} name or choose {format} as its format"
    )


def _guess_format(name: str, head: bytes, reader: _LimitedReader) -> tuple[str, bytes]:
    """("csv" | "json", the bytes read so far) from the suffix, else from the first character."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in {".csv", ".json"}:
        return suffix[1:], head
    data = head
    while True:
        stripped = data.removeprefix(_UTF8_BOM).lstrip(b" \t\r\n")
        if stripped or len(data) > MAX_LINE_BYTES:
            return ("json" if stripped[:1] == b"[" else "csv"), data
        more = reader.read(_CHUNK_BYTES)
        if not more:
            return "csv", data
        data += more


# --------------------------------------------------------------------------------------------
# CSV


class _CsvLines:
    """Physical lines of a CSV file, decoded, with ``line`` = how many have been read."""

    def __init__(self, name: str, head: bytes, reader: _LimitedReader) -> None:
        self._name = name
        self._pending = head
        self._reader = reader
        self.line = 0

    def __iter__(self) -> _CsvLines:
        return self

    def _readline(self) -> bytes:
        # The first bytes were read ahead to guess the format; complete their line.
        if self._pending:
            data, self._pending = self._pending, b""
            if b"\n" in data:
                cut = data.index(b"\n") + 1
                self._pending = data[cut:]
                return data[:cut]
            remaining = MAX_LINE_BYTES + 1 - len(data)
            return data + self._reader.readline(remaining) if remaining > 0 else data
        return self._reader.readline(MAX_LINE_BYTES + 1)

    def __next__(self) -> str:
        raw = self._readline()
        if not raw:
            raise StopIteration
        self.line += 1
        if len(raw) > MAX_LINE_BYTES:
            raise ImportValidationError(
                self._name,
                self.line,
                None,
                f"is longer than {MAX_LINE_BYTES:,} bytes: not a data file, or a file without "
                "line breaks",
            )
        if self.line == 1 and raw.startswith(_UTF8_BOM):
            raw = raw[len(_UTF8_BOM) :]
        if b"\x00" in raw:
            raise ImportValidationError(
                self._name,
                self.line,
                None,
                "contains a NUL byte: a binary file, or text in UTF-16; save it as UTF-8 CSV",
            )
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ImportValidationError(
                self._name,
                self.line,
                None,
                f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of "
                "the line); save the file as UTF-8",
            ) from None


def _csv_records(name: str, lines: _CsvLines) -> Iterator[tuple[int, list[str]]]:
    """CSV records that are not blank, with the line each starts on."""
    records = csv.reader(lines, strict=True)
    while True:
        start = lines.line + 1
        try:
            record = next(records)
        except StopIteration:
            return
        except csv.Error as exc:
            message = f"is not valid CSV: {exc}"
            if "new-line character" in str(exc):
                message = (
                    "is not valid CSV: it has carriage returns without line feeds (old Mac "
                    "line ends?); save it with LF or CRLF line ends"
                )
            raise ImportValidationError(name, lines.line, None, message) from None
        if any(cell.strip() for cell in record):  # lines of white space only are blank too
            yield start, record


def _open_csv(name: str, head: bytes, reader: _LimitedReader) -> DataFile:
    lines = _CsvLines(name, head, reader)
    records = _csv_records(name, lines)
    first = next(records, None)
    if first is None:
        raise ImportValidationError(name, None, None, "is empty: expected a header line")
    header_line, header = first
    if header[0].lstrip()[:1] in ("[", "{"):
        raise ImportValidationError(
            name, header_line, None, _looks_like("JSON", header[0].lstrip()[0])
        )
    columns = tuple(cell.strip() for cell in header)
    for position, column in enumerate(columns, start=1):
        if not column:
            raise ImportValidationError(
                name, header_line, None, f"the header's column {position} has no name"
            )
        if columns.index(column) != position - 1:
            raise ImportValidationError(name, header_line, column, "appears twice in the header")
    if len(columns) == 1:
        for delimiter, plural in _OTHER_DELIMITERS.items():
            if delimiter in columns[0]:
                raise ImportValidationError(
                    name,
                    header_line,
                    None,
                    f"the header {columns[0]!r} is one column: columns must be separated by "
                    f"commas, not {plural}",
                )

    def rows() -> Iterator[Row]:
        for line, record in records:
            if len(record) != len(columns):
                raise ImportValidationError(
                    name,
                    line,
                    None,
                    f"has {len(record)} value{'s' if len(record) != 1 else ''} but the header "
                    f"has {len(columns)} column{'s' if len(columns) != 1 else ''}",
                )
            yield Row(line, dict(zip(columns, record, strict=True)))

    remaining = rows()
    first = next(remaining, None)
    if first is None:
        raise ImportValidationError(name, None, None, "has a header but no rows")

    def chained() -> Iterator[Row]:
        yield first
        yield from remaining

    return DataFile(
        name=name, format="csv", columns=columns, header_line=header_line, rows=chained()
    )


# --------------------------------------------------------------------------------------------
# JSON


class _DuplicateKeyError(Exception):
    pass


class _ConstantError(Exception):
    pass


def _pairs_without_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKeyError(key)
            seen.add(key)
    return result


def _reject_constant(name: str) -> object:
    raise _ConstantError(name)


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs_without_duplicates, parse_constant=_reject_constant
)


#: Python refuses to read an integer of more digits than this (``sys.get_int_max_str_digits``).
_MAX_INT_DIGITS = 4300


def parse_json_text(text: str) -> object:
    """The JSON value of ``text`` (a CSV cell holding JSON), read as JSON files are read: a
    key twice in one object, ``NaN`` and ``Infinity``, nesting too deep for the parser and
    integers of more than 4,300 digits are refused.

    Raises
    ------
    ValueError
        Saying what is wrong, in words meant for the file's author.
    """
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON: {exc.msg} at character {exc.pos + 1}") from None
    except _DuplicateKeyError as exc:
        raise ValueError(f"the key {exc.args[0]!r} appears twice in one object") from None
    except _ConstantError as exc:
        raise ValueError(f"{exc.args[0]} is not a JSON number; write a finite number") from None
    except RecursionError:
        raise ValueError("is nested too deeply") from None
    except ValueError:  # the only other: an integer longer than Python reads
        raise ValueError(_TOO_MANY_DIGITS) from None


_TOO_MANY_DIGITS = f"is not valid JSON here: a number has more than {_MAX_INT_DIGITS:,} digits"


class _JsonObjects:
    """The objects of a top-level JSON list, parsed one at a time from a sliding buffer.

    The buffer holds at most one object plus a chunk: an object that has not been completed by
    :data:`MAX_LINE_BYTES` characters is an error rather than a reason to read on.
    """

    def __init__(self, name: str, head: bytes, reader: _LimitedReader) -> None:
        self._name = name
        self._reader = reader
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self._buffer = ""
        self._pos = 0
        self._line = 1  # line of self._pos
        self._eof = False
        self._feed(head)

    def _error(self, message: str, line: int | None = None) -> ImportValidationError:
        return ImportValidationError(
            self._name, self._line if line is None else line, None, message
        )

    def _feed(self, data: bytes) -> None:
        final = not data
        try:
            text = self._decoder.decode(data, final=final)
        except UnicodeDecodeError as exc:
            good = self._buffer[self._pos :] + data[: exc.start].decode("utf-8", "replace")
            line = self._line + good.count("\n")
            raise self._error(
                f"is not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
                line,
            ) from None
        if "\x00" in text:
            line = self._line + (self._buffer[self._pos :] + text.split("\x00", 1)[0]).count("\n")
            raise self._error(
                "contains a NUL character: a binary file, or text in UTF-16; save it as UTF-8",
                line,
            )
        if self._pos > _CHUNK_BYTES:
            self._buffer = self._buffer[self._pos :]
            self._pos = 0
        self._buffer += text
        self._eof = final

    def _more(self) -> bool:
        """Read another chunk; False at the end of the file."""
        if self._eof:
            return False
        self._feed(self._reader.read(_CHUNK_BYTES))
        return True

    def _peek(self) -> str:
        """The next character that is not white space ("" at the end), without consuming it."""
        while True:
            buffer, pos = self._buffer, self._pos
            while pos < len(buffer) and buffer[pos] in _JSON_WHITESPACE:
                if buffer[pos] == "\n":
                    self._line += 1
                pos += 1
            self._pos = pos
            if pos < len(buffer):
                return buffer[pos]
            if not self._more():
                return ""

    def _first_line(self) -> str:
        """The rest of the current line (up to MAX_LINE_BYTES characters), read if need be."""
        while "\n" not in self._buffer[self._pos :] and len(self._buffer) < MAX_LINE_BYTES:
            if not self._more():
                break
        return self._buffer[self._pos :].split("\n", 1)[0]

    def _describe(self, char: str) -> str:
        return "the end of the file" if char == "" else repr(char)

    def start(self) -> bool:
        """Consume the opening ``[``; False if the file holds nothing but white space."""
        char = self._peek()
        if char == "":
            return False
        if char != "[":
            if char != "{" and "," in self._first_line():
                raise self._error(_looks_like("CSV", char))
            raise self._error(
                f"is not a JSON list of objects: it must start with '[', found {char!r}"
            )
        self._pos += 1
        return True

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        first = True
        while True:
            char = self._peek()
            if char == "]":
                self._pos += 1
                break
            if not first:
                if char != ",":
                    raise self._error(
                        f"is not valid JSON: expected ',' or ']' after an object, found "
                        f"{self._describe(char)}"
                    )
                self._pos += 1
                char = self._peek()
            if char == "":
                raise self._error("is not valid JSON: the list is not closed with ']'")
            yield self._line, self._decode_object()
            first = False
        trailing = self._peek()
        if trailing != "":
            raise self._error(f"is not valid JSON: {trailing!r} after the closing ']'")

    def _decode_object(self) -> dict:
        line = self._line
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buffer, self._pos)
                break
            except json.JSONDecodeError as exc:
                incomplete = len(self._buffer) - self._pos < MAX_LINE_BYTES
                if incomplete and self._more():
                    continue
                if self._eof and not self._buffer[exc.pos :].strip(_JSON_WHITESPACE):
                    raise self._error(
                        "is not valid JSON: the file ends inside this object", line
                    ) from None
                error_line = line + self._buffer.count("\n", self._pos, exc.pos)
                hint = "" if incomplete else f" (or an object longer than {MAX_LINE_BYTES:,} bytes)"
                raise self._error(f"is not valid JSON: {exc.msg}{hint}", error_line) from None
            except _DuplicateKeyError as exc:
                raise self._error(f"the key {exc.args[0]!r} appears twice in one object") from None
            except _ConstantError as exc:
                raise self._error(
                    f"{exc.args[0]} is not a JSON number; write a finite number"
                ) from None
            except RecursionError:
                raise self._error("is nested too deeply") from None
            except ValueError:  # not a JSONDecodeError: an integer longer than Python reads
                raise self._error(_TOO_MANY_DIGITS) from None
        if not isinstance(value, dict):
            raise self._error(
                f"each element of the list must be a JSON object, got {_json_type(value)}"
            )
        self._line += self._buffer.count("\n", self._pos, end)
        self._pos = end
        return value


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _open_json(name: str, head: bytes, reader: _LimitedReader) -> DataFile:
    objects = _JsonObjects(name, head, reader)
    if not objects.start():
        raise ImportValidationError(name, None, None, "is empty: expected a JSON list of objects")
    parsed = iter(objects)
    first = next(parsed, None)
    if first is None:
        raise ImportValidationError(name, None, None, "is an empty JSON list: it has no rows")
    first_line, first_object = first
    columns = tuple(first_object)
    if not columns:
        raise ImportValidationError(name, first_line, None, "the first object has no keys")
    expected = set(columns)

    def rows() -> Iterator[Row]:
        yield Row(first_line, first_object, item=1)
        for item, (line, obj) in enumerate(parsed, start=2):
            if obj.keys() != expected:
                extra = [key for key in obj if key not in expected]
                if extra:
                    raise ImportValidationError(
                        name,
                        line,
                        extra[0],
                        "is not a key of the first object; every object must have the same keys",
                        item=item,
                    )
                missing = next(key for key in columns if key not in obj)
                raise ImportValidationError(
                    name,
                    line,
                    missing,
                    "is missing; every object must have the same keys as the first",
                    item=item,
                )
            yield Row(line, obj, item=item)

    return DataFile(name=name, format="json", columns=columns, header_line=first_line, rows=rows())
