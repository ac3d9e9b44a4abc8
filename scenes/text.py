"""The text engine: every string the film draws goes through `label` (plain Pango Text, never TeX).

Render processes switch on a cache (`enable_text_cache`): labels already built are copied, and
compact monospace numbers are composed from glyph outlines shaped once (`MonoGlyphs`). Given a
folder, the cache also keeps every label it builds there, for the next scene process (`Shelf`).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
from manim import DOWN, RIGHT, Text, VGroup

from onepass.engine import glyphs, stored, text as engine_text
from onepass.engine.text import compact_text, composed, glyphs_of, light, set_glyphs, set_string
from onepass.scenes import style as S


def label(text: str, size: int = S.BODY_SIZE, color=S.INK, mono: bool = False, compact: bool = False,
          **kw) -> Text:
    """Plain text (never markup, never TeX): safe for user-provided strings.

    compact=True merges the glyphs into one shape (see `compact_text`): much cheaper to copy,
    transform and draw, but its letters can no longer be picked out one by one."""
    key = None
    if _TEXT_CACHE is not None:
        key = (text, size, str(color), mono, compact, S.RTL, tuple(sorted((k, repr(v)) for k, v in kw.items())))
        hit = _TEXT_CACHE.get(key)
        if hit is not None:
            return hit.copy()
        if mono and compact and not kw:
            t = MonoGlyphs.compose(text, max(size, S.SMALL), color)
            if t is not None:
                return t          # as cheap as a cached copy: not kept
    t = shelved(key, lambda: _build(text, size, color, mono, compact, **kw))
    if key is not None:
        _TEXT_CACHE[key] = t.copy()
    return t


def _build(text: str, size: int, color, mono: bool, compact: bool, **kw) -> Text:
    size = max(size, S.SMALL)
    if S.RTL and has_rtl(text):          # a right-to-left film's words, in its face even where mono was asked
        t = _rtl_text(text, size, color, **kw)
    else:
        t = Text(ltr_safe(text), font=S.MONO if mono else S.SANS, font_size=size, color=color, **kw)
    if compact:
        compact_text(t)
    return light(t)


# Fast text, for render processes (film/run/render_job.py switches it on): labels already built
# are copied instead of shaped and parsed again, and compact monospace numbers are put together
# from glyph outlines shaped once (a copy or a composition costs a few per cent of a Pango
# build). Off elsewhere, so that tests recording every Text construction see each one.
_TEXT_CACHE: dict | None = None
_SHELF: "Shelf | None" = None


def enable_text_cache(on: bool = True, folder: Path | None = None):
    """Labels built once per process; with `folder`, once per machine (`Shelf`)."""
    global _TEXT_CACHE, _SHELF
    _TEXT_CACHE = {} if on else None
    _SHELF = Shelf(Path(folder)) if on and folder else None
    MonoGlyphs.fonts.clear()


def shelved(key, build):
    """`build()`, or what the shelf kept under `key` from an earlier build (then stored there);
    a plain build where no shelf is on (or no key)."""
    if key is None or _SHELF is None:
        return build()
    kept = _SHELF.get(key)
    if kept is None:
        kept = build()
        _SHELF.put(key, kept)
    return kept


class Shelf:
    """Built labels kept on disk between scene processes: building one (Pango lays it out, then
    manim parses the SVG) takes about 100 ms, loading it back about 5. A label is stored under a
    hash of everything its outline depends on: its arguments (the cache key), the film's faces and
    smallest size, this module's and engine/text.py's code, manim's and ManimPango's versions and
    the fonts installed (their files' names, sizes and times); anything else changed gives another
    name, never a stale outline. A label is stored as data only (engine/stored.py: JSON and arrays in
    a safetensors file, never a pickle: nothing in the cache folder can run as code), tagged with its
    name; a file that is not one, is damaged, or is another label's is built again and stored over.
    Stores are atomic, so processes sharing the folder never see half a file."""

    FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.fonts", "~/.local/share/fonts")

    def __init__(self, folder: Path):
        self.folder = folder
        self._salt: bytes | None = None

    def salt(self) -> bytes:
        if self._salt is None:
            import manim
            import manimpango
            h = hashlib.sha256()
            h.update(Path(__file__).read_bytes())
            h.update(Path(engine_text.__file__).read_bytes())     # what it does to a Text's internals
            h.update(Path(glyphs.__file__).read_bytes())          # how a Text's SVG is read
            h.update(Path(stored.__file__).read_bytes())          # how a label is written down
            h.update(repr((manim.__version__, manimpango.__version__, S.SANS, S.MONO, S.RTL_FACE, S.SMALL)).encode())
            for root in self.FONT_DIRS:
                for path, dirs, files in sorted(os.walk(os.path.expanduser(root))):
                    dirs.sort()
                    for name in sorted(files):
                        with contextlib.suppress(OSError):
                            st = os.stat(os.path.join(path, name))
                            h.update(f"{path}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
            self._salt = h.digest()
        return self._salt

    SUFFIX = ".label"
    LARGEST = 64 * 2 ** 20        # a label is kilobytes: a bigger file is not one (and is not read)

    def name(self, key) -> str:
        return hashlib.sha256(self.salt() + repr(key).encode()).hexdigest()[:32]

    def path(self, key) -> Path:
        return self.folder / (self.name(key) + self.SUFFIX)

    def get(self, key):
        try:
            with open(self.path(key), "rb") as f:
                data = f.read(self.LARGEST + 1)
            if len(data) > self.LARGEST:
                return None
            return stored.loads(data, self.name(key))
        except (OSError, stored.StoredError, RecursionError):   # absent, damaged, planted: build it again
            return None

    def put(self, key, mob) -> None:
        data = stored.dumps(mob, self.name(key))
        if data is None:          # holds something the format does not: built by every process instead
            return
        with contextlib.suppress(OSError):     # a full disk, a read-only folder: the next process builds it
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".label.", dir=self.folder)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, self.path(key))
            finally:
                Path(tmp).unlink(missing_ok=True)


SPACES = " \u00a0\u202f"     # a space, and the no-break spaces locales put before a % sign


class MonoGlyphs:
    """Outlines of the monospace face's number glyphs at one size, shaped once by Pango.

    A monospace face puts every glyph one advance after the last and does not kern, so a
    number made of these glyphs, each shifted to its column, has the outline Pango would
    draw for the same string (tests/test_pipeline.py compares the two).
    """

    CHARS = "0123456789.,+−-%∞<>#×:/()"
    fonts: dict[int, "MonoGlyphs | None"] = {}

    def __init__(self, size: int):
        # ends with the first glyph again
        ref = shelved(("MonoGlyphs", self.CHARS, size),
                      lambda: Text(self.CHARS + self.CHARS[0], font=S.MONO, font_size=size))
        glyphs = glyphs_of(ref)
        if len(glyphs) != len(self.CHARS) + 1:
            raise ValueError("ligatures or missing glyphs")
        self.advance = (ref[-1].get_left()[0] - ref[0].get_left()[0]) / len(self.CHARS)
        self.points = {c: g.points - np.array([i * self.advance, 0, 0])
                       for i, (c, g) in enumerate(zip(self.CHARS, glyphs))}
        self.template = light(compact_text(ref))

    @classmethod
    def at(cls, size: int) -> "MonoGlyphs | None":
        """The glyphs at one size, shaped on first use (None where the face cannot be composed)."""
        if size not in cls.fonts:
            try:
                cls.fonts[size] = cls(size)
            except ValueError:
                cls.fonts[size] = None
        return cls.fonts[size]

    def outline(self, text: str) -> np.ndarray:
        """The points of `text` (spaces leave a column empty), its first column where CHARS[0] is."""
        return np.concatenate([self.points[c] + np.array([i * self.advance, 0, 0])
                               for i, c in enumerate(text) if c not in SPACES])

    @classmethod
    def compose(cls, text: str, size: int, color) -> Text | None:
        if not text.strip() or any(c not in cls.CHARS and c not in SPACES for c in text):
            return None
        font = cls.at(size)
        if font is None:
            return None
        return composed(font.template, font.outline(text), text, color, "".join(c for c in text if c not in SPACES))


def ltr_safe(text: str) -> str:
    """Short text that starts right-to-left (Arabic, Hebrew) comes out of Pango as an empty
    mobject; a leading LEFT-TO-RIGHT MARK keeps it visible (the RTL run still reads right to left)."""
    for c in text:
        kind = unicodedata.bidirectional(c)
        if kind in ("R", "AL"):
            return "\u200e" + text
        if kind == "L":
            break
    return text


def has_rtl(text: str) -> bool:
    return any(unicodedata.bidirectional(c) in ("R", "AL") for c in text)


# a number among words: its sign or percent sign (not a hyphen after a word), its digits with their
# separators, then its percent or per-mille sign, or a times sign written against it ("32×": slowed 32 times)
_NUMBER = re.compile(r"(?:(?<!\w)[−+\-%٪])?[0-9]+(?:[.,:/][0-9]+)*(?:[\u00a0\u202f]?[%٪‰]|×)?")
LRI, RLI, FSI, PDI = "\u2066", "\u2067", "\u2068", "\u2069"


def isolate_numbers(line: str) -> str:
    """`line` with each number that follows Arabic-script words set in a LEFT-TO-RIGHT ISOLATE.

    The bidi algorithm reads European digits after an Arabic letter as Arabic numbers (rule W2),
    and an Arabic number does not take its percent sign or sign along (W5 is for European numbers
    only): among Urdu words "35.1%" drew as "%35.1" and "−5" as "5−". Inside an isolate the digits
    are European again and keep their signs, as the catalogs' own isolates (⁦−∞⁩) do; a times sign
    written against a number goes with it ("32×" drew as "×32"). Numbers
    already in an isolate, or after a Latin word (GPT-2), are left as they are."""
    out, last, depth, strong = [], 0, 0, None
    for m in _NUMBER.finditer(line):
        for c in line[last:m.start()]:
            if c in (LRI, RLI, FSI):
                depth += 1
            elif c == PDI:
                depth = max(depth - 1, 0)
            elif depth == 0 and unicodedata.bidirectional(c) in ("L", "R", "AL"):
                strong = unicodedata.bidirectional(c)
        out.append(line[last:m.start()])
        nxt = line[m.end():m.end() + 1]
        bare = depth == 0 and strong == "AL" and not (nxt and unicodedata.bidirectional(nxt) == "L")
        out.append(f"{LRI}{m.group(0)}{PDI}" if bare else m.group(0))
        last = m.end()
    out.append(line[last:])
    return "".join(out)


def _rtl_text(text: str, size: int, color, **kw) -> Text:
    """A right-to-left film's words (Urdu): each line an RTL run, lines aligned on the right.

    Manim lays text out in a left-to-right paragraph and loses an RTL paragraph's glyphs, so each
    line is wrapped as LEFT-TO-RIGHT MARK + RIGHT-TO-LEFT ISOLATE ... POP: the paragraph is LTR to
    manim while the line inside reads right to left (a Latin name or a number inside it sits where
    an Urdu reader expects it; a number after Urdu words is isolated: `isolate_numbers`). Lines of a
    multi-line label are set one by one and aligned right."""
    font = kw.pop("font", S.RTL_FACE)
    lines = [isolate_numbers(line) for line in text.split("\n")]
    wrap = [f"\u200e\u2067{line}\u2069" for line in lines]
    t = Text("\n".join(wrap), font=font, font_size=size, color=color, **kw)
    if len(lines) > 1:
        parts = [Text(w, font=font, font_size=size, color=color, **kw) for w in wrap if w.strip("\u200e\u2067\u2069 ")]
        block = VGroup(*parts).arrange(DOWN, aligned_edge=RIGHT, buff=0)
        gap = (t.height - block.height) / max(len(parts) - 1, 1)
        block.arrange(DOWN, aligned_edge=RIGHT, buff=max(gap, 0.2 * t.height / len(lines)))
        block.move_to(t)
        set_glyphs(t, [g for part in parts for g in glyphs_of(part)])
    return set_string(t, text)


def fit_width(mob, max_width: float):
    """Scale down (never up) so a mobject fits a width."""
    if mob.width > max_width:
        mob.scale_to_fit_width(max_width)
    return mob


LEGIBLE = 0.93      # of S.SMALL: the smallest a label may shrink to (tests/helpers.py frame_checks)


def _balanced(words: list[str], n: int) -> list[str]:
    """`words` in at most n lines of about equal length: a line breaks before the word whose middle
    would pass the line's share of the characters."""
    total, done, lines = len(" ".join(words)), 0, [[]]
    for w in words:
        if lines[-1] and len(lines) < n and done + len(w) / 2 > total * len(lines) / n:
            lines.append([])
        lines[-1].append(w)
        done += len(w) + 1
    return [" ".join(line) for line in lines]


def fit_lines(text: str, size: int, color, max_width: float, max_lines: int = 3, **kw) -> Text:
    """A label no wider than max_width: as it is when it fits; shrunk a little (as fit_width) while
    it stays legible; otherwise broken at spaces into 2 (or up to max_lines) balanced lines, so that
    longer words (a translation) wrap instead of shrinking away. Text that fits is built exactly as
    label() builds it."""
    one = label(text, size, color, **kw)
    legible = LEGIBLE * S.SMALL
    if one.width <= max_width or one.font_size * max_width / one.width >= legible or " " not in text.strip():
        return fit_width(one, max_width)
    words = text.split()
    best = one
    for n in range(2, min(max_lines, len(words)) + 1):
        best = label("\n".join(_balanced(words, n)), size, color, **kw)
        if best.width <= max_width or best.font_size * max_width / best.width >= legible:
            break
    return fit_width(best, max_width)


# height of capitals plus descenders ("Ag") in DejaVu Sans Mono per point of font size, measured
# once offline: building a Text here would add a Text to every scene and race on manim's SVG cache
_LINE_HEIGHT_PER_PT = 0.0131


def line_height(size: int) -> float:
    """Capitals plus descenders of a line of text at `size` (never below S.SMALL), in manim units."""
    return _LINE_HEIGHT_PER_PT * max(size, S.SMALL)
