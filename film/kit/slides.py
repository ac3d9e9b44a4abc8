"""Lecture decks: one slide per beat, as an offline HTML deck and as a PowerPoint.

    from onepass.film.kit.slides import write_deck
    deck = write_deck(chapter_results, fmt="mp4")     # deck.html, deck.pptx, deck.slides

Both decks play the clips of film/kit/clips.py (cut here if they are missing or stale), one per
slide, in the order of the chapters given; the narration line is each slide's speaker notes.

* HTML: `clips/index.html` beside the clips it plays (the folder is the deck: copy it to a USB
  stick). It loads nothing from the network; the captions are added to each video from script
  (a page opened from file:// may not load `<track src>`). It plays `fmt` clips (mp4 or webm;
  with gif, the mp4 ones). From film/kit/templates/deck.html, a template of our own: manim-slides'
  HTML loads reveal.js from a CDN (its --offline option downloads it at convert time), and its
  presentations are rendered from Slide scenes, where ours are cut from the cached chapters.
* PowerPoint: `clips/lecture-chNN[-chMM...].pptx`, one MP4 per slide that plays by itself when
  the slide opens (the slide's `<p:timing>`, written here as PowerPoint writes it: python-pptx's
  own timing only lets a click start the video), its poster the clip's last frame (a chapter's
  title slide: the chapter's thumbnail, since its title card has faded by the clip's end), the
  narration in the notes.

Both are accessible (issue 43, WCAG 2.1 AA; tests/test_lecture.py checks each point):

* HTML: a level-one heading and landmarks (axe-core finds nothing, en and ur); every control a
  button reached by Tab and pressed by Enter or space, with a visible focus ring; captions and
  audio description toggles; each clip carries captions, chapters and descriptions tracks (the
  chapter's `X.descriptions.vtt`, written beside it by film/kit/describe.py, cut per clip): with audio
  description on, each description is said while the clip waits, in the film's own voice where
  the chapter has a described cut (description_audio), else by the browser's speech synthesis,
  else (no voice) the clip waits a reading's time; each is announced in a live region (issue 53);
  the transcript (narration and descriptions) beside the slide; a pause button for what plays;
  one-letter shortcuts that can be turned off (2.1.4); one scrolling column at 400 % zoom, a
  button for the chapter list, no autoplay with prefers-reduced-motion.
* PowerPoint: each slide's title in its title placeholder, first in reading order; each video's
  alternative text the beat's descriptions, its captions burnt in (captioned_clips); every text
  run marked with its language.

Neither is rewritten when the clips and lines it would hold are unchanged.
"""
from __future__ import annotations

import html
import io
import json
import re
import string
from dataclasses import dataclass
from pathlib import Path

from onepass.data.bundle import sha256_file
from onepass.data.files import FolderLock, discard, stamped, temp_name, write_bytes, write_stamp, write_text
from onepass.film.kit.clips import ClipError, ClipSet, cut_clips
from onepass.film.kit.describe import described_path, spoken_descriptions
from onepass.film.plan.jobs import ChapterResult
from onepass.film.plan.keys import sha
from onepass.film.kit.publish import short_title
from onepass.voiceover import mixdown
from onepass.voiceover.captions import is_rtl, read_srt
from onepass.voiceover.media import MediaError, probe, run_ffmpeg, video_height
from onepass.words.catalog import Words

TEMPLATE = Path(__file__).resolve().parent / "templates" / "deck.html"
DECK_NAME = "index.html"
SLIDE_W_IN, SLIDE_H_IN = 13.333, 7.5          # 16:9
EMU_PER_INCH = 914400


@dataclass
class Deck:
    html: Path
    pptx: Path
    slides: int
    written: list[Path]                        # the files this call (re)wrote


def _write_if_changed(path: Path, text: str, force: bool = False) -> bool:
    try:
        if not force and path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, ValueError):         # missing, or garbled past UTF-8: written anew
        pass
    write_text(path, text)
    return True


def _script_json(data) -> str:
    """JSON safe inside a <script> element and still valid JSON: <, > and & written as \\u escapes
    (nothing can then end the element or open `<!--`, which makes the HTML parser swallow the rest;
    `<\\!--` is not a JSON escape and made JSON.parse fail)."""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


DECK_WORDS = {"start": "kit:deck-start", "chapters_label": "kit:deck-chapters", "notes_label": "kit:deck-notes",
              "captions_label": "kit:deck-captions", "previous": "kit:deck-previous", "next": "kit:deck-next",
              "play": "kit:deck-play", "pause": "kit:deck-pause", "captions_toggle": "kit:deck-captions-toggle",
              "describe": "kit:deck-describe", "transcript": "kit:deck-transcript", "narration": "kit:handout-narration",
              "controls": "kit:deck-controls", "letter_keys": "kit:deck-letter-keys", "fullscreen": "kit:deck-fullscreen"}


def deck_words(words) -> dict[str, str]:
    """The deck's own words (its buttons, labels and help) in the film's language."""
    return {"lang": words.lang, "dir": "rtl" if is_rtl(words.lang) else "ltr",
            **{k: words.text(mid) for k, mid in DECK_WORDS.items()}}


# ---------------------------------------------------------------------------------------
# Audio descriptions: the chapter's descriptions track (X.descriptions.vtt beside X.mp4, timed to
# the standard chapter), cut per clip

_BIDI_MARKS = dict.fromkeys(map(ord, "\u200e\u200f"))


def read_vtt(path: Path) -> list[dict]:
    """The cues of a WebVTT file: [{"start", "end", "text"}] in seconds, the text plain (tags
    dropped, entities read, direction marks removed, lines joined by a space)."""
    def secs(stamp: str) -> float:
        parts = stamp.strip().split()[0].replace(",", ".").split(":")
        return sum(float(x) * 60 ** k for k, x in enumerate(reversed(parts)))
    out = []
    for block in re.split(r"\n\s*\n", Path(path).read_text(encoding="utf-8").replace("\r\n", "\n")):
        lines = block.strip("\n").split("\n")
        at = next((i for i, line in enumerate(lines) if "-->" in line), None)
        if at is None or lines[0].startswith(("NOTE", "STYLE", "REGION")):
            continue
        a, b = lines[at].split("-->", 1)
        text = " ".join(html.unescape(re.sub(r"<[^>]*>", "", line)).translate(_BIDI_MARKS).strip()
                        for line in lines[at + 1:])
        if text.strip():
            out.append({"start": secs(a), "end": secs(b), "text": " ".join(text.split())})
    return out


def descriptions_path(chapter_mp4: Path) -> Path:
    """X.descriptions.vtt beside X.mp4: the chapter's audio descriptions, timed to it."""
    return chapter_mp4.with_name(chapter_mp4.stem + ".descriptions.vtt")


def clip_descriptions(entries: list[dict], cues: list[dict], fps: float | None = None,
                      spoken: list[dict] | None = None) -> dict[str, list[dict]]:
    """Clip id -> its descriptions [{"start", "end", "text"}], retimed to the clip: each cue of the
    chapter's descriptions track goes to the clip its start falls in (within half a frame, as a
    beat's start is rounded to a frame), and starts no later than just before the clip's end (so
    a player still reaches it). `spoken`: [{"at", "audio"}], the film's own speech of each
    description (description_audio): a cue within a frame of one's anchor gets its `audio` (the
    file the deck plays); a second cue at that anchor (one hold says both) gets `with_previous`."""
    out: dict[str, list[dict]] = {e["id"]: [] for e in entries}
    used: set[int] = set()
    for c in cues:
        for e in entries:
            rate = fps or e.get("fps") or (e["frames"] / max(e["end"] - e["start"], 1e-9) if e.get("frames") else 25.0)
            slack = 0.5 / rate
            if e["start"] - slack <= c["start"] < e["end"] - slack:
                length = e["end"] - e["start"]
                start = min(max(0.0, c["start"] - e["start"]), max(0.0, length - 0.1))
                end = min(length, max(c["end"] - e["start"], start + 0.05))
                d = {"start": round(start, 3), "end": round(max(end, start + 0.05), 3), "text": c["text"]}
                near = [(abs(v["at"] - c["start"]), k) for k, v in enumerate(spoken or [])
                        if abs(v["at"] - c["start"]) <= 1.0 / rate + 1e-3]
                if near:
                    k = min(near)[1]
                    if k in used:
                        d["with_previous"] = True
                    else:
                        d["audio"] = spoken[k]["audio"]
                        used.add(k)
                out[e["id"]].append(d)
                break
    return out


def chapter_clip_descriptions(cs: ClipSet, chapter_mp4: Path, spoken: list[dict] | None = None) -> dict[str, list[dict]]:
    """clip_descriptions of a clip set from its chapter's descriptions track ({} when the chapter
    has none); `spoken`: description_audio's files."""
    path = descriptions_path(chapter_mp4)
    try:
        cues = read_vtt(path)
    except (OSError, ValueError, IndexError):
        return {}
    return clip_descriptions(cs.entries, cues, spoken=spoken)


DESCRIPTION_AUDIO = ["-vn", "-c:a", "aac", "-b:a", "96k", "-ac", "1"]


def description_audio(cs: ClipSet, chapter_mp4: Path, force: bool = False) -> list[dict]:
    """The film's own voice saying each description, for the deck to play (issue 53): the chapter's
    described cut (`X.described.mp4`, --described) cut at each hold's speech into
    `clips/chNN-<beat>.description-K.m4a` (AAC, as the clips' sound), kept while the cut is
    unchanged. [{"at": the anchor in the standard chapter, "audio": the file's name}]; [] when the
    chapter has no described cut with sound (the deck then asks the browser's speech)."""
    spoken = spoken_descriptions(chapter_mp4)
    out, counts, wanted = [], {}, []
    for h in spoken:
        beat = h["beat"] or "description"
        k = counts[beat] = counts.get(beat, 0) + 1
        name = f"ch{cs.chapter}-{beat}.description-{k}.m4a"
        path = cs.folder / name
        key = sha({"hold": h["key"], "start": h["start"], "speech": h["speech"], "encode": DESCRIPTION_AUDIO})
        if force or not stamped(path, key):
            wanted.append((h, path, key))
        out.append({"at": h["at"], "audio": name})
    if wanted:
        cut_descriptions(described_path(chapter_mp4), wanted)
    return out


def cut_descriptions(source: Path, wanted: list[tuple[dict, Path, str]]):
    """Each (hold, path, key)'s speech cut from `source` into `path`, stamped with `key`: one ffmpeg
    process, the sound decoded once (a process per description cost about 0.2 s each, 41 of
    them in the test chapter); each file replaced only once all were written."""
    parts = [temp_name(path) for _, path, _ in wanted]
    graph = [f"[0:a]asplit={len(wanted)}" + "".join(f"[t{i}]" for i in range(len(wanted)))]
    outputs = []
    for i, ((h, _, _), part) in enumerate(zip(wanted, parts)):
        graph.append(f"[t{i}]atrim=start={h['start']:.6f}:duration={h['speech']:.6f},asetpts=PTS-STARTPTS[a{i}]")
        outputs += ["-map", f"[a{i}]", *DESCRIPTION_AUDIO, "-f", "mp4", part]
    try:             # the graph names no path: only labels and times
        run_ffmpeg(["-i", source, "-filter_complex", ";".join(graph), *outputs])
        for (_, path, key), part in zip(wanted, parts):
            part.replace(path)
            write_stamp(path, key)
    except MediaError as exc:
        raise ClipError(f"cutting {len(wanted)} description(s) from {source} failed: {exc}") from None
    finally:
        discard(*parts)


CAPTIONED = ".captioned.mp4"
CAPTION_BURN_VERSION = 1


def captioned_clips(cs: ClipSet, lang: str, force: bool = False) -> dict[str, Path]:
    """Clip id -> the clip with its captions burnt into the picture (`chNN-<beat>.captioned.mp4`,
    onepass.voiceover.mixdown.burn_captions: the film's caption style in the band the scenes keep
    free), for the PowerPoint, whose videos carry no caption track a player shows; a clip cut
    from a chapter whose captions are already burnt in is its own. Kept while the clip and its
    captions are unchanged; the others are burnt a few at a time by one ffmpeg process
    (mixdown.clips_per_burn)."""
    out, stale = {}, []
    for e in cs.entries:
        clip = cs.folder / e["files"]["mp4"]
        if e.get("burnt_captions"):
            out[e["id"]] = clip
            continue
        path = cs.folder / f"{e['id']}{CAPTIONED}"
        key = sha({"clip": e["keys"]["mp4"], "captions": e["keys"]["captions"], "lang": lang,
                   "version": CAPTION_BURN_VERSION})
        if force or not stamped(path, key):
            stale.append((clip, cs.folder / e["files"]["srt"], path, key))
        out[e["id"]] = path
    if stale:
        height = video_height(stale[0][0])        # a chapter's clips are cut from one video: one height
        step = mixdown.clips_per_burn(height)
        for i in range(0, len(stale), step):
            _burn(stale[i:i + step], lang, height)
    return out


def _burn(jobs: list[tuple[Path, Path, Path, str]], lang: str, height: int):
    """Each (clip, srt, captioned, key)'s captions burnt in by one ffmpeg process, the result
    stamped with its key."""
    try:
        mixdown.burn_captions_together([(clip, srt, path) for clip, srt, path, _ in jobs], lang, height)
    except MediaError as exc:
        if len(jobs) == 1:
            raise ClipError(f"burning captions into {jobs[0][0].name} failed: {exc}") from None
        # one at a time, as before they shared a process: the error names the clip that fails,
        # and those before it are kept
        for job in jobs:
            _burn([job], lang, height)
    else:
        for _, _, path, key in jobs:
            write_stamp(path, key)


def alt_text(descriptions: list[dict], fallback: str) -> str:
    """A clip's alternative text: its descriptions, in order (none: `fallback`)."""
    return " ".join(d["text"] for d in descriptions) or fallback


def slide_heading(heading: str, e: dict) -> str:
    """A slide's heading: the catalog's `kit:slide-heading` for clip entry `e`, the beat named by
    the first sentence of its line (film/kit/publish.py `short_title`), as its video chapter is."""
    return heading.format(chapter=e["chapter"], title=e["title"], beat=short_title(e["text"]))


def deck_html(sets: list[ClipSet], fmt: str, title: str, ui: dict[str, str],
              heading: str = "{chapter} · {title} — {beat}",
              descriptions: dict[str, list[dict]] | None = None) -> str:
    """The HTML deck of these clip sets, playing their `fmt` clips; `ui`: its words (deck_words);
    `heading`: the slide heading's template (kit:slide-heading); `descriptions`: clip id -> its
    audio descriptions, timed to the clip (chapter_clip_descriptions)."""
    descriptions = descriptions or {}
    slides, chapters = [], []
    for cs in sets:
        chapters.append({"chapter": cs.chapter, "title": cs.title, "first": len(slides)})
        for e in cs.entries:
            slides.append({"id": e["id"], "chapter": e["chapter"], "title": e["title"], "beat": e["beat"],
                           "heading": slide_heading(heading, e), "duration": round(e["end"] - e["start"], 3),
                           "clip": e["files"][fmt], "notes": e["text"], "audio": bool(e.get("audio")),
                           "burnt": bool(e.get("burnt_captions")),
                           "cues": [{"start": round(c["start"], 3), "end": round(c["end"], 3), "text": c["text"]}
                                    for c in read_srt(cs.folder / e["files"]["srt"])],
                           "descriptions": descriptions.get(e["id"], [])})
    data = {"title": title, "format": fmt, "chapters": chapters, "slides": slides,
            "lang": ui["lang"], "captions": ui["captions_label"],
            "ui": {k: ui[k] for k in ("play", "pause", "chapters_label", "describe")}}
    return string.Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        title=html.escape(title), data=_script_json(data), **{k: html.escape(v) for k, v in ui.items()})


def _video_size(path: Path) -> tuple[int, int]:
    s = probe(path, "v:0", "stream=width,height") or {"width": 16, "height": 9}
    return int(s["width"]), int(s["height"])


def _right_to_left(text_frame):
    """A PowerPoint text frame that reads right to left (Urdu): every paragraph marked rtl and
    aligned right, where its reader starts."""
    from pptx.enum.text import PP_ALIGN
    for p in text_frame.paragraphs:
        p.alignment = PP_ALIGN.RIGHT
        p._p.get_or_add_pPr().set("rtl", "1")


P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"


def autoplay_timing_xml(shape_id: int, duration_ms: int) -> str:
    """A slide's `<p:timing>` that plays the video shape `shape_id` as soon as the slide opens:
    the main sequence holds one media call (`playFrom(0.0)`), started after the slide begins
    (`afterEffect`, delay 0), as PowerPoint writes "Start: Automatically"; the `<p:video>` node
    keeps the player's controls (what python-pptx writes alone)."""
    return f"""<p:timing xmlns:p="{P_NS}"><p:tnLst><p:par>
<p:cTn id="1" dur="indefinite" restart="never" nodeType="tmRoot"><p:childTnLst>
<p:seq concurrent="1" nextAc="seek"><p:cTn id="2" dur="indefinite" nodeType="mainSeq"><p:childTnLst>
<p:par><p:cTn id="3" fill="hold"><p:stCondLst><p:cond delay="indefinite"/><p:cond evt="onBegin" delay="0">
<p:tn val="2"/></p:cond></p:stCondLst><p:childTnLst>
<p:par><p:cTn id="4" fill="hold"><p:stCondLst><p:cond delay="0"/></p:stCondLst><p:childTnLst>
<p:par><p:cTn id="5" presetID="1" presetClass="mediacall" presetSubtype="0" fill="hold" nodeType="afterEffect">
<p:stCondLst><p:cond delay="0"/></p:stCondLst><p:childTnLst>
<p:cmd type="call" cmd="playFrom(0.0)"><p:cBhvr><p:cTn id="6" dur="{int(duration_ms)}" fill="hold"/>
<p:tgtEl><p:spTgt spid="{int(shape_id)}"/></p:tgtEl></p:cBhvr></p:cmd>
</p:childTnLst></p:cTn></p:par></p:childTnLst></p:cTn></p:par></p:childTnLst></p:cTn></p:par>
</p:childTnLst></p:cTn>
<p:prevCondLst><p:cond evt="onPrev" delay="0"><p:tgtEl><p:sldTgt/></p:tgtEl></p:cond></p:prevCondLst>
<p:nextCondLst><p:cond evt="onNext" delay="0"><p:tgtEl><p:sldTgt/></p:tgtEl></p:cond></p:nextCondLst>
</p:seq>
<p:video><p:cMediaNode vol="80000"><p:cTn id="7" fill="hold" display="0"><p:stCondLst>
<p:cond delay="indefinite"/></p:stCondLst></p:cTn><p:tgtEl><p:spTgt spid="{int(shape_id)}"/></p:tgtEl>
</p:cMediaNode></p:video>
</p:childTnLst></p:cTn></p:par></p:tnLst></p:timing>"""


def set_autoplay(slide, shape_id: int, duration_ms: int):
    """Replace the slide's timing (python-pptx's click-to-play) with autoplay_timing_xml."""
    from lxml import etree
    sld = slide._element
    for old in sld.findall(f"{{{P_NS}}}timing"):
        sld.remove(old)
    timing = etree.fromstring(autoplay_timing_xml(shape_id, duration_ms))
    ext = sld.find(f"{{{P_NS}}}extLst")               # p:timing comes before p:extLst, after the rest
    if ext is not None:
        ext.addprevious(timing)
    else:
        sld.append(timing)


def autoplay_shapes(slide) -> list[int]:
    """The shape ids a slide's timing plays on entry (what set_autoplay wrote; tests read it back)."""
    from lxml import etree
    ns = {"p": P_NS}
    cmds = etree.XPath("./p:timing//p:par/p:cTn[@nodeType='afterEffect' or @nodeType='withEffect']"
                       "[@presetClass='mediacall']//p:cmd[@type='call'][starts-with(@cmd, 'playFrom')]", namespaces=ns)
    targets = etree.XPath("./p:cBhvr/p:tgtEl/p:spTgt", namespaces=ns)
    return [int(t.get("spid")) for cmd in cmds(slide._element) for t in targets(cmd)]


def set_language(text_frame, lang: str):
    """Every run of a PowerPoint text frame carries its language (`a:rPr lang`), and each
    paragraph's end mark too: a screen reader picks its voice, a spelling checker its dictionary."""
    for p in text_frame.paragraphs:
        for r in p.runs:
            r._r.get_or_add_rPr().set("lang", lang)
        p._p.get_or_add_endParaRPr().set("lang", lang)


def set_alt_text(shape, text: str):
    """A picture's or video's alternative text (`p:cNvPr descr`, PowerPoint's "Alt Text")."""
    shape._element.xpath("./*[1]/p:cNvPr")[0].set("descr", " ".join(text.split()))


def deck_pptx(sets: list[ClipSet], title: str, heading: str = "{chapter} · {title} — {beat}",
              rtl: bool = False, thumbnails: dict[str, Path] | None = None, lang: str = "en",
              descriptions: dict[str, list[dict]] | None = None, videos: dict[str, Path] | None = None) -> bytes:
    """The PowerPoint: one slide per beat, titled in its title placeholder (first in reading
    order), with its MP4 (poster: its last frame; a chapter's title beat: `thumbnails[chapter]`,
    the chapter's thumbnail, where given) playing on entry, its alternative text the beat's
    audio descriptions (`descriptions`: clip id -> [{"text"}], chapter_clip_descriptions; none:
    the slide's title), and notes; every text run in `lang`; `rtl`: titles and notes read right
    to left; `videos`: clip id -> the MP4 the slide plays instead of the clip (captioned_clips:
    its captions burnt in)."""
    # python-pptx (and lxml under it) is imported only when a PowerPoint is asked for
    from pptx import Presentation
    from pptx.enum.text import MSO_ANCHOR, PP_ALIGN
    from pptx.util import Emu, Pt

    descriptions = descriptions or {}
    prs = Presentation()
    prs.slide_width, prs.slide_height = Emu(int(SLIDE_W_IN * EMU_PER_INCH)), Emu(int(SLIDE_H_IN * EMU_PER_INCH))
    prs.core_properties.title = title
    prs.core_properties.language = lang
    title_only = prs.slide_layouts[5]              # "Title Only": a title placeholder, nothing else
    head_h = int(0.5 * EMU_PER_INCH)
    for cs in sets:
        size = None                                # a chapter's clips are cut from one video: one size
        for e in cs.entries:
            video = (videos or {}).get(e["id"]) or cs.folder / e["files"]["mp4"]
            w, h = size = size or _video_size(video)
            box_w, box_h = prs.slide_width, prs.slide_height - head_h
            scale = min(box_w / w, box_h / h)
            vw, vh = int(w * scale), int(h * scale)
            slide = prs.slides.add_slide(title_only)
            head = slide.shapes.title                 # the slide's first shape: read first
            head.left, head.top = Emu(int(0.2 * EMU_PER_INCH)), 0
            head.width, head.height = Emu(prs.slide_width - int(0.4 * EMU_PER_INCH)), Emu(head_h)
            head.text_frame.text = slide_heading(heading, e)
            head.text_frame.vertical_anchor = MSO_ANCHOR.MIDDLE
            for p in head.text_frame.paragraphs:
                p.alignment = PP_ALIGN.LEFT
                for r in p.runs:
                    r.font.size = Pt(16)
            if rtl:
                _right_to_left(head.text_frame)
            set_language(head.text_frame, lang)
            poster = cs.folder / e["files"]["poster"]
            if e["beat"] == "title" and thumbnails and thumbnails.get(e["chapter"]) and thumbnails[e["chapter"]].is_file():
                poster = thumbnails[e["chapter"]]
            movie = slide.shapes.add_movie(str(video), Emu((box_w - vw) // 2), Emu(head_h + (box_h - vh) // 2),
                                           Emu(vw), Emu(vh), poster_frame_image=str(poster), mime_type="video/mp4")
            set_alt_text(movie, alt_text(descriptions.get(e["id"], []), head.text_frame.text))
            set_autoplay(slide, movie.shape_id, round((e["end"] - e["start"]) * 1000))
            notes = slide.notes_slide.notes_text_frame
            notes.text = e["text"]
            if rtl:
                _right_to_left(notes)
            set_language(notes, lang)
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


def pptx_name(chapters: list[str]) -> str:
    """lecture-ch02.pptx; several chapters: lecture-ch00-ch06.pptx (first and last)."""
    return f"lecture-ch{chapters[0]}" + (f"-ch{chapters[-1]}" if len(chapters) > 1 else "") + ".pptx"


def write_deck(results: list[ChapterResult], fmt: str = "mp4", words=None, force: bool = False,
               model: str | None = "gpt2", pptx_captions: bool = True) -> Deck:
    """The HTML deck and the PowerPoint of these chapters (in the order given), in the language of
    `words` (a onepass.words.catalog.Words; None: English), titled with `model`'s name (the bundle's
    `Bundle.model`: "One forward pass of GPT-2 XL"); cuts the clips they need
    (onepass.film.kit.clips.write_clips); `force`: every file made again; `pptx_captions`: the
    PowerPoint's videos carry their captions burnt in (captioned_clips; the default: PowerPoint
    shows no caption track of ours). With a described cut beside a chapter (--described), the
    deck's audio description plays the film's own voice (description_audio). Holds the output
    folder's lock. Raises onepass.film.kit.clips.ClipError."""
    if not results:
        raise ValueError("write_deck needs at least one chapter")
    with FolderLock(results[0].final.parent):
        return _write_deck(results, fmt, words, force, model, pptx_captions)


def _write_deck(results: list[ChapterResult], fmt: str, words, force: bool, model: str | None,
                pptx_captions: bool = True) -> Deck:
    words = words or Words.load()
    title, ui = words.text("film:film-title", model=words.model_name(model)), deck_words(words)
    heading = words.template("kit:slide-heading")
    html_fmt = fmt if fmt in ("mp4", "webm") else "mp4"
    sets = [cut_clips(r, html_fmt, force) for r in results]
    mp4_sets = sets if html_fmt == "mp4" else [cut_clips(r, "mp4", force) for r in results]
    described = {k: v for cs, r in zip(mp4_sets, results)
                 for k, v in chapter_clip_descriptions(cs, r.final, description_audio(cs, r.final, force)).items()}
    videos = {k: v for cs in mp4_sets for k, v in captioned_clips(cs, ui["lang"], force).items()} if pptx_captions else {}
    folder = sets[0].folder
    written = []
    page = folder / DECK_NAME
    if _write_if_changed(page, deck_html(sets, html_fmt, title, ui, heading, described), force):
        written.append(page)
    pptx = folder / pptx_name([r.chapter for r in results])
    thumbnails = {r.chapter: r.final.with_suffix(".png") for r in results}
    thumb_keys = {c: sha256_file(p) if p.is_file() else None for c, p in thumbnails.items()}
    key = sha({"title": title, "heading": heading, "dir": ui["dir"], "lang": ui["lang"],
               "slides": [[e["id"], e["text"], e["keys"]["mp4"], e["keys"]["poster"],
                           [d["text"] for d in described.get(e["id"], [])],
                           sha256_file(videos[e["id"]]) if e["id"] in videos else None]
                          for cs in mp4_sets for e in cs.entries], "thumbnails": thumb_keys, "version": 5})
    if force or not stamped(pptx, key):      # a damaged or replaced file is made again
        write_bytes(pptx, deck_pptx(mp4_sets, title, heading, rtl=ui["dir"] == "rtl", thumbnails=thumbnails,
                                    lang=ui["lang"], descriptions=described, videos=videos))
        write_stamp(pptx, key)
        written.append(pptx)
    return Deck(page, pptx, sum(len(cs.entries) for cs in sets), written)
