"""Handouts and stills (`--handout`, `--paper`, `--stills`): the chapters on paper.

    from onepass.film.kit.handout import write_handouts, write_stills
    write_handouts(results, bundle, words, paper="a4")   # handout-chNN.pdf (+ handout-all.pdf)
    write_stills(results, "png")                         # stills/chNN-<beat>.png

A beat's picture is its settled frame: the last frame of its span (film/kit/clips.py `beat_spans`,
the frame a clip's poster and a slide stop on); the title beat's is the middle of its span (its
card has faded by its end). A handout is one HTML page per sheet, printed to PDF by Chromium
(the browser `make system` installs for the lecture deck's test): it shapes every script the
film speaks (Urdu right to left, in the Naskh face the film uses) and honours the page size.

Pages of `handout-chNN.pdf`: a cover (the chapter's heading, its summary, the prompt, the beats,
the colophon citing the bundle: model id, weights sha256, prompt, onepass version), the
chapter's FLOPs ledger (film/keys-free: the entries its scenes pay for, read from their source),
then one page per beat: its title (the first sentence of its line, as the video description's
timestamps name it) and where the video shows it, its frame, its narration with its values in
bold, and those values again, each with the words it is said with, as text. So a chapter's
handout has beats + FRONT_PAGES pages; `handout-all.pdf` has a cover, then for each chapter its
ledger page and its beats. Black text on white, and the frames printed light (`for_print`: the
film's dark ground turned white, words dark, colours keeping their hue): readable in greyscale.

Stills are PNG only: the film's frames are rasterised by manim's Cairo renderer as they are
encoded, and manim 0.22 writes no vector file for a moment of a scene; an SVG would mean
rendering each scene again to each beat's end through another renderer.
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from onepass.data import home
from onepass.data.bundle import sha256_file, shown_text
from onepass.data.chapters import CHAPTERS
from onepass.data.files import (
    FolderLock, discard, remove_dead_owned, stamped, temp_name, write_stamp, write_text,
)
from onepass.film.kit.clips import Span, beat_spans
from onepass.film.plan.errors import PipelineError
from onepass.film.plan.keys import paid_calls, sha
from onepass.film.kit.publish import beat_title, chapter_starts, citation, cite_line, stamp, synthetic_mark
from onepass.film.kit.tables import chapter_tables, table_html
from onepass.voiceover import script
from onepass.voiceover.captions import is_rtl
from onepass.voiceover.script import sentence_starts, split_sentences
from onepass.voiceover.media import MediaError, run_ffmpeg
from onepass.words import numbers

FRONT_PAGES = 2                 # a chapter's handout: cover + ledger, then one page per beat
PAPERS = {"a4": "A4", "letter": "Letter"}
STILLS = "stills"
LEDGER_ROWS = 40                # a longer ledger sums each layer after the first into one row
HANDOUT_VERSION = 3


class HandoutError(PipelineError):
    """A handout or a still could not be made."""


@cache
def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


# ---------------------------------------------------------------------------------------
# Frames

def settled_frame(span: Span) -> int:
    """The frame a beat is shown by: its last (the title beat: its middle)."""
    return (span.start + span.end) // 2 if span.beat == "title" else span.end - 1


def extract_frames(video: Path, frames: list[int], folder: Path) -> dict[int, Path]:
    """PNGs of the given frames of `video` (one decode), in `folder`: frame -> path."""
    wanted = sorted(set(frames))
    select = "+".join(f"eq(n\\,{n})" for n in wanted)
    try:      # the graph names no path: only frame numbers
        run_ffmpeg(["-i", Path(video).resolve(), "-vf", f"select='{select}'", "-fps_mode", "passthrough",
                    (folder / "f_%04d.png").resolve()])
    except MediaError as exc:
        raise HandoutError(f"reading frames of {video} failed: {exc}") from None
    made = sorted(folder.glob("f_*.png"))
    if len(made) != len(wanted):
        raise HandoutError(f"{video}: asked for {len(wanted)} frames, got {len(made)}")
    return dict(zip(wanted, made))


def for_print(png: Path) -> Path:
    """The frame as the handout prints it (in place): light and dark swapped, colour kept.

    The film's frames are light words and colours on a near-black ground; on paper that is a
    sheet of toner with mid-grey text that a greyscale printer muddies. Here each pixel's luma
    (Y of YCbCr) is inverted and stretched so the frame's ground (the median of its border)
    comes out white, and its chroma (Cb, Cr) is kept: words print dark on white, a colour keeps
    its hue, and a colour scale still reads by lightness (what stands out from the ground on
    screen stands out from the paper)."""
    import numpy as np                       # noqa: PLC0415  (Pillow and numpy: only for a handout)
    from PIL import Image                    # noqa: PLC0415
    with Image.open(png) as im:
        y, cb, cr = im.convert("RGB").convert("YCbCr").split()
    luma = np.asarray(y, dtype=np.float32)
    border = np.concatenate([luma[0], luma[-1], luma[:, 0], luma[:, -1]])
    ground = min(float(np.median(border)), 200.0)
    light = np.clip((255.0 - luma) * 255.0 / (255.0 - ground), 0, 255).round().astype(np.uint8)
    Image.merge("YCbCr", (Image.fromarray(light), cb, cr)).convert("RGB").save(png)
    return png


def beat_stills(result, folder: Path) -> list[tuple[Span, Path]]:
    spans = beat_spans(result)
    paths = extract_frames(result.final, [settled_frame(s) for s in spans], folder)
    return [(s, paths[settled_frame(s)]) for s in spans]


def write_stills(results, fmt: str = "png", force: bool = False) -> list[Path]:
    """`stills/chNN-<beat>.png` beside the chapter MP4s: each beat's settled frame. A chapter's
    stills are made again only when its MP4 changed (a key file per chapter) or one is missing."""
    if fmt != "png":
        raise HandoutError(f"stills can be png only (got {fmt!r}); see film/kit/handout.py")
    out: list[Path] = []
    for r in results:
        folder = r.final.parent / STILLS
        folder.mkdir(parents=True, exist_ok=True)
        with FolderLock(r.final.parent):
            spans = beat_spans(r)
            names = [folder / f"{s.name}.png" for s in spans]
            key_path = folder / f".ch{r.chapter}.key"
            key = sha({"video": sha256_file(r.final), "frames": [settled_frame(s) for s in spans], "v": 1})
            try:
                fresh = not force and json.loads(key_path.read_text(encoding="utf-8")) == {
                    "key": key, "files": {p.name: sha256_file(p) for p in names}}
            except (OSError, ValueError):
                fresh = False
            if not fresh:
                tmp = Path(tempfile.mkdtemp(prefix=f".ch{r.chapter}{home.STILLS_CUT}", dir=folder))
                try:
                    for (span, png), final in zip(beat_stills(r, tmp), names):
                        os.replace(png, final)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
                write_text(key_path, json.dumps({"key": key, "files": {p.name: sha256_file(p) for p in names}}))
            out += names
    return out


# ---------------------------------------------------------------------------------------
# What a page says

def _pays(chapter: str) -> list[tuple[str, str]]:
    """[(entry, through or "")] of the chapter module's `self.pay(...)` calls, read from its syntax
    tree as the scene keys read its beats (film/plan/keys.py paid_calls)."""
    return paid_calls(CHAPTERS[chapter].module)


def paid_keys(chapter: str, ledger) -> list[str]:
    """The ledger entries chapter `chapter`'s scenes pay for (`self.pay(key, through=...)` in
    its module's source), in ledger order. An f-string's `{...}` stands for any layer whose
    entry no chapter names literally (chapter 03's climb starts after the first layer, which
    chapters 02 and 03 pay for by name)."""
    keys = [e.key for e in ledger.entries]
    literal = {k for c in CHAPTERS for first, through in _pays(c) for k in (first, through)
               if k and "{" not in k}
    paid: set[str] = set()
    for first, through in _pays(chapter):
        def matches(p: str) -> list[int]:
            if "{" not in p:
                return [i for i, k in enumerate(keys) if k == p]
            rx = re.compile("^" + re.sub(r"\\\{[^}]*\\\}", r"\\d+", re.escape(p)) + "$")
            return [i for i, k in enumerate(keys) if rx.match(k) and k not in literal]
        ends = matches(through) if through else []
        for i in matches(first):
            stop = next((j for j in ends if j >= i), i)
            paid.update(keys[i:stop + 1])
    return [k for k in keys if k in paid]


def step_words(entry, bundle, words) -> str:
    """The meter's words for a ledger entry, as the scenes' meter says them (onepass.data.flops.Entry.message)."""
    return numbers.step_words(words, entry, bundle.shape)


def ledger_rows(chapter: str | None, bundle, words) -> tuple[str, list[tuple[str, str, int, int]]]:
    """(heading, rows of (step, formula, FLOPs, running total)) for a chapter (None: the whole pass)."""
    ledger = bundle.ledger()
    keys = paid_keys(chapter, ledger) if chapter is not None else []
    heading = words.text("kit:handout-ledger")
    if not keys:
        keys, heading = [e.key for e in ledger.entries], words.text("kit:handout-ledger-whole")
    entries = [ledger[k] for k in keys]
    rows: list[tuple[str, str, int, int]] = []
    if len(entries) > LEDGER_ROWS:               # layers after the first: one row each
        first_layer = min(e.layer for e in entries if e.layer is not None)
        for e in entries:
            if e.layer is None or e.layer == first_layer:
                rows.append((step_words(e, bundle, words), e.formula, e.flops, e.total))
            elif rows and rows[-1][0] == words.text("kit:handout-layer", layer=e.layer + 1):
                rows[-1] = (rows[-1][0], "Σ", rows[-1][2] + e.flops, e.total)
            else:
                rows.append((words.text("kit:handout-layer", layer=e.layer + 1), "Σ", e.flops, e.total))
    else:
        rows = [(step_words(e, bundle, words), e.formula, e.flops, e.total) for e in entries]
    return heading, rows


_OPEN, _CLOSE = "\ue000", "\ue001"        # private-use characters around a value while a line is filled


@dataclass(frozen=True)
class Said:
    """A beat's line as the handout prints it: `text` as spoken, `values` where the values its
    line names stand in it ((start, end) character offsets, in order)."""
    text: str
    values: tuple[tuple[int, int], ...] = ()

    def numbers(self, words_around: int = 3) -> list[tuple[str, str]]:
        """Each number the line says (a value with a digit in it: a token's text is words, not a
        number), once per sentence, with the words around it in that sentence (up to
        `words_around` either side, "…" where the sentence goes on): [(value, context)]."""
        sentences = split_sentences(self.text)
        out: list[tuple[str, str]] = []
        for sentence, start in zip(sentences, sentence_starts(self.text, sentences)):
            seen = set()
            for a, b in self.values:
                a, b = a - start, b - start
                if a < 0 or b > len(sentence) or sentence[a:b] in seen or not any(c.isdigit() for c in sentence[a:b]):
                    continue
                seen.add(sentence[a:b])
                before, after = sentence[:a].split(), sentence[b:].split()
                left = " ".join(before[-words_around:]) if before else ""
                right = " ".join(after[:words_around]) if after else ""
                context = (("… " if len(before) > words_around else "") + left
                           + (" " if left and sentence[a - 1:a] == " " else "") + sentence[a:b]
                           + (" " if right and sentence[b:b + 1] == " " else "") + right
                           + (" …" if len(after) > words_around else ""))
                out.append((sentence[a:b], context))
        return out


def _placed(marked: str) -> Said:
    """A filled line with _OPEN/_CLOSE around each value -> its text (whitespace collapsed as
    markup.fill does) and where the values are."""
    chars: list[tuple[str, int | None]] = []
    n, inside = -1, None
    for ch in marked:
        if ch == _OPEN:
            n += 1
            inside = n
        elif ch == _CLOSE:
            inside = None
        elif ch.isspace():
            if chars and not chars[-1][0].isspace():
                chars.append((" ", inside))
        else:
            chars.append((ch, inside))
    while chars and chars[-1][0] == " ":
        chars.pop()
    text = "".join(c for c, _ in chars)
    spans: dict[int, list[int]] = {}
    for k, (c, tag) in enumerate(chars):
        if tag is not None:
            spans.setdefault(tag, [k, k + 1])[1] = k + 1
    values = []
    for a, b in sorted(spans.values()):
        a, b = a + (text[a] == " "), b - (text[b - 1] == " ")       # a value's own spaces are the line's
        if a < b:
            values.append((a, b))
    return Said(text, tuple(values))


def beat_lines(chapter: str, bundle, words) -> dict[str, Said]:
    """beat -> its line as the film speaks it, with where its values stand (`Said`)."""
    with numbers.language(words.lang):
        values = script.chapter_values(chapter, bundle, bundle.ledger(), words)
    lines = script.chapter_lines(chapter, bundle, bundle.ledger(), words)
    marked = {k: f"{_OPEN}{v if isinstance(v, str) else int(v)}{_CLOSE}" for k, v in values.items()}
    out = {}
    for beat, line in lines.items():
        mid = script.line_id(chapter, beat)
        said = _placed(words.line(mid, marked, bundle.synthetic, bundle.shape.component_tags()).text) \
            if words.has(mid) else Said(line.text)
        out[beat] = said if said.text == line.text else Said(line.text)      # never print other words
    return out


def beat_numbers(chapter: str, bundle, words) -> dict[str, list[tuple[str, str]]]:
    """beat -> [(value, the words around it)]: the values its line names, as the film says them."""
    return {beat: said.numbers() for beat, said in beat_lines(chapter, bundle, words).items()}


# ---------------------------------------------------------------------------------------
# The page

CSS = """
@page { size: %(paper)s; margin: 12mm 14mm; }
body { font-family: "DejaVu Sans", "Noto Naskh Arabic", "Noto Sans", sans-serif; color: #000; background: #fff;
       font-size: 10.5pt; line-height: 1.4; margin: 0; }
[dir=rtl] body, body[dir=rtl] { font-family: "Noto Naskh Arabic", "DejaVu Sans", sans-serif; }
.page { break-after: page; page-break-after: always; }
.page:last-child { break-after: auto; page-break-after: auto; }
h1 { font-size: 18pt; margin: 0 0 4mm; } h2 { font-size: 13pt; margin: 0 0 3mm; border-bottom: 0.4mm solid #000; }
h3 { font-size: 10.5pt; margin: 3mm 0 1mm; }
.frame { width: 100%%; border: 0.3mm solid #000; display: block; }
.frame-box { max-height: 115mm; overflow: hidden; }
.numbers td, .numbers th { padding: 0.3mm 3mm 0.3mm 0; vertical-align: top; text-align: start; }
.numbers th { font-weight: normal; font-style: italic; border-bottom: 0.2mm solid #555; }
.mono, .numbers td.v { font-family: "DejaVu Sans Mono", monospace; }
table.ledger { border-collapse: collapse; width: 100%%; font-size: 8pt; line-height: 1.2; }
table.ledger th, table.ledger td { border-bottom: 0.2mm solid #555; padding: 0.5mm 1.5mm; text-align: start; }
table.ledger td.n { text-align: end; font-family: "DejaVu Sans Mono", monospace; white-space: nowrap; }
.colophon { margin-top: 6mm; font-size: 8.5pt; border-top: 0.3mm solid #000; padding-top: 2mm; word-break: break-all; }
.gpt2 { unicode-bidi: isolate; direction: ltr; }
ol.beats { margin: 1mm 0; padding-inline-start: 6mm; font-size: 9.5pt; }
ol.beats .t, .running .gpt2 { font-family: "DejaVu Sans Mono", monospace; }
.running { font-size: 8.5pt; margin: 0 0 1mm; }
.said b { font-weight: bold; }
.numbers { font-size: 9.5pt; }
.numbers td.v { font-weight: bold; text-align: end; white-space: nowrap; }
.numbers th.v { text-align: end; }
.tables { display: flex; flex-wrap: wrap; gap: 0 4mm; align-items: flex-start; }
table.shown { border-collapse: collapse; margin: 2mm 0 0; font-size: 8pt; line-height: 1.2; break-inside: avoid; }
table.shown caption { text-align: start; font-weight: bold; padding-bottom: 0.5mm; }
table.shown th, table.shown td { border: 0.2mm solid #555; padding: 0.3mm 1.5mm; }
table.shown td { text-align: end; font-family: "DejaVu Sans Mono", monospace; white-space: nowrap; }
table.shown th { text-align: start; font-weight: normal; }
table.shown thead th { font-style: italic; }
"""


def _e(text) -> str:
    return html.escape(str(text))


def cover_page(title: str, lines: list[str], beats: list[tuple[str, str]], bundle, words) -> str:
    """The front page: `title`, `lines` (summary, prompt), the contents (beats: (time, title),
    the time where the video shows it, "" for none) and the colophon."""
    body = "".join(f"<p>{_e(x)}</p>" for x in lines)
    listing = "".join(f'<li><span class="t gpt2">{_e(t)}</span> {_e(name)}</li>' if t else f"<li>{_e(name)}</li>"
                      for t, name in beats)
    return (f'<section class="page"><h1>{_e(title)}</h1>{body}'
            + (f'<h3>{_e(words.text("kit:handout-contents"))}</h3><ol class="beats">{listing}</ol>' if beats else "")
            + colophon(bundle, words) + "</section>")


def colophon(bundle, words) -> str:
    c = citation(bundle)
    extra = f"<p>{_e(synthetic_mark(bundle, words))}</p>" if c["synthetic"] else ""
    return (f'<div class="colophon"><h3>{_e(words.text("kit:handout-colophon"))}</h3>'
            f'<p>{_e(cite_line(bundle, words))}</p>{extra}</div>')


def ledger_page(heading_line: str, chapter: str | None, bundle, words) -> str:
    heading, rows = ledger_rows(chapter, bundle, words)
    cols = [words.text(f"kit:handout-{k}") for k in ("step", "formula", "flops", "total")]
    with numbers.language(words.lang):
        body = "".join(f"<tr><td>{_e(s)}</td><td class='mono gpt2'>{_e(f)}</td><td class='n'>{_e(numbers.fmt_int(n))}"
                       f"</td><td class='n'>{_e(numbers.fmt_int(t))}</td></tr>" for s, f, n, t in rows)
    head = "".join(f"<th>{_e(c)}</th>" for c in cols)
    return (f'<section class="page"><h2>{_e(heading_line)}</h2><h3>{_e(heading)}</h3>'
            f'<table class="ledger"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>')


def _marked(said: Said) -> str:
    """The line as HTML, its values in bold (the handout's narration)."""
    out, at = [], 0
    for a, b in said.values:
        out += [_e(said.text[at:a]), f"<b>{_e(said.text[a:b])}</b>"]
        at = b
    return "".join(out) + _e(said.text[at:])


def beat_page(running: str, title: str, span: Span, image: Path, said: Said, words, alt: str | None = None,
              tables=()) -> str:
    """One beat: the running head (chapter, n/N, where in the video), its title, its settled frame
    (its alternative text `alt`: the beat's audio description, what the frame shows; none: the
    title) with the numbers it shows as tables beside it (`tables`: film/kit/tables.py, the
    transcript's), its narration (values in bold) and its numbers, each with the words it is said with."""
    said = said if said.text == span.text else Said(span.text)        # the words the film spoke
    rows = said.numbers()
    nums = "".join(f"<tr><td class='v'>{_e(v)}</td><td>{_e(c)}</td></tr>" for v, c in rows)
    head = (f"<thead><tr><th scope='col' class='v'>{_e(words.text('kit:handout-value'))}</th>"
            f"<th scope='col'>{_e(words.text('kit:handout-context'))}</th></tr></thead>")
    return (f'<section class="page"><div class="running">{running}</div><h2>{_e(title)}</h2>'
            f'<div class="frame-box"><img class="frame" src="{_e(image.name)}" alt="{_e(alt or title)}"></div>'
            + ('<div class="tables">' + "".join(table_html(t, "shown") for t in tables) + "</div>" if tables else "")
            + f'<h3>{_e(words.text("kit:handout-narration"))}</h3><p class="said">{_marked(said)}</p>'
            + (f'<h3>{_e(words.text("kit:handout-numbers"))}</h3><table class="numbers">{head}<tbody>{nums}</tbody>'
               "</table>" if rows else "")
            + "</section>")


def beat_descriptions(chapter: str, bundle, words) -> dict[str, str]:
    """beat -> its audio description as plain text, in its wording for a still
    (onepass.voiceover.script.chapter_descriptions, still=True): what its settled frame shows, the
    frame's alternative text."""
    return {beat: " ".join(filled.text.split())
            for beat, filled in script.chapter_descriptions(chapter, bundle, bundle.ledger(), words, still=True).items()}


def chapter_pages(result, bundle, words, folder: Path, cover: bool) -> tuple[list[str], int]:
    """The pages of one chapter (its cover only if `cover`); images written into `folder`."""
    heading = words.text("film:heading", chapter=result.chapter, title=result.title)
    sub = Path(tempfile.mkdtemp(prefix=f"ch{result.chapter}-", dir=folder))
    stills = beat_stills(result, sub)
    lines = beat_lines(result.chapter, bundle, words)
    described = beat_descriptions(result.chapter, bundle, words)
    shown = chapter_tables(result.chapter, bundle, words)
    titles = [beat_title(s.beat, s.text, heading) for s, _ in stills]
    pages = []
    if cover:
        pages.append(cover_page(heading, [words.text(f"kit:summary-{result.chapter}"),
                                          words.text("kit:publish-prompt", prompt=shown_text(bundle.prompt))],
                                [(stamp(s.start / s.fps), t) for (s, _), t in zip(stills, titles)], bundle, words))
    pages.append(ledger_page(heading + ("" if cover else " — " + words.text(f"kit:summary-{result.chapter}")),
                             result.chapter, bundle, words))
    for i, ((span, png), title) in enumerate(zip(stills, titles), 1):
        image = folder / f"ch{result.chapter}-{i:03d}.png"
        os.replace(for_print(png), image)
        running = f'{_e(heading)} · {i}/{len(stills)} · <span class="gpt2">{_e(stamp(span.start / span.fps))}</span>'
        pages.append(beat_page(running, title, span, image, lines.get(span.beat, Said(span.text)), words,
                               described.get(span.beat), shown.get(span.beat, ())))
    shutil.rmtree(sub, ignore_errors=True)
    return pages, len(stills)


def document(pages: list[str], title: str, paper: str, lang: str) -> str:
    direction = "rtl" if is_rtl(lang) else "ltr"
    return (f'<!DOCTYPE html><html lang="{_e(lang)}" dir="{direction}"><head><meta charset="utf-8">'
            f"<title>{_e(title)}</title><style>{CSS % {'paper': PAPERS[paper]}}</style></head>"
            f"<body>{''.join(pages)}</body></html>")


CHROMIUM_TEMP = home.CHROMIUM_TEMP


def remove_dead_chromium_temp() -> int:
    """Remove Chromium's temporary folders (`onepass-chromium-tmp-p<PID>-*` in the system temp folder)
    whose printing process no longer runs (killed with SIGKILL); a live one's is kept."""
    return remove_dead_owned(tempfile.gettempdir(), home.owner(CHROMIUM_TEMP))


def print_pdf(page: Path, pdf: Path):
    """Chromium prints the page to `pdf` (replaced only when complete)."""
    browser = chromium()
    if browser is None:
        raise HandoutError("a handout needs Chromium to print its PDF: `make system` installs it")
    tmp = temp_name(pdf)
    try:
        # the browser's profile inside the handout's work folder beside the output (not the system
        # temp folder): a killed run's is removed with it by the next run (build.remove_leftovers)
        remove_dead_chromium_temp()
        with tempfile.TemporaryDirectory(prefix=home.CHROMIUM_PROFILE, dir=page.parent) as profile, \
                tempfile.TemporaryDirectory(prefix=f"{CHROMIUM_TEMP}p{os.getpid()}-") as own_tmp:
            proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                                   "--allow-file-access-from-files", f"--user-data-dir={profile}",
                                   f"--print-to-pdf={tmp}", page.resolve().as_uri()],
                                  capture_output=True, text=True, errors="replace", timeout=300,
                                  # Chromium's own org.chromium.* folder (a socket: the path must stay short,
                                  # so the system temp folder) in one named for this process
                                  env={**os.environ, "TMPDIR": own_tmp})
        if proc.returncode != 0 or tmp.stat().st_size < 100 or not tmp.read_bytes().startswith(b"%PDF"):
            raise HandoutError(f"Chromium could not print {pdf.name}: {proc.stderr.strip()[-300:]}")
        os.replace(tmp, pdf)
    finally:
        discard(tmp)


@cache
def code_fingerprint(source: str) -> str:
    """What of this module's code a handout depends on: its syntax tree without comments and
    docstrings (a comment or a reworded docstring re-printed every handout when the key hashed the
    file's bytes, issue 41)."""
    import ast
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return sha(ast.dump(tree))


def handout_name(chapters: list[str] | None) -> str:
    return "handout-all.pdf" if chapters is None else f"handout-ch{chapters[0]}.pdf"


def _make(pdf: Path, key: str, build, force: bool) -> Path:
    """Write `pdf` (via `build(folder) -> html`) unless its stamp says it is this key and these bytes."""
    if not force and stamped(pdf, key):
        return pdf
    with tempfile.TemporaryDirectory(prefix=home.HANDOUT_PREFIX, dir=pdf.parent) as work:
        page = Path(work) / "handout.html"
        page.write_text(build(Path(work)), encoding="utf-8")
        print_pdf(page, pdf)
    write_stamp(pdf, key)
    return pdf


def write_handouts(results, bundle, words, paper: str = "a4", whole: bool = False, force: bool = False) -> list[Path]:
    """handout-chNN.pdf per chapter, and handout-all.pdf when `whole` (--all), beside the chapter
    MP4s. Each is made again only when its chapter MP4s, words, bundle or paper changed."""
    if paper not in PAPERS:
        raise HandoutError(f"paper must be one of {', '.join(PAPERS)} (got {paper!r})")
    if not results:
        return []
    folder = results[0].final.parent
    base = {"paper": paper, "lang": words.lang, "bundle": bundle.meta.get("tensors_sha256"),
            "cite": cite_line(bundle, words), "version": HANDOUT_VERSION,
            "code": code_fingerprint(Path(__file__).read_text(encoding="utf-8"))}
    made = []
    with FolderLock(folder):
        for r in results:
            key = sha({**base, "video": sha256_file(r.final), "chapter": r.chapter,
                       "words": {m: words.messages[m].forms for m in sorted(words.messages)
                                 if m.startswith((f"ch{r.chapter}", "film:", "kit:"))}})

            def one(work: Path, r=r) -> str:
                pages, _ = chapter_pages(r, bundle, words, work, cover=True)
                return document(pages, words.text("film:heading", chapter=r.chapter, title=r.title), paper, words.lang)
            made.append(_make(folder / handout_name([r.chapter]), key, one, force))
        if whole:
            key = sha({**base, "videos": [sha256_file(r.final) for r in results],
                       "words": {m: words.messages[m].forms for m in sorted(words.messages)}})

            def everything(work: Path) -> str:
                title = words.text("film:film-title", model=words.model_name(bundle.model))
                starts = chapter_starts(results)
                pages = [cover_page(title, [words.text("kit:publish-prompt", prompt=shown_text(bundle.prompt))],
                                    [(stamp(t), words.text("film:heading", chapter=r.chapter, title=r.title))
                                     for t, r in zip(starts, results)], bundle, words)]
                for r in results:
                    pages += chapter_pages(r, bundle, words, work, cover=False)[0]
                return document(pages, title, paper, words.lang)
            made.append(_make(folder / handout_name(None), key, everything, force))
    return made
