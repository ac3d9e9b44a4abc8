"""The publishing kit (`--publish`): what an upload needs, beside each chapter MP4.

    from onepass.film.kit.publish import write_publish
    made = write_publish(results, bundle, words, film=film_path)   # [Path, ...]

* `chNN.description.txt`: the chapter's summary (the catalog's `kit:summary-NN`), its beats as
  the timestamps video sites read as chapters ("0:00 Title" lines: the first at 0:00, each at
  least MIN_GAP seconds after the one before and before the end; beats closer than that are
  merged into the one before them), the prompt, and a citation of the bundle (model id,
  weights sha256, prompt, onepass version). A beat's timestamp is its start in clips.json
  (film/kit/clips.py `beat_spans`: the frame its line starts on), rounded down to the second; its
  title is the chapter's heading for the title beat, else the first sentence of its line.
* `chNN.thumbnail.png`: the chapter's thumbnail (the frame film/run/join.py picks, its title band
  drawn) at THUMB_SIZE whatever the render quality.
* for `--all`, `onepass-film.description.txt`: the film's description, a timestamp per chapter.

Every file is written atomically and only when its content changed (or `force`); nothing is
rendered again: the chapter MP4s and their cues are read as the build left them.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from onepass.data.bundle import sha256_file, shown_text
from onepass.data.files import FolderLock, stamped, write_stamp, write_text_if_changed
from onepass.film.kit.clips import beat_spans
from onepass.film.plan.identity import project_version
from onepass.film.run.join import FILM_NAME, settled_moment, thumbnail
from onepass.film.plan.keys import sha
from onepass.voiceover.media import video_facts
from onepass.voiceover.script import split_sentences

MIN_GAP = 10.0                  # seconds between two chapter marks (YouTube's shortest chapter)
THUMB_SIZE = (1280, 720)        # what video sites ask a thumbnail to be
TITLE_CHARS = 70                # a timestamp's title is cut (at a word) to this many characters


@dataclass(frozen=True)
class Mark:
    seconds: float              # where it starts in the video
    title: str
    beats: tuple[str, ...]      # the beats it covers (more than one when merged)


def citation(bundle) -> dict:
    """What cites a bundle: model id, weights sha256, prompt, onepass version."""
    w = bundle.meta.get("weights", {})
    return {"model": bundle.meta.get("model_id") or bundle.model or "gpt2", "sha256": w.get("sha256", ""),
            "prompt": bundle.prompt, "version": project_version(), "synthetic": bool(w.get("synthetic"))}


LINE_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """`text` on one line: each line break shown as ↵ (a prompt typed over several lines keeps the
    description's "Prompt:" and "Cite as" lines whole, and says where it broke)."""
    return LINE_BREAKS.sub("↵", shown_text(text))


def cite_line(bundle, words) -> str:
    c = citation(bundle)
    return words.text("kit:cite", version=c["version"], model=c["model"], sha256=c["sha256"],
                      prompt=one_line(c["prompt"]))


def synthetic_mark(bundle, words) -> str:
    """The random-weights mark (the film's under its heading): whose predictions these are not, the
    film's own model by name (Bundle.model_named), GPT-2 or SmolLM2 alike."""
    return words.text("film:synthetic-mark", model=words.model_name(bundle.model_named))


def stamp(seconds: float) -> str:
    """0 -> '0:00', 75.9 -> '1:15', 3725 -> '1:02:05' (rounded down: a mark never lands after its beat)."""
    s = int(math.floor(seconds + 1e-6))
    h, m, s = s // 3600, s % 3600 // 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def parse_stamp(text: str) -> int:
    """'1:15' -> 75, '1:02:05' -> 3725 (tests read descriptions back with it)."""
    parts = [int(p) for p in text.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def short_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A beat's line as a chapter title: its first sentence, cut at a word to `limit` characters."""
    first = split_sentences(text)[0].strip()
    if len(first) <= limit:
        return first
    cut = first[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:—-") if " " in first[:limit - 1] else first[:limit - 1]
    return cut + "…"


def beat_title(beat: str, text: str, heading: str) -> str:
    """What a reader sees a beat named by (a description's timestamp, a handout's page, a slide):
    the chapter's `heading` for its title beat, else the first sentence of its line, cut."""
    return heading if beat == "title" else short_title(text)


def merge_marks(marks: list[Mark], length: float, gap: float = MIN_GAP) -> list[Mark]:
    """Marks at least `gap` seconds apart (in whole seconds, as written), the first at 0, the last
    at least `gap` before `length`: a mark too close to the one before is merged into it."""
    out: list[Mark] = []
    for m in marks:
        if not out:
            out.append(Mark(0.0, m.title, m.beats))
        elif math.floor(m.seconds + 1e-6) - math.floor(out[-1].seconds + 1e-6) >= gap \
                and length - m.seconds >= gap:
            out.append(m)
        else:
            out[-1] = Mark(out[-1].seconds, out[-1].title, out[-1].beats + m.beats)
    return out


def chapter_marks(result, words) -> list[Mark]:
    """The chapter's beats as marks (merged to MIN_GAP), from its cues as clips.json has them."""
    spans = beat_spans(result)
    heading = words.text("film:heading", chapter=result.chapter, title=result.title)
    marks = [Mark(s.start / s.fps, beat_title(s.beat, s.text, heading), (s.beat,)) for s in spans]
    return merge_marks(marks, spans[-1].end / spans[-1].fps)


def chapter_description(result, bundle, words) -> str:
    marks = chapter_marks(result, words)
    lines = [words.text("film:heading", chapter=result.chapter, title=result.title), "",
             words.text(f"kit:summary-{result.chapter}"), ""]
    if bundle.synthetic:
        lines += [synthetic_mark(bundle, words), ""]
    lines += [words.text("kit:publish-chapters")] + [f"{stamp(m.seconds)} {m.title}" for m in marks]
    lines += ["", words.text("kit:publish-prompt", prompt=one_line(bundle.prompt)), cite_line(bundle, words), ""]
    return "\n".join(lines)


def chapter_starts(results) -> list[float]:
    """Where each chapter starts in the joined film (seconds): the chapter MP4s end to end."""
    starts = [0.0]
    for r in results[:-1]:
        frames, fps = video_facts(r.final)
        starts.append(starts[-1] + frames / fps)
    return starts


def film_description(results, bundle, words) -> str:
    lines = [words.text("film:film-title", model=words.model_name(bundle.model)), ""]
    lines += [words.text(f"kit:summary-{r.chapter}") for r in results]
    lines += [""] + ([synthetic_mark(bundle, words), ""] if bundle.synthetic else [])
    lines.append(words.text("kit:publish-chapters"))
    for start, r in zip(chapter_starts(results), results):
        lines.append(f"{stamp(start)} {words.text('film:heading', chapter=r.chapter, title=r.title)}")
    lines += ["", words.text("kit:publish-prompt", prompt=one_line(bundle.prompt)), cite_line(bundle, words), ""]
    return "\n".join(lines)


def description_name(chapter: str) -> str:
    return f"ch{chapter}.description.txt"


def thumbnail_name(chapter: str) -> str:
    return f"ch{chapter}.thumbnail.png"


def write_thumbnail(result, words, force: bool = False) -> Path:
    """chNN.thumbnail.png: the chapter's thumbnail frame at THUMB_SIZE, its title band drawn at
    that size; made again only when the chapter MP4 or the band changed (a stamp beside it holds
    the key and the PNG's sha256)."""
    png = result.final.parent / thumbnail_name(result.chapter)
    cue_lists = [json.loads(s.job.cues.read_text(encoding="utf-8")) for s in result.scenes]
    durations = [s.seconds for s in result.scenes]
    total = sum(durations)
    at = settled_moment(cue_lists, durations)
    at = min(total * 0.4 if at is None else at, total - 0.1)
    band = words.text("film:heading", chapter=result.chapter, title=result.title)
    key = sha({"video": sha256_file(result.final), "at": round(at, 3), "band": band, "size": THUMB_SIZE,
               "lang": result.lang, "version": 1})
    if not force and stamped(png, key):
        return png
    thumbnail(result.final, png, at=at, title=band, lang=result.lang, size=THUMB_SIZE)
    write_stamp(png, key)
    return png


def write_publish(results, bundle, words, film: Path | None = None, force: bool = False) -> list[Path]:
    """Every chapter's description and 1280×720 thumbnail, and the film's description when
    `film` (the joined film) is given. Holds the output folder's lock. Returns the files."""
    if not results:
        return []
    folder = results[0].final.parent
    made: list[Path] = []
    with FolderLock(folder):
        for r in results:
            path = r.final.parent / description_name(r.chapter)
            write_text_if_changed(path, chapter_description(r, bundle, words), force)
            made += [path, write_thumbnail(r, words, force)]
        if film is not None:
            path = film.parent / f"{FILM_NAME}.description.txt"
            write_text_if_changed(path, film_description(results, bundle, words), force)
            made.append(path)
    return made
