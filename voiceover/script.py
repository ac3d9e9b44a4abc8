"""Narration as data: per chapter, ordered lines keyed by beat, templated from the bundle.

A chapter's script module (voiceover/scripts/chNN.py) defines
    LINES:  list of Line(beat, text, synthetic=None)
    values(bundle, ledger) -> dict of the values its templates name
Templates use str.format fields; a field the values lack fails loudly.
`synthetic` is the honest variant used when the bundle's weights are random.
"""
from __future__ import annotations

import importlib
import re
import string
from dataclasses import dataclass

from data.chapters import titles

WORDS_PER_SECOND = 2.6   # an unhurried narrator; used to time the silent ('none') voice


class ScriptError(RuntimeError):
    pass


@dataclass(frozen=True)
class Line:
    beat: str
    text: str
    synthetic: str | None = None


def _fields(template: str) -> set[str]:
    return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template) if f}


def render_line(line: Line, values: dict, synthetic: bool) -> str:
    template = line.synthetic if (synthetic and line.synthetic) else line.text
    missing = _fields(template) - values.keys()
    if missing:
        raise ScriptError(f"narration line {line.beat!r} names {sorted(missing)}, which the bundle "
                          f"does not provide (available: {sorted(values)})")
    return template.format(**values)


def chapter_lines(chapter: str, bundle, ledger) -> dict[str, str]:
    """beat -> spoken text for one chapter, rendered against a bundle.

    Every chapter also gets a "title" line, read over its title card, unless its script
    writes its own.
    """
    module = importlib.import_module(f"voiceover.scripts.ch{chapter}")
    values = module.values(bundle, ledger)
    out = {}
    for line in module.LINES:
        if line.beat in out:
            raise ScriptError(f"chapter {chapter} has two lines for beat {line.beat!r}")
        out[line.beat] = render_line(line, values, bundle.synthetic)
    title = titles().get(chapter)
    if title and "title" not in out:
        out = {"title": f"Chapter {int(chapter)}: {title}.", **out}
    return out


def estimated_seconds(text: str) -> float:
    return max(1.5, len(text.split()) / WORDS_PER_SECOND + 0.4)


def line_id(chapter: str, beat: str) -> str:
    """The id a line is known by outside the scripts: recorded clips are named '<id>.wav'."""
    return f"ch{chapter}-{beat}"


_SENTENCE_END = re.compile(r"([.!?…][\"”’)]*)\s+(?=[\"“‘(]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """A line's sentences, in order (one caption and one synthesis call each)."""
    text = " ".join(text.split())
    return [s for s in _SENTENCE_END.sub("\\1\n", text).split("\n") if s.strip()] or [text]
