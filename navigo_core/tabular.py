"""Uploaded CSV, read safely; exported CSV, written safely. Used by the claim import and export
(:mod:`navigo_core.business.expenses`) and the Router lab upload (:mod:`navigo_core.lab`).

* :func:`decode` — bytes to text: a BOM (UTF-8, UTF-16) decides; else strict UTF-8; else strict GB18030 (a
  superset of GBK and GB2312, what Excel on a Chinese Windows writes); else :class:`InputError`
  ``upload.bad_encoding``. Never "����". NUL characters are dropped.
* :func:`sniff_delimiter` — comma, semicolon, tab or bar: the one that splits the header row into the most
  known column names (then the most columns); a comma when nothing tells.
* :func:`read_rows` — ``(row number, cells, problem)`` per record, with any line ending (``\\n``, ``\\r\\n``,
  CR-only) and quoted fields across lines. A record the csv module cannot read (an unterminated quote, a
  field over its size limit) is reported with its row number and reading goes on: never a ``csv.Error``.
* :func:`neutralise` — OWASP's rule against formula injection: a cell starting with ``=``, ``+``, ``-``,
  ``@``, a tab or a carriage return gets a leading single quote, so a spreadsheet shows it as text.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable, Iterator

from navigo_core.errors import InputError

__all__ = ["DELIMITERS", "FORMULA_START", "decode", "neutralise", "neutralise_row", "read_rows", "sniff_delimiter"]

DELIMITERS = (",", ";", "\t", "|")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def decode(data: bytes | str, name: str = "") -> str:
    """The text of an upload (see the module doc); ``InputError("upload.bad_encoding")`` when it is none of
    UTF-8, UTF-16 (with a BOM) or GB18030/GBK."""
    text: str | None
    if isinstance(data, str):
        text = data.removeprefix("\ufeff")
    else:
        text = None
        for bom, encoding in _BOMS:
            if data.startswith(bom):
                try:
                    text = data[len(bom):].decode(encoding)
                except UnicodeDecodeError as exc:
                    raise InputError("upload.bad_encoding", name=name or "-") from exc
                break
        if text is None:
            for encoding in ("utf-8", "gb18030"):
                try:
                    text = data.decode(encoding)
                    break
                except UnicodeDecodeError:
                    continue
        if text is None:
            raise InputError("upload.bad_encoding", name=name or "-")
    return text.replace("\x00", "")


def _first_record(text: str) -> str:
    """The text up to the first line break outside quotes (the header row), at most 64 KB of it."""
    head = text[:65536]
    quoted = False
    for i, ch in enumerate(head):
        if ch == '"':
            quoted = not quoted
        elif ch in "\r\n" and not quoted:
            return head[:i]
    return head


def sniff_delimiter(text: str, known: Iterable[str] = ()) -> str:
    """The delimiter of ``text``'s header row: most known column names, then most columns; else a comma."""
    header = _first_record(text)
    names = {n.strip().lower() for n in known}
    best, score = ",", (-1, -1)
    for d in DELIMITERS:
        try:
            cells = next(csv.reader([header], delimiter=d), [])
        except csv.Error:
            continue
        this = (sum(1 for c in cells if c.strip().lower().removeprefix("\ufeff") in names), len(cells))
        if this > score:
            best, score = d, this
    return best if score[1] > 1 or score[0] > 0 else ","


def read_rows(text: str, delimiter: str = ",") -> Iterator[tuple[int, list[str] | None, str | None]]:
    """``(row, cells, None)`` per record (row 1 is the header), or ``(row, None, problem)`` for a record the
    csv module could not read; ``problem`` is ``upload.bad_row`` or ``upload.field_too_big``."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    row = 0
    while True:
        row += 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield row, None, "upload.field_too_big" if "field limit" in str(exc) else "upload.bad_row"
            continue
        yield row, cells, None


def neutralise(cell: object) -> object:
    """A text cell that a spreadsheet would run as a formula, made inert (OWASP: a leading single quote)."""
    if isinstance(cell, str) and cell.startswith(FORMULA_START):
        return "'" + cell
    return cell


def neutralise_row(cells: Iterable[object]) -> list[object]:
    return [neutralise(c) for c in cells]
