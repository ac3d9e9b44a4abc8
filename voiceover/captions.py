"""Caption files (SRT and WebVTT) from the narration cues the scenes record.

A scene's cue is one narration line: {"beat", "start", "end", "text", "segments": [{"start",
"end", "text"}, ...]} with one segment per spoken sentence, timed from the audio itself. Each
segment becomes one caption (two lines of at most LINE_CHARS). A sentence too long for one
caption, or spoken for longer than MAX_SECONDS, is cut at word boundaries into pieces whose times
split the sentence's time in proportion to their length; the first piece starts and the last ends
exactly with the speech. join_cues then lets a caption that would be shown for less than
MIN_SECONDS, or read at MAX_CPS or faster, stay on into the silence after it (never past the next
caption, nor past MAX_SECONDS), so it can be read; voiceover/captions_check.py checks the limits.
"""
from __future__ import annotations

import math
import textwrap
import unicodedata
from pathlib import Path

from onepass.data.files import write_text
from onepass.words.catalog import is_rtl

LINE_CHARS = 42      # a caption line that reads at 480p
MAX_LINES = 2
MIN_SECONDS = 1.0    # a cue is on screen at least this long (voiceover/captions_check.py checks all four)
MAX_SECONDS = 7.0    # ... and at most this long
MAX_CPS = 20.0       # read at under this many characters per second wherever the speech allows
RLM = "\u200f"       # RIGHT-TO-LEFT MARK: starts each line of an RTL language's caption


def reading_chars(text: str) -> int:
    """The characters a reader reads in a cue: its lines joined by one space."""
    return len(" ".join(line.strip() for line in text.split("\n")))


def directed(text: str, lang: str) -> str:
    """Caption text for a language: in a right-to-left language every line starts with a
    RIGHT-TO-LEFT MARK, so a player sets it right to left even when it opens with a name or a
    number ("GPT-2 ..."); players read the first strong character. Left-to-right text is as it is."""
    lines = [line.lstrip(RLM) for line in text.split("\n")]
    return "\n".join(RLM + line if is_rtl(lang) else line for line in lines)


LRI, PDI = "\u2066", "\u2069"   # LEFT-TO-RIGHT ISOLATE ... POP DIRECTIONAL ISOLATE


def _rtl_char(c: str) -> bool:
    """A letter or mark of a right-to-left script, or a character of the Arabic script's own
    (its comma, full stop, digits): it ends a left-to-right run."""
    return unicodedata.bidirectional(c) in ("R", "AL", "AN") or (not c.isascii() and not c.isspace()
                                                                 and unicodedata.bidirectional(c) in ("CS", "ON", "ET"))


def isolate_ltr(line: str) -> str:
    """A right-to-left caption line with each left-to-right run (Latin words, GPT-2's tokens,
    markup-looking text, with the ASCII punctuation in and around them) set in a LEFT-TO-RIGHT
    ISOLATE, so a bidi layout (libass) keeps its order: without it, the neutral characters at a
    run's ends ('<', '>', '"', '/') took the paragraph's direction and showed mirrored or moved
    ("<b>cat</b>" as ">b/<cat>b<"). A run with no left-to-right letter (a number alone) is left as
    it is; it already reads left to right."""
    out, run = [], []

    def flush():
        text = "".join(run)
        core = text.strip()
        if core and any(unicodedata.bidirectional(c) == "L" for c in core):
            lead = text[: len(text) - len(text.lstrip())]
            trail = text[len(text.rstrip()):]
            out.append(f"{lead}{LRI}{core}{PDI}{trail}")
        else:
            out.append(text)
        run.clear()
    for c in line:
        if _rtl_char(c) or c in (LRI, PDI, RLM):
            flush()
            out.append(c)
        else:
            run.append(c)
    flush()
    return "".join(out)


# A caption (a cue, or a cue's line) never ends inside a phrase: not on a lone function word of the
# film's languages (English, Spanish), not on a number whose unit or noun comes next ("32.8 | فیصد",
# "7,63 | millones"), and not before an Urdu postposition, which belongs to the word before it
# ("سب | سے", "ٹوکن | کے"). The words are the film's languages' own, so no language need be named:
# none of them is a word of another ("de", "la" are never English words of the film).
CLINGING = {
    "en": frozenset("of the a an to and in".split()),
    "es": frozenset("de la el en y que a por con los las del un una al o e lo su sus".split()),
}
UR_POSTPOSITIONS = frozenset("کا کی کے سے میں پر نے کو تک".split())
_DIRECTION_MARKS = dict.fromkeys(map(ord, RLM + "\u200e\u2066\u2067\u2068\u2069\u2060"))
_CLINGS = frozenset().union(*CLINGING.values())
_PUNCT = ",،;؛:.۔?؟!¡¿\"'«»“”()"


def _bare(word: str) -> str:
    return word.translate(_DIRECTION_MARKS)


def _number(word: str) -> bool:
    """A number as written, unit signs in it (12, 7,63, 32.8, 20%, −0.17), with no pause after it."""
    w = _bare(word)
    return bool(w) and w[-1] not in ",.;:" and any(c.isdigit() for c in w) and \
        all(c.isdigit() or c in ".,%−-" for c in w)


def holds_on(word: str, after: str) -> bool:
    """True where a caption must not end between `word` and `after` (the next word)."""
    w, nxt = _bare(word), _bare(after).strip(_PUNCT)
    return w.lower() in _CLINGS or _number(w) or nxt in UR_POSTPOSITIONS


def _allowed(words: list[str], i: int) -> bool:
    """A cut after words[i] keeps every phrase whole (the last word can always end a piece)."""
    return i + 1 >= len(words) or not holds_on(words[i], words[i + 1])


def _wrapped(text: str) -> tuple[list[str], bool]:
    """(a caption's lines, whether every phrase stays whole across them): textwrap's lines, unless
    its two lines would part a phrase (holds_on); then the latest break that keeps it whole with
    both lines within LINE_CHARS."""
    lines = textwrap.wrap(text, LINE_CHARS)
    if len(lines) != 2:
        return lines, True
    words = text.split()
    first = len(lines[0].split()) - 1
    if _allowed(words, first) or any(len(w) > LINE_CHARS for w in words):
        return lines, True
    for i in range(first - 1, -1, -1):
        a, b = " ".join(words[: i + 1]), " ".join(words[i + 1:])
        if len(b) > LINE_CHARS:
            break
        if _allowed(words, i):
            return [a, b], True
    return lines, False


def wrap(text: str) -> list[str]:
    """A caption's lines (at most LINE_CHARS each), broken between phrases wherever that fits."""
    return _wrapped(text)[0]


def _fits(piece: str, mark=None, whole: bool = False) -> bool:
    """The piece (as shown) fits MAX_LINES lines; `whole`: with no phrase parted between them."""
    lines, kept = _wrapped(mark(piece) if mark else piece)
    return len(lines) <= MAX_LINES and (kept or not whole)


def _pieces(text: str, at_least: int = 1, mark=None) -> list[str]:
    """The sentence cut into caption-sized pieces of whole words: as few pieces as fit (and at
    least `at_least`, when there are words enough), cut where the sentence pauses (after , ; : or
    a dash) when such a place is near a balanced cut. `mark`: each piece is shown as `mark(piece)`
    (a description's label), which must fit."""
    words = text.split()
    at_least = min(at_least, len(words))
    if _fits(text, mark, whole=True) and at_least <= 1:
        return [text]
    ends = [len(" ".join(words[: i + 1])) for i in range(len(words))]   # chars up to word i
    for whole in (True, False):       # phrases kept whole (holds_on) if any cut allows it; else anywhere
        n = max(-(-len(text) // (LINE_CHARS * MAX_LINES)), at_least)
        while n <= len(words):
            target = len(text) / n
            cuts, prev = [], -1
            for k in range(1, n):
                def cost(i):
                    pause = words[i][-1] in ",;:—–" or words[i] in ("-", "—", "–")
                    return abs(ends[i] - k * target) - (0.3 * target if pause else 0)
                options = range(prev + 1, len(words) - (n - k))
                options = [i for i in options if _allowed(words, i)] if whole else options
                if not options:
                    break
                prev = min(options, key=cost)
                cuts.append(prev)
            bounds = [-1] + cuts + [len(words) - 1]
            pieces = [" ".join(words[a + 1: b + 1]) for a, b in zip(bounds, bounds[1:])]
            if len(pieces) == n and all(p and _fits(p, mark, whole) for p in pieces):
                return pieces
            n += 1
    return [" ".join(words[i: i + 1]) for i in range(len(words))]


def caption_blocks(segment: dict, mark=None) -> list[dict]:
    """One spoken segment -> one or more caption blocks covering exactly its time, none longer
    than MAX_SECONDS. Each block carries `speech_cps`: how fast its sentence is spoken (characters
    per second), which the checker names when a caption must be read faster than MAX_CPS.
    `mark(text)`: every block's text marked so (the described cut's "[Description] ..."): each
    block carries the mark, and the marked text is what must fit two lines."""
    text = " ".join(segment["text"].split())
    start, end = segment["start"], segment["end"]
    at_least = math.ceil((end - start) / MAX_SECONDS - 1e-9)
    pieces = _pieces(text, at_least, mark)
    # pieces share the time by length: one more piece until the longest is shown MAX_SECONDS at most
    while (end - start) * max(map(len, pieces)) / sum(map(len, pieces)) > MAX_SECONDS and len(pieces) < len(text.split()):
        at_least = len(pieces) + 1
        pieces = _pieces(text, at_least, mark)
    speech = round(reading_chars(text) / max(end - start, 1e-3), 2)
    weights = [len(p) for p in pieces]
    out, t = [], start
    for i, (p, w) in enumerate(zip(pieces, weights)):
        stop = end if i == len(pieces) - 1 else t + (end - start) * w / sum(weights)
        shown = mark(p) if mark else p
        out.append({"start": t, "end": stop, "text": "\n".join(wrap(shown)), "speech_cps": speech})
        t = stop
    return out


READ_CPS = MAX_CPS - 1.0     # the rate a caption is held long enough for, when there is room after it
MAX_LAG = 0.25               # seconds a caption may come after its words, to leave a short one before it its second


def readable(cues: list[dict], until: float) -> list[dict]:
    """The captions, each one shown for at least MIN_SECONDS and long enough to be read at
    READ_CPS, where the silence after it allows: its end moves later, up to the next caption's
    start, `until` (the end of the picture) and MAX_SECONDS after its own start. A caption still
    under MIN_SECONDS (a two-word question with the next sentence right behind it) may push the
    next one's start up to MAX_LAG later, when that one stays readable; otherwise a caption
    appears when its words are spoken."""
    out = [dict(c) for c in cues]
    for i, c in enumerate(out):
        need = max(MIN_SECONDS, reading_chars(c["text"]) / READ_CPS)
        if c["end"] - c["start"] >= need:
            continue
        after = out[i + 1] if i + 1 < len(out) else None
        room = min(after["start"] if after else until, c["start"] + MAX_SECONDS)
        c["end"] = max(c["end"], min(c["start"] + need, room))
        short = c["start"] + MIN_SECONDS - c["end"]
        if after and 0 < short <= MAX_LAG and after["end"] - (after["start"] + short) >= max(
                MIN_SECONDS, reading_chars(after["text"]) / MAX_CPS):
            after["start"] += short
            c["end"] = after["start"]
    return out


def join_cues(per_scene: list[list[dict]], durations: list[float]) -> list[dict]:
    """Caption blocks for a chapter: each scene's segments shifted by the scenes before it."""
    out, offset = [], 0.0
    for cues, length in zip(per_scene, durations):
        for c in cues:
            for seg in c.get("segments") or [c]:
                for block in caption_blocks(seg):
                    if block["start"] >= length:
                        continue
                    out.append({"start": block["start"] + offset, "end": min(block["end"], length) + offset,
                                "text": block["text"], "speech_cps": block["speech_cps"]})
        offset += length
    return readable(out, offset)


def _stamp(seconds: float, sep: str, places: int = 3, hour_digits: int = 2) -> str:
    """A cue time: SRT 00:01:02,345 and WebVTT 00:01:02.345 (milliseconds); ASS 0:01:02.35
    (centiseconds, one hour digit)."""
    unit = 10 ** places
    n = int(round(seconds * unit))
    h, n = divmod(n, 3600 * unit)
    m, n = divmod(n, 60 * unit)
    s, n = divmod(n, unit)
    return f"{h:0{hour_digits}d}:{m:02d}:{s:02d}{sep}{n:0{places}d}"


def write_srt(cues: list[dict], path: Path, lang: str = "en"):
    blocks = [f"{i}\n{_stamp(c['start'], ',')} --> {_stamp(c['end'], ',')}\n{directed(c['text'], lang)}\n"
              for i, c in enumerate(cues, 1)]
    write_text(path, "\n".join(blocks))


def vtt_text(text: str) -> str:
    """Cue text as WebVTT requires: & < > escaped (else players read them as tags or, for
    '-->', as a timing line); SRT files keep the text plain."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def vtt_header(lang: str) -> str:
    """WEBVTT with its language: the header lines YouTube and other players read ('Language: ur')."""
    return f"WEBVTT\nKind: captions\nLanguage: {lang}\n\n"


def write_vtt(cues: list[dict], path: Path, lang: str = "en"):
    blocks = [f"{_stamp(c['start'], '.')} --> {_stamp(c['end'], '.')}\n{vtt_text(directed(c['text'], lang))}\n"
              for c in cues]
    write_text(path, vtt_header(lang) + "\n".join(blocks))


WORD_JOINER = "\u2060"   # invisible, zero width: keeps a backslash from starting a libass escape

# the header ffmpeg gives an SRT file on its way to libass (a 384 x 288 script space): burned
# captions keep its sizes, and the caller's force_style sets the look as before
ASS_HEADER = ("[Script Info]\nScriptType: v4.00+\nPlayResX: 384\nPlayResY: 288\nScaledBorderAndShadow: yes\n\n"
              "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, "
              "BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, "
              "Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n"
              "Style: Default,Arial,16,&Hffffff,&Hffffff,&H0,&H0,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0\n\n"
              "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n")


def ass_text(text: str) -> str:
    """Caption text libass draws exactly as written: it reads {...} as style overrides and \\N,
    \\n, \\h as escapes, so braces are escaped (\\{ \\}) and every backslash is followed by an
    invisible WORD JOINER; lines are joined by \\N. (An SRT file would not do: ffmpeg's SRT reader
    itself drops {\\...} and turns <i>, <font> into styles before libass sees the text.)"""
    text = text.replace("\\", "\\" + WORD_JOINER).replace("{", "\\{").replace("}", "\\}")
    return "\\N".join(text.split("\n"))


def write_ass(cues: list[dict], path: Path, lang: str = "en"):
    """The captions as an ASS script for libass (burned captions, an RTL thumbnail's title)."""
    def text(t: str) -> str:        # libass lays out bidi text itself: left-to-right runs isolated (isolate_ltr)
        t = directed(t, lang)
        return "\n".join(isolate_ltr(line) for line in t.split("\n")) if is_rtl(lang) else t
    lines = [f"Dialogue: 0,{_stamp(c['start'], '.', 2, 1)},{_stamp(c['end'], '.', 2, 1)},Default,,0,0,0,,"
             f"{ass_text(text(c['text']))}\n" for c in cues]
    write_text(path, ASS_HEADER + "".join(lines))


def read_srt(path: Path) -> list[dict]:
    """The blocks of an SRT file written by write_srt: [{"start", "end", "text"}] in seconds."""
    def secs(stamp: str) -> float:
        hms, ms = stamp.strip().split(",")
        h, m, s = hms.split(":")
        return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000
    out = []
    for block in Path(path).read_text(encoding="utf-8").strip().split("\n\n"):
        lines = block.splitlines()
        a, b = lines[1].split(" --> ")
        out.append({"start": secs(a), "end": secs(b), "text": "\n".join(lines[2:])})
    return out
