"""Audio description of a chapter (WCAG 1.2.3, 1.2.5, 1.2.7, 1.2.8): its descriptions track, its
transcript and, with `--described`, its audio-described cut.

Beside a chapter's `X.mp4`, for every render (cheap: no video is touched):

    X.descriptions.vtt   WebVTT of kind `descriptions`: each piece of each beat's description
                         (voiceover/descriptions.py) at its anchor in the standard chapter
    X.transcript.html    beat by beat under headings: the narration, the descriptions and the
    X.transcript.txt     numbers the line names, in the film's language and direction

With `--described` (write_described):

    X.described.mp4      the standard chapter cut at each anchor, where the picture holds while the
                         film's voice (the narration's service, mastered the same) says the
                         description; the narration waits (extended audio description)
    X.described.srt/.vtt its captions: the narration's, moved by the holds before them, and each
                         description's, marked as one (kit:description-caption)

The standard chapter is only read. The described cut is re-encoded once (H.264, as burnt captions
are); a hold is the frame on screen at its anchor, repeated for as many frames as the speech lasts
(rounded up to a whole frame); the audio gets the clip there, padded to the hold's length, so picture
and sound stay within a frame. A cut is made again only when the chapter, its descriptions or the
voice changed (`.scenes/X.described.json`).
"""
from __future__ import annotations

import hashlib
import html
import json
import math
import os
import tempfile
import textwrap
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from onepass.data import home
from onepass.data.bundle import sha256_file
from onepass.data.files import discard, replace_together, temp_name, write_json, write_text
from onepass.film.kit.publish import beat_title, stamp
from onepass.film.kit.tables import Table, chapter_tables, ledger_table, table_html, table_text
from onepass.voiceover import audio, captions, mixdown, script
from onepass.voiceover.descriptions import Piece, cue_pieces, grouped, write_vtt
from onepass.voiceover.media import stream_seconds, video_facts
from onepass.words.catalog import is_rtl

DESCRIBED = ".described"


def described_path(final: Path) -> Path:
    return final.with_suffix(f"{DESCRIBED}.mp4")


def sidecar_paths(final: Path) -> dict[str, Path]:
    return {"vtt": final.with_suffix(".descriptions.vtt"), "html": final.with_suffix(".transcript.html"),
            "txt": final.with_suffix(".transcript.txt")}


def scene_cues(result) -> list[tuple[float, list[dict]]]:
    """(offset of the scene in the chapter, its cues) for each scene of a ChapterResult."""
    out, offset = [], 0.0
    for s in result.scenes:
        out.append((offset, json.loads(s.job.cues.read_text(encoding="utf-8"))))
        offset += s.seconds
    return out


def chapter_pieces(result, bundle, words) -> list[Piece]:
    """Every piece of the chapter's descriptions, `at` its anchor in the standard chapter (seconds)."""
    described = script.chapter_descriptions(result.chapter, bundle, bundle.ledger(), words)
    out = []
    for offset, cues in scene_cues(result):
        for cue in cues:
            if cue["beat"] in described:
                out += [Piece(p.beat, p.mark, p.text, round(offset + p.at, 4))
                        for p in cue_pieces(cue, described[cue["beat"]])]
    return out


def beat_starts(result) -> dict[str, float]:
    return {c["beat"]: offset + c.get("clip_start", c["start"]) for offset, cues in scene_cues(result) for c in cues}


# ---------------------------------------------------------------------------------------------
# the descriptions track and the transcript

@dataclass
class Beat:
    beat: str
    title: str
    start: float
    narration: str
    descriptions: list[str]
    numbers: list[tuple[str, str]]
    tables: list = field(default_factory=list)     # film/kit/tables.py Table: the numbers its picture shows


def transcript_beats(result, bundle, words, pieces: list[Piece]) -> list[Beat]:
    """The chapter beat by beat; `pieces` are its chapter_pieces (the caller has them already)."""
    from onepass.film.kit.handout import beat_numbers        # noqa: PLC0415  (the handout's numbers: the values each line names)
    lines = script.chapter_lines(result.chapter, bundle, bundle.ledger(), words)
    numbers = beat_numbers(result.chapter, bundle, words)
    tables = chapter_tables(result.chapter, bundle, words)
    starts = beat_starts(result)
    heading = words.text("film:heading", chapter=result.chapter, title=result.title)
    return [Beat(b, beat_title(b, lines[b].text, heading), starts[b], lines[b].text,
                 [p.text for p in pieces if p.beat == b], numbers.get(b, []), tables.get(b, []))
            for b in sorted(starts, key=starts.get) if b in lines]


CSS = """body { font-family: "DejaVu Sans", "Noto Naskh Arabic", "Noto Sans", sans-serif; max-width: 46em;
margin: 1.5em auto; padding: 0 1em; line-height: 1.5; color: #111; background: #fff; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #555; }
.time { color: #333; font-variant-numeric: tabular-nums; margin-inline-end: 0.5em; }
dt { font-weight: bold; margin-top: 0.5em; } dd { margin-inline-start: 1.2em; }
dd.description { font-style: italic; }
[dir=rtl] dd.description { font-style: normal; }
table { border-collapse: collapse; margin: 0.6em 0; font-variant-numeric: tabular-nums; min-width: min(100%, 26em); }
caption { text-align: start; font-weight: bold; padding-bottom: 0.2em; }
th, td { border: 1px solid #555; padding: 0.15em 0.5em; }
td { text-align: end; } th { text-align: start; }"""


def meter_table(chapter: str, bundle, words) -> Table | None:
    """The chapter's Σ FLOPs meter as a table: each step it pays, its FLOPs and the running total
    (None for a chapter whose meter pays nothing)."""
    from onepass.film.kit.handout import ledger_rows, paid_keys     # noqa: PLC0415  (the handout's ledger: one reading)
    if not paid_keys(chapter, bundle.ledger()):
        return None
    return ledger_table(*ledger_rows(chapter, bundle, words), words)


def transcript_html(beats: list[Beat], heading: str, words, meter: Table | None = None) -> str:
    lang, e = words.lang, html.escape
    direction = "rtl" if is_rtl(lang) else "ltr"
    narration, described, shown = (words.text("kit:handout-narration"), words.text("kit:deck-describe"),
                                    words.text("kit:handout-numbers"))
    title = f"{words.text('kit:deck-transcript')}: {heading}"
    body = []
    for i, b in enumerate(beats):
        hid = f"beat-{i + 1}"
        parts = [f'<section aria-labelledby="{hid}">',
                 f'<h2 id="{hid}"><span class="time">{stamp(b.start)}</span> {e(b.title)}</h2>', "<dl>",
                 f"<dt>{e(narration)}</dt>", f"<dd>{e(b.narration)}</dd>"]
        if b.descriptions:
            parts += [f"<dt>{e(described)}</dt>"] + [f'<dd class="description">{e(d)}</dd>' for d in b.descriptions]
        if b.numbers:
            parts += [f"<dt>{e(shown)}</dt>", "<dd><ul>"] + \
                     [f"<li><bdi>{e(v)}</bdi>: {e(c)}</li>" for v, c in b.numbers] + ["</ul></dd>"]
        parts += ["</dl>"] + [table_html(t) for t in b.tables] + ["</section>"]
        body.append("\n".join(parts))
    if meter is not None:           # the Σ FLOPs meter's steps and running totals
        body.append(f'<section aria-label="{e(meter.caption)}">\n' + table_html(meter) + "\n</section>")
    return (f'<!DOCTYPE html>\n<html lang="{e(lang)}" dir="{direction}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{e(title)}</title>\n'
            f"<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n<h1>{e(heading)}</h1>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


def transcript_text(beats: list[Beat], heading: str, words, meter: Table | None = None) -> str:
    narration, described, shown = (words.text("kit:handout-narration"), words.text("kit:deck-describe"),
                                   words.text("kit:handout-numbers"))
    out = [heading, "=" * max(8, len(heading)), ""]
    for b in beats:
        out += [f"{stamp(b.start)} {b.title}", "-" * max(8, len(b.title) + 5), f"{narration}: {b.narration}"]
        out += [f"{described}: {d}" for d in b.descriptions]
        if b.numbers:
            out += [f"{shown}:"] + [f"  {v}: {c}" for v, c in b.numbers]
        for t in b.tables:
            out += table_text(t)
        out.append("")
    if meter is not None:
        out += table_text(meter) + [""]
    return "\n".join(out)


def write_tracks(results, bundle, words) -> list[Path]:
    """For every chapter: its descriptions track and its transcript (HTML and text); the files
    written (only those that changed are rewritten)."""
    made = []
    for r in results:
        paths = sidecar_paths(r.final)
        pieces = chapter_pieces(r, bundle, words)
        heading = words.text("film:heading", chapter=r.chapter, title=r.title)
        beats = transcript_beats(r, bundle, words, pieces)
        meter = meter_table(r.chapter, bundle, words)
        tmp = {p: temp_name(p) for p in paths.values()}
        try:
            write_vtt(pieces, tmp[paths["vtt"]], words.lang, until=r.seconds, seconds=script.estimated_seconds)
            write_text(tmp[paths["html"]], transcript_html(beats, heading, words, meter))
            write_text(tmp[paths["txt"]], transcript_text(beats, heading, words, meter))
            changed = [(t, f) for f, t in tmp.items() if not f.exists() or f.read_bytes() != t.read_bytes()]
            replace_together(changed)
        finally:
            discard(*tmp.values())
        made += list(paths.values())
    return made


# ---------------------------------------------------------------------------------------------
# the described cut

@dataclass
class Hold:
    at: float                   # seconds in the standard chapter (the anchor)
    frame: int                  # the standard frame the cut comes before
    frames: int                 # how many frames the picture holds
    clip: Path | None           # the description's mastered speech (None: a silent voice)
    segments: list[dict]        # its sentences (start, end, text), seconds from the hold's start
    pieces: list[Piece]
    speech: float = 0.0         # the clip's length (seconds)
    captions: list[dict] | None = None   # its caption blocks, marked, seconds from the hold's start
    # the hold lasts the speech or its captions' reading time, whichever is longer, rounded up to a frame


def hold_captions(segments: list[dict], label=None) -> list[dict]:
    """A hold's captions: each sentence cut into blocks that each carry the description's mark
    (`label`, kit:description-caption), every block shown for at least MIN_SECONDS and long
    enough to be read at READ_CPS (under MAX_CPS), starting with its words or, when the block
    before still needs the screen, right after it; seconds from the hold's start. The hold is
    made as long as they need (the picture waits for the reader as it waits for the voice)."""
    out, t = [], 0.0
    for s in segments:
        for b in captions.caption_blocks({"start": s["start"], "end": s["end"], "text": s["text"]}, mark=label):
            need = max(captions.MIN_SECONDS, captions.reading_chars(b["text"]) / captions.READ_CPS)
            start = max(b["start"], t)
            end = max(b["end"], start + need)
            out.append({"start": start, "end": end, "text": b["text"], "description": True})
            t = end
    return out


def speak(service, chapter: str, group: list[Piece], lang: str) -> tuple[Path | None, float, list[dict]]:
    """The group's words in the film's voice: (clip, seconds, sentences)."""
    text = " ".join(p.text for p in group)
    data = service.generate_from_text(text, line_id=script.description_id(chapter, group[0].beat), lang=lang)
    clip = Path(service.cache_dir) / data["final_audio"]
    if service.silent:
        seconds = data["segments"][-1]["end"] + audio.LINE_GAP
        return None, seconds, data["segments"]
    x, sr = audio.read_wav(clip)
    return clip, len(x) / sr, data["segments"]


def plan_holds(result, pieces: list[Piece], service, lang: str, label=None) -> tuple[list[Hold], Fraction, int]:
    """A hold per group of pieces at one frame: as long as its speech, or as its captions
    (hold_captions, marked by `label`) need to be read, whichever is longer."""
    frames, fps = video_facts(result.final)
    rate = Fraction(fps).limit_denominator(1001)
    holds = []
    for at, group in grouped(pieces, frame=0.5 / float(rate)):
        clip, seconds, segments = speak(service, result.chapter, group, lang)
        blocks = hold_captions(segments, label)
        length = max([seconds] + [b["end"] for b in blocks])
        k = min(max(int(round(at * rate)), 0), frames)
        holds.append(Hold(float(Fraction(k) / rate), k, max(1, math.ceil(length * rate - 1e-6)), clip, segments, group,
                          seconds, blocks))
    return holds, rate, frames


def film_encoder() -> dict[str, str]:
    """x264's settings the film's scenes are encoded with (engine/encoding.py ENCODER_OPTIONS, tuned for
    flat, slow-moving graphics), less its one thread: a cut is one long encode, not one of several
    scenes at once, so x264 may use the machine's cores."""
    from onepass.engine.encoding import ENCODER_OPTIONS     # noqa: PLC0415  (only a cut needs it)
    return {k: v for k, v in ENCODER_OPTIONS.items() if k != "threads"}


def cut_options(height: int) -> dict[str, str]:
    """x264's settings for the described cut: the film's own (about a third of the CPU per frame of the
    'fast' preset the cut used before, bench/cut_speed.py), at a lower crf than the film's since it
    encodes the film's picture again (18 at 720p and over, 20 below)."""
    return {**film_encoder(), "crf": "18" if height >= 720 else "20"}


def cut_video(src: Path, out: Path, holds: list[Hold], rate: Fraction, height: int,
              options: dict[str, str] | None = None):
    """The standard picture with each hold's frame repeated before the frame it comes before
    (`options`: x264's settings, cut_options(height) unless given)."""
    import av                       # noqa: PLC0415  (PyAV: the scene renders use it too)
    by_frame: dict[int, int] = {}
    for h in holds:
        by_frame[h.frame] = by_frame.get(h.frame, 0) + h.frames
    with av.open(str(src)) as inp, av.open(str(out), "w") as outp:
        vin = inp.streams.video[0]
        vout = outp.add_stream("libx264", rate=rate)
        vout.width, vout.height, vout.pix_fmt = vin.codec_context.width, vin.codec_context.height, "yuv420p"
        vout.options = options if options is not None else cut_options(height)
        vout.codec_context.time_base = Fraction(1) / rate
        pts, last = 0, None

        def emit(frame, n):
            nonlocal pts
            for _ in range(n):
                f = frame if frame.format.name == "yuv420p" else frame.reformat(format="yuv420p")
                f.pts, f.time_base = pts, vout.codec_context.time_base
                for packet in vout.encode(f):
                    outp.mux(packet)
                pts += 1
        for j, frame in enumerate(inp.decode(vin)):
            frame = frame.reformat(format="yuv420p")
            if j in by_frame:
                emit(last if last is not None else frame, by_frame.pop(j))
            emit(frame, 1)
            last = frame
        for n in by_frame.values():          # a hold at the very end
            emit(last, n)
        for packet in vout.encode(None):
            outp.mux(packet)


def cut_audio(src: Path, out_wav: Path, holds: list[Hold], rate: Fraction) -> None:
    """The standard narration with each hold's speech put in at its cut, padded to the hold."""
    track = audio.decode(src)
    parts, at = [], 0
    for h in sorted(holds, key=lambda h: h.frame):
        cut = min(int(round(h.frame / rate * audio.SR)), len(track))
        parts.append(track[at:cut])
        n = int(round(h.frames / rate * audio.SR))
        speech = np.zeros(n, dtype=np.float32)
        if h.clip is not None:
            x, sr = audio.read_wav(h.clip)
            x = audio.resample(x, sr)[:n]
            speech[:len(x)] = x
        parts.append(speech)
        at = cut
    parts.append(track[at:])
    audio.write_wav(out_wav, np.concatenate(parts) if parts else track)


LEAD = 0.5      # seconds a narration caption may come before its words, into silence, when it cannot be read otherwise


def _need(text: str) -> float:
    return max(captions.MIN_SECONDS, captions.reading_chars(text) / captions.READ_CPS)


def _room(cues: list[dict], i: int, until: float) -> float:
    """The seconds cue i could be on screen: from LEAD before it (not before the cue ahead of it)
    to the next cue's start (`until`), at most MAX_SECONDS."""
    c = cues[i]
    lo = max(cues[i - 1]["end"] if i else 0.0, c["start"] - LEAD)
    hi = cues[i + 1]["start"] if i + 1 < len(cues) else until
    return min(hi, lo + captions.MAX_SECONDS) - min(lo, c["start"])


def _join(a: dict, b: dict) -> str:
    return "\n".join(captions.wrap(" ".join(a["text"].split() + b["text"].split())))


def _mend(cues: list[dict], until: float) -> list[dict]:
    """Every narration part too short or too fast to read where it stands is merged with a
    neighbour: another part of its own caption (across the hold), else the narration caption it
    touches; the first such merge that is readable, fits MAX_LINES lines and MAX_SECONDS."""
    cues = [dict(c) for c in cues]

    def readable_at(i: int) -> bool:
        return _room(cues, i, until) >= _need(cues[i]["text"]) - 1e-9

    while True:
        for i, c in enumerate(cues):
            if c.get("description") or readable_at(i):
                continue
            kin = [j for j in range(len(cues)) if j != i and cues[j].get("part") is not None
                   and cues[j].get("part") == c.get("part")]
            siblings = sorted(kin, key=lambda j: (j < i, abs(j - i)))          # the next part first
            touching = [j for j in (i - 1, i + 1) if 0 <= j < len(cues) and not cues[j].get("description")
                        and j not in kin]
            for j in siblings + touching:
                first, second = sorted((cues[i], cues[j]), key=lambda x: x["start"])
                text = _join(first, second)
                if j in kin:            # across a hold: the words join the other part, in its time
                    merged = dict(cues[j], text=text)
                else:                   # side by side: one caption over both
                    merged = dict(first, text=text, end=second["end"])
                    if merged["end"] - merged["start"] > captions.MAX_SECONDS:
                        continue
                if len(text.split("\n")) > captions.MAX_LINES:
                    continue
                trial = [x for k, x in enumerate(cues) if k not in (i, j)] + [merged]
                trial.sort(key=lambda x: x["start"])
                if _room(trial, trial.index(merged), until) >= _need(text) - 1e-9:
                    cues = trial
                    break
            else:
                continue
            break
        else:
            return cues


def _lead(cues: list[dict], until: float) -> list[dict]:
    """A caption that its time and the silence after it cannot make readable starts up to LEAD
    earlier, into the silence before it."""
    out = [dict(c) for c in cues]
    for i, c in enumerate(out):
        hi = min(out[i + 1]["start"] if i + 1 < len(out) else until, c["start"] + captions.MAX_SECONDS)
        need = _need(c["text"])
        if hi - c["start"] < need:
            lo = max(out[i - 1]["end"] if i else 0.0, c["start"] - LEAD)
            c["start"] = min(c["start"], max(lo, hi - need))
    return out


def described_cues(standard: list[dict], holds: list[Hold], rate: Fraction, label=None,
                   until: float | None = None) -> list[dict]:
    """The described cut's captions: the standard captions moved by the holds before them, and
    each hold's description (its `captions`, hold_captions; else its sentences, marked by
    `label(text)`), every block marked `description`.

    A caption that a hold interrupts resumes after it: its time is cut at the hold and its words
    shared between the parts by time. A part too short or too fast to read where it stands (a
    0.04 s scrap before a hold, a last word after it) is merged with a neighbour (_mend): another
    part of its caption across the hold, else the narration caption it touches. Then a caption
    still short of its reading time may start up to LEAD earlier, into silence (_lead), and every
    caption stays on into the silence after it as far as it needs to be read (captions.readable;
    `until`: the cut's end)."""
    cuts = sorted((h.at, h.frames / rate) for h in holds)

    def moved(t: float) -> float:              # a hold at t comes before what starts at t
        return t + float(sum(d for at, d in cuts if at <= t + 1e-6))
    out = []
    for n, c in enumerate(standard):
        inside = [at for at, _ in cuts if c["start"] + 1e-6 < at < c["end"] - 1e-6]
        bounds = [c["start"], *inside, c["end"]]
        spans = list(zip(bounds, bounds[1:]))
        words = c["text"].split()
        total = c["end"] - c["start"]
        # each part's words, by the share of the cue's time spoken before its end
        marks = [round(len(words) * (b - c["start"]) / max(total, 1e-9)) for _, b in spans]
        marks[-1] = len(words)
        taken = 0
        for i, (a, b) in enumerate(spans):
            part, taken = words[taken:marks[i]], marks[i]
            if not part:
                continue
            text = "\n".join(captions.wrap(" ".join(part))) if len(spans) > 1 else c["text"]
            start = moved(a)
            out.append(dict(c, start=start, end=start + (b - a), text=text, part=n if len(spans) > 1 else None))
    shift = 0.0
    for h in sorted(holds, key=lambda h: h.frame):
        begin = h.at + shift
        blocks = h.captions if h.captions is not None else hold_captions(h.segments, label)
        for b in blocks:
            out.append({"start": begin + b["start"], "end": begin + b["end"], "text": b["text"], "description": True})
        shift += float(h.frames / rate)
    out.sort(key=lambda c: c["start"])
    end = until if until is not None else max((c["end"] for c in out), default=0.0)
    out = _lead(_mend(out, end), end)
    for c in out:
        c.pop("part", None)
    return captions.readable(out, end)


def described_key(result, pieces: list[Piece], service) -> str:
    """What the described cut and its captions depend on: the chapter's file, the voice, the pieces said,
    the code that holds, mixes and captions them (this module, captions, mixdown) and x264's settings, so a
    change there makes the cut again instead of keeping one made the old way."""
    code = hashlib.sha256(b"".join(Path(f).read_bytes() for f in (__file__, captions.__file__, mixdown.__file__))).hexdigest()
    return hashlib.sha256(json.dumps({"chapter": sha256_file(result.final), "voice": service.spec,
                                      "pieces": [[p.beat, p.mark, p.text, p.at] for p in pieces],
                                      "encoder": film_encoder(),
                                      "code": code}, ensure_ascii=False).encode()).hexdigest()


def write_described(result, bundle, words, service, force: bool = False) -> Path:
    """`X.described.mp4` (+ .srt, .vtt) beside the chapter's `X.mp4`; kept when nothing changed."""
    final = result.final
    out = described_path(final)
    sidecars = [out.with_suffix(".srt"), out.with_suffix(".vtt")]
    pieces = chapter_pieces(result, bundle, words)
    key = described_key(result, pieces, service)
    stamp_path = final.parent / ".scenes" / f"{out.stem}.json"
    try:
        old = json.loads(stamp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    if not force and old.get("key") == key and all(p.exists() for p in [out, *sidecars]):
        return out

    def label(text: str) -> str:
        return words.text("kit:description-caption", text=text)
    holds, rate, _ = plan_holds(result, pieces, service, words.lang, label)
    voiced = stream_seconds(final, "a") is not None
    tmp = {p: temp_name(p) for p in [*sidecars, out]}
    try:
        with tempfile.TemporaryDirectory(prefix=home.JOIN_PREFIX, dir=final.parent) as work:
            picture, wav = Path(work) / "picture.mp4", Path(work) / "narration.wav"
            from onepass.voiceover.media import video_height   # noqa: PLC0415
            cut_video(final, picture, holds, rate, video_height(final))
            if voiced:
                cut_audio(final, wav, holds, rate)
            mixdown.mux(picture, wav if voiced else None, tmp[out])
        standard = captions.read_srt(final.with_suffix(".srt"))
        cues = described_cues(standard, holds, rate, label, until=video_facts(tmp[out])[0] / float(rate))
        captions.write_srt(cues, tmp[sidecars[0]], words.lang)
        captions.write_vtt(cues, tmp[sidecars[1]], words.lang)
        replace_together([(t, f) for f, t in tmp.items()])          # the MP4 last
    finally:
        discard(*tmp.values())
    write_json(stamp_path, {"key": key, "fps": [rate.numerator, rate.denominator],
                            "holds": [{"at": h.at, "frame": h.frame, "frames": h.frames, "speech": h.speech,
                                                   "reading": max([b["end"] for b in h.captions or []], default=0.0),
                                                   "beat": h.pieces[0].beat, "marks": [p.mark for p in h.pieces]}
                                                  for h in holds]})
    return out


def spoken_descriptions(final: Path) -> list[dict]:
    """Where each description is spoken in the chapter's described cut (`X.described.mp4`, made by
    write_described): [{"at": its anchor in the standard chapter, "start": where its speech starts
    in the cut, "speech": seconds, "beat", "key": what it is (the cut's key and its place)}], for
    the holds with speech; [] when there is no described cut, or its voice is silent."""
    out_path = described_path(final)
    try:
        stamp_data = json.loads((final.parent / ".scenes" / f"{out_path.stem}.json").read_text(encoding="utf-8"))
        holds = stamp_data["holds"]
        if not out_path.is_file() or stream_seconds(out_path, "a") is None:     # a silent cut says nothing
            return []
        if stamp_data.get("fps"):
            rate = Fraction(*stamp_data["fps"])
        else:
            rate = Fraction(video_facts(out_path)[1]).limit_denominator(1001)
    except (OSError, ValueError, KeyError, TypeError):
        return []
    out, shift = [], 0
    for i, h in enumerate(sorted(holds, key=lambda h: h["frame"])):
        start = float(Fraction(h["frame"] + shift) / rate)
        shift += h["frames"]
        if h.get("speech", 0) > 0:
            out.append({"at": h["at"], "start": round(start, 6), "speech": h["speech"], "beat": h.get("beat"),
                        "key": f"{stamp_data.get('key')}:{i}:{h['frame']}:{h['frames']}"})
    return out


def write_described_film(results, described: list[Path], dest: Path, film_title: str, markers) -> Path:
    """The described chapters end to end (`onepass-film.described.mp4`, with chapter markers and captions)."""
    from dataclasses import replace as _replace   # noqa: PLC0415
    from onepass.film.run.join import FILM_NAME, join_film     # noqa: PLC0415
    parts = [_replace(r, final=p) for r, p in zip(results, described)]
    with tempfile.TemporaryDirectory(prefix=home.FILM_PREFIX, dir=dest) as work:
        made = join_film(parts, Path(work), film_title, markers)
        final = dest / f"{FILM_NAME}{DESCRIBED}.mp4"
        for suffix in (".srt", ".vtt", ".mp4"):
            os.replace(made.with_suffix(suffix), final.with_suffix(suffix))
    return final
