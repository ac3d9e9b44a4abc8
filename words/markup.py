"""What a message holds besides its words: {placeholders} and <bookmark mark="name"/> markers.

A placeholder names a value the film fills in (str.format syntax, as `{T}` or `{head}`); a marker
names the moment the picture moves (manim-voiceover's bookmark syntax). Markers are found in the
template before any value is filled in, so a prompt or token that looks like a marker is words.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass

from onepass.data.errors import OnepassError

MARK = re.compile(r'<bookmark\s+mark\s*=\s*"([^"<>]*)"\s*/>')
MARK_NAME = re.compile(r"[A-Za-z0-9_.-]+")


class MarkupError(OnepassError, ValueError):
    """A template that cannot be read: a broken placeholder or a marker with a bad name."""


@dataclass(frozen=True)
class Filled:
    """A message with its values in: `text` as spoken and shown (markers out, whitespace
    collapsed) and `marks`, each marker's name and its character offset in `text`."""
    text: str
    marks: tuple[tuple[str, int], ...] = ()

    @property
    def mark_names(self) -> list[str]:
        return [name for name, _ in self.marks]


def placeholders(template: str) -> set[str]:
    """The value names a template uses: '{T} by {T} grid of {d:,}' -> {'T', 'd'}."""
    try:
        parsed = list(string.Formatter().parse(MARK.sub("", template)))
    except ValueError as exc:
        raise MarkupError(f"{exc} in {template!r}") from None
    names = set()
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            # values arrive formatted (words/numbers.py): a field is a bare name, never {}, {0} or {x:.2f}
            raise MarkupError(f"placeholder {{{field}{'!' + conversion if conversion else ''}"
                              f"{':' + spec if spec else ''}}} must be a bare name such as {{T}} (in {template!r})")
        names.add(field)
    return names


def marks(template: str) -> list[str]:
    """The marker names in a template, in order."""
    names = MARK.findall(template)
    for name in names:
        if not MARK_NAME.fullmatch(name):
            raise MarkupError(f"marker name {name!r} must be letters, digits, '_', '-' or '.' "
                              f"(in {template!r})")
    return names


def fill(template: str, values: dict, tidy=None) -> Filled:
    """The template with `values` in (str.format), its markers taken out and their offsets kept.

    A marker attaches to the word after it: 'wide. <bookmark mark="q"/>Three' marks 'Three'.
    `tidy(text) -> text`, if given, mends each stretch between markers once its values are in (the
    language's grammar around a filled-in number); the markers' offsets follow it."""
    marks(template)                                    # names checked
    pieces = MARK.split(template)                      # text, name, text, name, ..., text
    raw, at = "", []
    for i, piece in enumerate(pieces):
        if i % 2:
            at.append((piece, len(raw)))
        else:
            raw += tidy(piece.format(**values)) if tidy else piece.format(**values)
    # collapse whitespace as speech and captions see it, carrying the offsets along
    text, where, space = [], {}, False
    for k, ch in enumerate(raw):
        where.setdefault(k, len(text))
        if ch.isspace():
            space = bool(text)
            continue
        if space:
            text.append(" ")
            space = False
        where[k] = len(text)
        text.append(ch)
    out = "".join(text)
    offsets = []
    for name, k in at:
        # the first character of the next word (a space after the marker is skipped)
        j = where.get(k, len(out))
        while j < len(out) and out[j] == " ":
            j += 1
        offsets.append((name, j))
    return Filled(out, tuple(offsets))
