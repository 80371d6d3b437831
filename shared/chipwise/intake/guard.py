"""Checks on a request body before it is parsed or stored: size, nesting depth, characters.

A public endpoint must answer every malformed request with a 4xx and a reason, never a crash: JSON nested a
thousand deep would exhaust the parser's recursion, a NUL byte is refused by PostgreSQL's text type (and the
error would carry the row, contact data included, into the log), a lone surrogate cannot be encoded at all.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

MAX_JSON_DEPTH = 8  # the intake nests 3 deep (workloads -> item -> field); anything deeper is not an intake
_ALLOWED_CONTROLS = frozenset("\t\n\r")


def json_too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when arrays and objects nest deeper than ``limit`` (brackets inside strings do not count)."""
    depth = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def bad_character(text: str) -> str | None:
    """A description of the first character no field may hold (control characters, lone surrogates)."""
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cs":
            return "an invalid character (a lone UTF-16 surrogate)"
        if category == "Cc" and ch not in _ALLOWED_CONTROLS:
            return "a NUL byte" if ch == "\0" else f"a control character (U+{ord(ch):04X})"
    return None


def _strings(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield (*path, str(key)), str(key)
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def bad_characters(value: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """(path, reason) for every string (or key) in a parsed body holding a character no field may hold."""
    found: dict[tuple[str | int, ...], str] = {}
    for path, text in _strings(value):
        reason = bad_character(text)
        if reason is not None:
            found.setdefault(path, reason)
    return list(found.items())
