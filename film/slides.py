"""Lecture decks: one slide per beat, as an offline HTML deck and as a PowerPoint.

    from film.slides import write_deck
    deck = write_deck(chapter_results, fmt="mp4")     # deck.html, deck.pptx, deck.slides

Both decks play the clips of film/clips.py (cut here if they are missing or stale), one per
slide, in the order of the chapters given; the narration line is each slide's speaker notes.

* HTML: `clips/index.html` beside the clips it plays (the folder is the deck: copy it to a USB
  stick). It loads nothing from the network; the captions are added to each video from script
  (a page opened from file:// may not load `<track src>`). It plays `fmt` clips (mp4 or webm;
  with gif, the mp4 ones). From film/templates/deck.html, a template of our own: manim-slides'
  HTML loads reveal.js from a CDN (its --offline option downloads it at convert time), and its
  presentations are rendered from Slide scenes, where ours are cut from the cached chapters.
* PowerPoint: `clips/lecture-chNN[-chMM...].pptx`, one MP4 per slide that plays by itself when
  the slide opens (the slide's `<p:timing>`, written here as PowerPoint writes it: python-pptx's
  own timing only lets a click start the video), its poster the clip's last frame (a chapter's
  title slide: the chapter's thumbnail, since its title card has faded by the clip's end), the
  narration in the notes.

Neither is rewritten when the clips and lines it would hold are unchanged.
"""
from __future__ import annotations

import html
import io
import json
import string
from dataclasses import dataclass
from pathlib import Path

from data.bundle import sha256_file
from data.files import FolderLock, stamped, write_bytes, write_stamp, write_text
from film.clips import ClipSet, cut_clips
from film.jobs import ChapterResult
from film.keys import sha
from film.publish import short_title
from voiceover.captions import is_rtl, read_srt
from voiceover.media import probe
from words.catalog import Words

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


def deck_words(words) -> dict[str, str]:
    """The deck's own words (its buttons, labels and help) in the film's language."""
    return {"lang": words.lang, "dir": "rtl" if is_rtl(words.lang) else "ltr", "start": words.text("kit:deck-start"), "chapters_label": words.text("kit:deck-chapters"),
            "notes_label": words.text("kit:deck-notes"), "captions_label": words.text("kit:deck-captions")}


def slide_heading(heading: str, e: dict) -> str:
    """A slide's heading: the catalog's `kit:slide-heading` for clip entry `e`, the beat named by
    the first sentence of its line (film/publish.py `short_title`), as its video chapter is."""
    return heading.format(chapter=e["chapter"], title=e["title"], beat=short_title(e["text"]))


def deck_html(sets: list[ClipSet], fmt: str, title: str, ui: dict[str, str],
              heading: str = "{chapter} · {title} — {beat}") -> str:
    """The HTML deck of these clip sets, playing their `fmt` clips; `ui`: its words (deck_words);
    `heading`: the slide heading's template (kit:slide-heading)."""
    slides, chapters = [], []
    for cs in sets:
        chapters.append({"chapter": cs.chapter, "title": cs.title, "first": len(slides)})
        for e in cs.entries:
            slides.append({"id": e["id"], "chapter": e["chapter"], "title": e["title"], "beat": e["beat"],
                           "heading": slide_heading(heading, e),
                           "clip": e["files"][fmt], "notes": e["text"], "audio": bool(e.get("audio")),
                           "burnt": bool(e.get("burnt_captions")),
                           "cues": [{"start": round(c["start"], 3), "end": round(c["end"], 3), "text": c["text"]}
                                    for c in read_srt(cs.folder / e["files"]["srt"])]})
    data = {"title": title, "format": fmt, "chapters": chapters, "slides": slides,
            "lang": ui["lang"], "captions": ui["captions_label"]}
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


def deck_pptx(sets: list[ClipSet], title: str, heading: str = "{chapter} · {title} — {beat}",
              rtl: bool = False, thumbnails: dict[str, Path] | None = None) -> bytes:
    """The PowerPoint: one slide per beat with its MP4 (poster: its last frame; a chapter's title
    beat: `thumbnails[chapter]`, the chapter's thumbnail, where given) playing on entry, and notes;
    `rtl`: its headings and notes read right to left."""
    # python-pptx (and lxml under it) is imported only when a PowerPoint is asked for
    from pptx import Presentation
    from pptx.util import Emu, Pt

    prs = Presentation()
    prs.slide_width, prs.slide_height = Emu(int(SLIDE_W_IN * EMU_PER_INCH)), Emu(int(SLIDE_H_IN * EMU_PER_INCH))
    prs.core_properties.title = title
    blank = prs.slide_layouts[6]
    head_h = int(0.5 * EMU_PER_INCH)
    for cs in sets:
        for e in cs.entries:
            video = cs.folder / e["files"]["mp4"]
            w, h = _video_size(video)
            box_w, box_h = prs.slide_width, prs.slide_height - head_h
            scale = min(box_w / w, box_h / h)
            vw, vh = int(w * scale), int(h * scale)
            slide = prs.slides.add_slide(blank)
            tb = slide.shapes.add_textbox(Emu(int(0.2 * EMU_PER_INCH)), 0, prs.slide_width, head_h)
            tb.text_frame.text = slide_heading(heading, e)
            tb.text_frame.paragraphs[0].runs[0].font.size = Pt(16)
            if rtl:
                _right_to_left(tb.text_frame)
            poster = cs.folder / e["files"]["poster"]
            if e["beat"] == "title" and thumbnails and thumbnails.get(e["chapter"]) and thumbnails[e["chapter"]].is_file():
                poster = thumbnails[e["chapter"]]
            movie = slide.shapes.add_movie(str(video), Emu((box_w - vw) // 2), Emu(head_h + (box_h - vh) // 2),
                                           Emu(vw), Emu(vh), poster_frame_image=str(poster), mime_type="video/mp4")
            set_autoplay(slide, movie.shape_id, round((e["end"] - e["start"]) * 1000))
            slide.notes_slide.notes_text_frame.text = e["text"]
            if rtl:
                _right_to_left(slide.notes_slide.notes_text_frame)
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


def pptx_name(chapters: list[str]) -> str:
    """lecture-ch02.pptx; several chapters: lecture-ch00-ch06.pptx (first and last)."""
    return f"lecture-ch{chapters[0]}" + (f"-ch{chapters[-1]}" if len(chapters) > 1 else "") + ".pptx"


def write_deck(results: list[ChapterResult], fmt: str = "mp4", words=None, force: bool = False,
               model: str | None = "gpt2") -> Deck:
    """The HTML deck and the PowerPoint of these chapters (in the order given), in the language of
    `words` (a words.catalog.Words; None: English), titled with `model`'s name (the bundle's
    `Bundle.model`: "One forward pass of GPT-2 XL"); cuts the clips they need
    (film.clips.write_clips); `force`: every file made again. Holds the output folder's lock.
    Raises film.clips.ClipError."""
    if not results:
        raise ValueError("write_deck needs at least one chapter")
    with FolderLock(results[0].final.parent):
        return _write_deck(results, fmt, words, force, model)


def _write_deck(results: list[ChapterResult], fmt: str, words, force: bool, model: str | None) -> Deck:
    words = words or Words.load()
    title, ui = words.text("film:film-title", model=words.model_name(model)), deck_words(words)
    heading = words.template("kit:slide-heading")
    html_fmt = fmt if fmt in ("mp4", "webm") else "mp4"
    sets = [cut_clips(r, html_fmt, force) for r in results]
    mp4_sets = sets if html_fmt == "mp4" else [cut_clips(r, "mp4", force) for r in results]
    folder = sets[0].folder
    written = []
    page = folder / DECK_NAME
    if _write_if_changed(page, deck_html(sets, html_fmt, title, ui, heading), force):
        written.append(page)
    pptx = folder / pptx_name([r.chapter for r in results])
    thumbnails = {r.chapter: r.final.with_suffix(".png") for r in results}
    thumb_keys = {c: sha256_file(p) if p.is_file() else None for c, p in thumbnails.items()}
    key = sha({"title": title, "heading": heading, "dir": ui["dir"], "slides": [[e["id"], e["text"], e["keys"]["mp4"], e["keys"]["poster"]]
                                          for cs in mp4_sets for e in cs.entries], "thumbnails": thumb_keys,
               "version": 3})
    if force or not stamped(pptx, key):      # a damaged or replaced file is made again
        write_bytes(pptx, deck_pptx(mp4_sets, title, heading, rtl=ui["dir"] == "rtl", thumbnails=thumbnails))
        write_stamp(pptx, key)
        written.append(pptx)
    return Deck(page, pptx, sum(len(cs.entries) for cs in sets), written)
