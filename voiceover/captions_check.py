"""Captions people can read: the limits every caption cue keeps, and a checker for them.

A cue passes when it has at most MAX_LINES lines of at most LINE_CHARS characters, is shown for
MIN_SECONDS to MAX_SECONDS, and is read at under MAX_CPS characters per second. The reading rate
is the one limit the speech itself can break: a sentence spoken faster than MAX_CPS, with the
next caption right behind it, cannot be shown slower without running behind the voice. Such a
cue is reported with that reason (`Problem.excused`) and does not fail; every other cue over a
limit fails. The film's cues say how fast their sentence was spoken (`speech_cps`, written by
onepass.voiceover.captions.caption_blocks); a caption file read from disk does not, so there every cue
over the rate fails.

`check(cues)` -> [Problem], `Report.of(cues)` -> the counts (`line()` a one-line summary),
`check_file(path)` reads an SRT or WebVTT file. On the command line:

    python -m onepass.voiceover.captions_check FILE.vtt|FILE.srt [...]

prints every cue over a limit and exits 1 when any cue fails.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from onepass.voiceover.captions import (
    LINE_CHARS, MAX_LINES, MAX_CPS, MAX_SECONDS, MIN_SECONDS, RLM, reading_chars,
)

# invisible marks a caption carries for direction (RLM, LRI ... PDI): never counted as characters
_INVISIBLE = dict.fromkeys(map(ord, RLM + "\u2066\u2067\u2068\u2069\u200e\u2060"))
TOLERANCE = 0.005     # seconds: cue times are written in milliseconds


def visible(line: str) -> str:
    return line.translate(_INVISIBLE)


@dataclass
class Problem:
    index: int            # 1-based position of the cue
    kind: str             # "lines", "length", "short", "long", "cps"
    value: float
    limit: float
    text: str
    why: str = ""         # for "cps": the reason it could not be slower (or why it fails)
    excused: bool = False  # the speech itself is faster than the limit there: reported, not failed

    def __str__(self) -> str:
        what = {"lines": "lines", "length": "characters in a line", "short": "seconds shown",
                "long": "seconds shown", "cps": "characters per second"}[self.kind]
        sign = "<" if self.kind == "short" else ">"
        note = f" ({self.why})" if self.why else ""
        flat = " / ".join(visible(t) for t in self.text.split("\n"))
        return f"cue {self.index}: {self.value:g} {what} {sign} {self.limit:g}{note}: {flat!r}"


def check(cues: list[dict]) -> list[Problem]:
    """Every limit each cue breaks, in cue order. A cue is {"start", "end", "text"} (seconds; lines
    split by \\n), optionally with "speech_cps" (how fast its sentence was spoken)."""
    out: list[Problem] = []
    for i, c in enumerate(cues, 1):
        text = c["text"]
        lines = [visible(line) for line in text.split("\n")]
        seconds = c["end"] - c["start"]
        if len(lines) > MAX_LINES:
            out.append(Problem(i, "lines", len(lines), MAX_LINES, text))
        longest = max((len(line) for line in lines), default=0)
        if longest > LINE_CHARS:
            out.append(Problem(i, "length", longest, LINE_CHARS, text))
        if seconds < MIN_SECONDS - TOLERANCE:
            out.append(Problem(i, "short", round(seconds, 2), MIN_SECONDS, text))
        if seconds > MAX_SECONDS + TOLERANCE:
            out.append(Problem(i, "long", round(seconds, 2), MAX_SECONDS, text))
        cps = reading_chars(visible(text)) / max(seconds, 1e-3)
        if cps >= MAX_CPS:
            speech = c.get("speech_cps")
            if speech is None:
                why, excused = "", False
            elif speech >= MAX_CPS:
                why, excused = f"the narration itself speaks {speech:.1f} characters per second here", True
            else:
                why, excused = f"the narration speaks {speech:.1f} characters per second: cut or time it slower", False
            out.append(Problem(i, "cps", round(cps, 1), MAX_CPS, text, why, excused))
    return out


def failures(cues: list[dict]) -> list[Problem]:
    """The problems that fail: every one but a rate the speech itself forces."""
    return [p for p in check(cues) if not p.excused]


@dataclass
class Report:
    cues: int = 0
    length: int = 0       # cues with a line over LINE_CHARS
    lines: int = 0        # cues over MAX_LINES lines
    short: int = 0
    long: int = 0
    cps: int = 0          # cues read at MAX_CPS or more
    cps_excused: int = 0  # ... of which the speech itself is that fast
    problems: list[Problem] = field(default_factory=list)

    @classmethod
    def of(cls, cues: list[dict]) -> "Report":
        problems = check(cues)
        r = cls(cues=len(cues), problems=problems)
        for p in problems:
            setattr(r, p.kind, getattr(r, p.kind) + 1)
            r.cps_excused += p.kind == "cps" and p.excused
        return r

    @property
    def ok(self) -> bool:
        return not any(not p.excused for p in self.problems)

    def line(self, name: str = "captions") -> str:
        """One line: '<name>: 84 cues, all within the limits' or the counts over each limit."""
        if not self.problems:
            return f"{name}: {self.cues} cues, all within the limits ({MAX_LINES} lines of {LINE_CHARS}, " \
                   f"{MIN_SECONDS:g}-{MAX_SECONDS:g} s, under {MAX_CPS:g} characters/s)"
        parts = [f"{n} {what}" for n, what in ((self.lines, f"over {MAX_LINES} lines"),
                                              (self.length, f"a line over {LINE_CHARS} characters"),
                                              (self.short, f"under {MIN_SECONDS:g} s"),
                                              (self.long, f"over {MAX_SECONDS:g} s")) if n]
        if self.cps:
            parts.append(f"{self.cps} at {MAX_CPS:g}+ characters/s"
                         + (f" ({self.cps_excused} where the narration itself is that fast)" if self.cps_excused else ""))
        return f"{name}: {self.cues} cues, " + "; ".join(parts)


def narration_cues(chapter: str, bundle, words=None, service=None) -> list[dict]:
    """A chapter's captions without building a scene: each narration line (onepass.voiceover.script.
    chapter_lines, the words the scenes speak) timed sentence by sentence by `service` (default
    the silent voice: the estimated speaking rate; an espeak service times them from its audio),
    the lines one after another with the film's gap between them, cut by join_cues. The scenes
    only ever add time between lines (a beat waits for its picture), so a chapter's real captions
    have at least this much room."""
    from onepass.voiceover import audio, services
    from onepass.voiceover.captions import join_cues
    from onepass.voiceover.script import chapter_lines, line_id
    service = service or services.SilentService()
    cues, t = [], 0.0
    for beat, line in chapter_lines(chapter, bundle, bundle.ledger(), words).items():
        lang = getattr(words, "lang", "en")
        _clip, segments, _stats = service.produce(line.text, line_id(chapter, beat), lang=lang)
        segs = [{"start": s["start"] + t, "end": s["end"] + t, "text": s["text"]} for s in segments]
        cues.append({"beat": beat, "start": segs[0]["start"], "end": segs[-1]["end"], "text": line.text,
                     "segments": segs})
        t = segs[-1]["end"] + audio.LINE_GAP
    return join_cues([cues], [t])


_TIME = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{3})")


def _seconds(stamp: str) -> float:
    m = _TIME.fullmatch(stamp.strip())
    if not m:
        raise ValueError(f"not a cue time: {stamp!r}")
    h, mi, s, ms = m.groups()
    return int(h or 0) * 3600 + int(mi) * 60 + int(s) + int(ms) / 1000


def read_cues(text: str) -> list[dict]:
    """The cues of an SRT or WebVTT file's text: [{"start", "end", "text"}]. WebVTT's header,
    NOTE/STYLE/REGION blocks, cue ids and cue settings are skipped; its escapes and tags read as text."""
    out = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip()):
        lines = block.split("\n")
        at = next((k for k, line in enumerate(lines) if "-->" in line), None)
        if at is None:
            continue
        a, b = lines[at].split("-->")
        body = "\n".join(lines[at + 1:])
        body = re.sub(r"</?[a-zA-Z][^>]*>", "", body)          # WebVTT/SRT tags: <i>, <v Name>, <c.x>
        body = body.replace("&lt;", "<").replace("&gt;", ">").replace("&nbsp;", "\u00a0").replace("&amp;", "&")
        out.append({"start": _seconds(a), "end": _seconds(b.split()[0]), "text": body})
    return out


def check_file(path: Path) -> Report:
    return Report.of(read_cues(Path(path).read_text(encoding="utf-8-sig")))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    bad = 0
    for name in args:
        try:
            report = check_file(Path(name))
        except (OSError, ValueError, UnicodeDecodeError) as e:
            print(f"{name}: cannot read it: {e}", file=sys.stderr)
            bad += 1
            continue
        print(report.line(name))
        for p in report.problems:
            print(f"  {p}")
        bad += not report.ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
