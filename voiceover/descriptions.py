"""Audio descriptions as timed pieces: where in a scene each piece of a beat's description belongs,
and the WebVTT track of kind `descriptions` that carries them.

A beat's description (`chNN-<beat>.describe`, onepass.voiceover.script.chapter_descriptions) is cut at its
markers into pieces: the words before its first marker describe the picture as the beat opens,
the words after marker x the picture once x has fired. Each piece has an anchor, the moment in the
scene it is spoken at (the picture holds there in the described cut; a player reads it there from
the descriptions track). The anchor is where the narration pauses after the picture has moved:

* after marker x: the end of the sentence in which x is said (the scene's cue records it), or
  the moment the line's next marker is said if that comes first;
* before the first marker: the end of the line's first sentence, or the beat's start when the
  line's first marker is said before that (the picture moves at once).

So a pause never cuts a word, and the picture it holds shows what the piece describes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from onepass.data.files import write_text
from onepass.voiceover.captions import _stamp, directed, vtt_text
from onepass.words.markup import Filled


@dataclass(frozen=True)
class Piece:
    beat: str
    mark: str | None        # the marker it follows; None: the beat's opening picture
    text: str
    at: float = 0.0         # seconds, in the scene (anchor) or the chapter (chapter_pieces)


def split(beat: str, description: Filled) -> list[Piece]:
    """A beat's description cut at its markers: [(None, words before the first)] + one piece per
    marker; empty pieces are dropped."""
    text, marks = description.text, list(description.marks)
    bounds = [(None, 0)] + marks + [("", len(text))]
    out = []
    for (name, a), (_, b) in zip(bounds, bounds[1:]):
        piece = text[a:b].strip()
        if piece:
            out.append(Piece(beat, name, piece))
    return out


def anchor(cue: dict, mark: str | None) -> float:
    """The scene time a piece of beat `cue` is spoken at (see the module's docstring)."""
    said = sorted((v[0], v[1], name) for name, v in (cue.get("marks") or {}).items())
    if mark is None:
        first_end = (cue.get("segments") or [cue])[0]["end"]
        start = cue.get("clip_start", cue["start"])
        return first_end if not said or said[0][0] >= first_end - 1e-6 else start
    for i, (t, sentence_end, name) in enumerate(said):
        if name == mark:
            later = [x[0] for x in said[i + 1:] if x[0] > t + 1e-6]
            return min([sentence_end] + later)
    raise KeyError(f"beat {cue.get('beat')}: marker {mark!r} was not said (the scene's cues lack it)")


def cue_pieces(cue: dict, description: Filled) -> list[Piece]:
    """The pieces of one beat's description, each with its anchor (scene time)."""
    return [Piece(p.beat, p.mark, p.text, anchor(cue, p.mark)) for p in split(cue["beat"], description)]


def vtt_header(lang: str) -> str:
    return f"WEBVTT\nKind: descriptions\nLanguage: {lang}\n\n"


def write_vtt(pieces: list[Piece], path: Path, lang: str, until: float, seconds) -> None:
    """The descriptions track: one cue per piece (pieces at one anchor read as one), starting at its
    anchor and lasting as long as it takes to say (`seconds(text)`), but not past the next cue
    nor `until` (the end of the video); at least 0.5 s where the video allows. Each cue names its
    beat and marker (`chNN-beat` or `chNN-beat@mark`) as its identifier."""
    groups = grouped(pieces)
    blocks = []
    for i, (at, group) in enumerate(groups):
        text = " ".join(p.text for p in group)
        nxt = groups[i + 1][0] if i + 1 < len(groups) else until
        end = min(at + max(0.5, seconds(text)), max(nxt, at + 0.001), max(until, at + 0.001))
        ident = group[0].beat + (f"@{group[0].mark}" if group[0].mark else "")
        blocks.append(f"{ident}\n{_stamp(at, '.')} --> {_stamp(end, '.')}\n{vtt_text(directed(text, lang))}\n")
    write_text(path, vtt_header(lang) + "\n".join(blocks))


def grouped(pieces: list[Piece], frame: float = 1e-3) -> list[tuple[float, list[Piece]]]:
    """Pieces in time order, those at one moment (within `frame` seconds) together: [(at, pieces)]."""
    out: list[tuple[float, list[Piece]]] = []
    for p in sorted(pieces, key=lambda p: p.at):
        if out and p.at - out[-1][0] < frame:
            out[-1][1].append(p)
        else:
            out.append((p.at, [p]))
    return out
