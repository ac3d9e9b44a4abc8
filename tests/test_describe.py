"""Audio description (issue 43): the descriptions as catalog words, the descriptions track, the
transcript and the audio-described cut (`--described`).

What a lecturer whose university must meet WCAG 2.1 AA relies on: every beat of a described chapter
says what its picture shows, in every language (a missing one is refused before anything renders);
a lecturer's script may reword them; each chapter comes with a WebVTT descriptions track and a
transcript (HTML and text) in the film's language and direction; `--described` writes a cut whose
picture holds while the film's voice says each description, its captions marking them.
"""
from __future__ import annotations

import hashlib
import html.parser
import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polib
import pytest

from tests.helpers import run_main
from onepass.voiceover import captions, script, services
from onepass.voiceover.descriptions import anchor, split
from onepass.words import catalog, markup
from onepass.words.catalog import Words

DESCRIBED = [c for c in ("00", "01", "02", "03", "04", "05", "06") if catalog.described(c)]


def narrated(chapter: str) -> set[str]:
    """The beats with a narration line in the catalog (the title card's own line needs none)."""
    return {b for b in script.beats(chapter) if catalog.english().get(script.line_id(chapter, b))}


@pytest.mark.parametrize("lang", ["en", "es", "ur", "qps"])
def test_every_narrated_beat_of_a_described_chapter_is_described_in_every_language(tiny_bundle, lang):
    words = Words.load(lang)
    own = catalog.english() if lang in ("en", "qps") else catalog._catalog(lang)[0]     # no English beneath
    for chapter in DESCRIBED:
        said = script.chapter_descriptions(chapter, tiny_bundle, tiny_bundle.ledger(), words)
        assert set(said) == narrated(chapter), chapter
        assert all(script.description_id(chapter, b) in own for b in said), chapter
        lines = script.chapter_lines(chapter, tiny_bundle, tiny_bundle.ledger(), words)
        for beat, d in said.items():
            assert d.text and "{" not in d.text and "<bookmark" not in d.text, (chapter, beat)
            line_marks = lines[beat].mark_names
            assert [m for m in line_marks if m in d.mark_names] == d.mark_names, (chapter, beat)   # same order
            if lang == "qps":
                assert d.text.startswith("⟦"), (chapter, beat)
    assert "describe" not in " ".join(script.beats("02"))          # a description is no beat


def test_a_missing_or_misplaced_description_is_refused_before_anything_renders(monkeypatch):
    english = dict(catalog.english())
    gone = english.pop("ch02-mask.describe")
    monkeypatch.setattr(catalog, "english", lambda: english)
    with pytest.raises(catalog.CatalogError, match=r"ch02-mask: has no description \(add ch02-mask.describe"):
        Words.load("en")
    # markers out of the line's order, and a marker the line lacks
    bad = '<bookmark mark="minus"/>Grey. <bookmark mark="training"/>Red. <bookmark mark="nope"/>x'
    english["ch02-mask.describe"] = catalog.Message("ch02-mask.describe", (bad,), bad)
    problems = catalog.description_problems(english)
    assert problems and "ch02-mask.describe: its markers minus, training, nope must be among ch02-mask's" in problems[0]
    english["ch02-mask.describe"] = gone
    english["ch02-nobeat.describe"] = catalog.Message("ch02-nobeat.describe", ("x",), "x")
    assert catalog.description_problems(english) == ["en: ch02-nobeat.describe: describes no narration line "
                                                     "(ch02-nobeat does not exist)"]


def test_a_lecturers_script_may_reword_a_description_and_check_script_says_so(tmp_path):
    mid = "ch02-mask.describe"
    english = catalog.english()[mid].forms[0]
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": "en"}
    po.append(polib.POEntry(msgctxt=mid, msgid=english, msgstr=english.replace("turns red", "goes crimson")))
    po.save(str(tmp_path / "mine.po"))
    rc, out, _ = run_main("--check-script", str(tmp_path / "mine.po"))
    assert rc == 0 and mid in out
    assert "crimson" in Words.load("en", tmp_path / "mine.po").template(mid)
    po[0].msgstr = english.replace('<bookmark mark="minus"/>', "")          # a marker dropped: refused
    po.save(str(tmp_path / "bad.po"))
    rc, _, err = run_main("--check-script", str(tmp_path / "bad.po"))
    assert rc == 2 and "ch02-mask.describe: lacks marker(s) minus" in err


def fake_cues(chapter: str, bundle, words) -> list[dict]:
    """Cues as a scene records them, timed at the silent voice's estimated rate (no render)."""
    out, t = [], 0.0
    for beat, line in script.chapter_lines(chapter, bundle, bundle.ledger(), words).items():
        sentences = script.split_sentences(line.text)
        segs, at = [], t
        for s in sentences:
            segs.append({"start": at, "end": at + script.estimated_seconds(s), "text": s})
            at = segs[-1]["end"] + 0.3
        where = script.sentence_marks(line.text, sentences, [k for _, k in line.marks])
        marks = {name: [segs[i]["start"] + 0.1 * k / max(1, len(sentences[i])), segs[i]["end"]]
                 for (name, _), (i, k) in zip(line.marks, where)}
        out.append({"beat": beat, "start": t, "end": segs[-1]["end"], "clip_start": t, "segments": segs,
                    "marks": marks, "text": line.text})
        t = at + 0.5
    return out


def test_a_piece_is_anchored_where_the_narration_pauses_after_its_marker():
    cue = {"beat": "mask", "start": 10.0, "clip_start": 10.0, "segments": [{"start": 10.0, "end": 12.0, "text": "a"},
                                                                          {"start": 12.3, "end": 15.0, "text": "b"}],
           "marks": {"training": [12.3, 15.0], "minus": [13.5, 15.0]}}
    assert anchor(cue, None) == 12.0                    # the opening picture: after the first sentence
    assert anchor(cue, "minus") == 15.0                 # after its sentence
    assert anchor(cue, "training") == 13.5              # ... or when the next marker moves the picture
    assert anchor(dict(cue, marks={"x": [10.0, 12.0]}), None) == 10.0      # the picture moves at once
    d = markup.fill('Open. <bookmark mark="training"/>Then. <bookmark mark="minus"/>Last.', {})
    assert [(p.mark, p.text) for p in split("mask", d)] == [(None, "Open."), ("training", "Then."), ("minus", "Last.")]


class _Parser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], {}

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.setdefault(tag, dict(attrs))


def check_transcript(final: Path, lang: str, bundle, words) -> None:
    """The transcript (HTML and text) and the descriptions track beside a chapter, for `words`."""
    chapter = final.name[2:4]
    lines = script.chapter_lines(chapter, bundle, bundle.ledger(), words)
    said = script.chapter_descriptions(chapter, bundle, bundle.ledger(), words)
    page = final.with_suffix(".transcript.html").read_text(encoding="utf-8")
    text = final.with_suffix(".transcript.txt").read_text(encoding="utf-8")
    p = _Parser()
    p.feed(page)
    assert p.attrs["html"] == {"lang": lang, "dir": "rtl" if catalog.is_rtl(lang) else "ltr"}
    assert p.tags.count("h1") == 1 and p.tags.count("main") == 1 and "title" in p.tags
    assert p.tags.count("h2") == len(lines)                                 # one heading per beat
    heading = words.text("film:heading", chapter=chapter, title=words.text(f"chapter-{chapter}"))
    assert text.startswith(heading)
    label = words.text("kit:deck-describe")
    for beat, line in lines.items():
        assert line.text in text
        for piece in split(beat, said[beat]) if beat in said else []:
            assert f"{label}: {piece.text}" in text
            assert f'<dd class="description">{piece.text.replace("&", "&amp;")}' in page.replace("&#x27;", "'")
    vtt = final.with_suffix(".descriptions.vtt").read_text(encoding="utf-8")
    assert vtt.startswith(f"WEBVTT\nKind: descriptions\nLanguage: {lang}\n")
    cues = re.findall(r"^(\S+)\n(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})\n(.+)$", vtt, re.M)
    assert len(cues) == sum(len(split(b, d)) for b, d in said.items())
    starts = [c[1] for c in cues]
    assert starts == sorted(starts)


def test_every_chapter_render_writes_its_descriptions_track_and_transcript(tiny_bundle, tmp_path):
    """write_tracks from a chapter's recorded cues (here timed without a render): English, chapter 02."""
    from onepass.film.kit import describe
    words = Words.load("en")
    cues = fake_cues("02", tiny_bundle, words)
    (tmp_path / "s.cues.json").write_text(json.dumps(cues), encoding="utf-8")
    final = tmp_path / "ch02-one-attention-head.mp4"
    result = SimpleNamespace(chapter="02", title=words.text("chapter-02"), final=final,
                             scenes=[SimpleNamespace(seconds=cues[-1]["end"] + 1, job=SimpleNamespace(
                                 cues=tmp_path / "s.cues.json"))], seconds=cues[-1]["end"] + 1)
    made = describe.write_tracks([result], tiny_bundle, words)
    assert sorted(p.name for p in made) == ["ch02-one-attention-head.descriptions.vtt",
                                             "ch02-one-attention-head.transcript.html",
                                             "ch02-one-attention-head.transcript.txt"]
    check_transcript(final, "en", tiny_bundle, words)
    # the numbers the line names are listed under their beat
    assert f"{words.text('kit:handout-numbers')}:\n  {tiny_bundle.T}:" in final.with_suffix(".transcript.txt").read_text()


CUT_CHAPTER = "05"      # the shortest film in Urdu (254 s of 3 scenes on the tiny model; 00: 282 s of 5)


@pytest.mark.render
@pytest.mark.skipif(services.espeak_binary() is None, reason="espeak-ng is not installed")
def test_the_described_cut_holds_the_picture_while_each_description_is_said(tmp_path, monkeypatch, tiny_bundle):
    """Urdu, espeak-ng, tiny weights, chapter 05 (the plumbing is every chapter's; 05 is the
    shortest film, and tests/test_foundation.py renders 02 whole): the standard chapter unchanged;
    the described cut longer by the descriptions' speech (a frame per hold at most), its sound as long as its picture, and each
    description's caption starting where its speech starts; the transcript in Urdu, right to left."""
    from onepass.voiceover import audio, media
    monkeypatch.setenv(services.CACHE_ENV, str(tmp_path / "voice-cache"))
    args = ("--chapter", CUT_CHAPTER, "--lang", "ur", "--bundle", str(tiny_bundle.path), "--voice", "espeak",
            "--quality", "draft", "--out", str(tmp_path / "out"))
    rc, out, err = run_main(*args, "--described")
    assert rc == 0, err
    [final] = [p for p in (tmp_path / "out").glob(f"*/ur/draft/ch{CUT_CHAPTER}-*.mp4") if ".described" not in p.name]
    # the standard cut: sound, captions and picture together, right to left
    from tests.helpers import check_urdu_chapter_keeps_audio_captions_and_picture_together
    check_urdu_chapter_keeps_audio_captions_and_picture_together(final, out + err)
    # the standard chapter is as its join wrote it (the sha256 it recorded before the cut was made)
    joined = json.loads((final.parent / ".scenes" / f"{final.stem}.join.json").read_text(encoding="utf-8"))
    assert hashlib.sha256(final.read_bytes()).hexdigest() == joined["sha256"]
    cut = final.with_suffix(".described.mp4")
    assert cut.name in out + err
    fps = media.frame_rate(final)
    streams = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,duration,width,height", "-of", "json", str(cut)],
        capture_output=True, text=True, check=True).stdout)["streams"]
    # --quality draft: 288p10, the same film's layout at a third of low's pixels and two thirds of its frames
    assert fps == 10 and [(s["width"], s["height"]) for s in streams if s["codec_type"] == "video"] == [(512, 288)]
    kinds = {s["codec_type"]: float(s["duration"]) for s in streams}
    assert abs(kinds["audio"] - kinds["video"]) <= 1 / fps + 0.03       # AAC ends on a whole packet
    holds = json.loads((final.parent / ".scenes" / f"{cut.stem}.json").read_text(encoding="utf-8"))["holds"]
    words = Words.load("ur")
    said = sum(len(split(b, d)) for b, d in script.chapter_descriptions(
        CUT_CHAPTER, tiny_bundle, tiny_bundle.ledger(), words).items())
    assert len(holds) == said
    added = media.video_seconds(cut) - media.video_seconds(final)
    print(f"ch{CUT_CHAPTER} ur: standard {media.video_seconds(final):.2f} s, described {media.video_seconds(cut):.2f} s, "
          f"{len(holds)} holds, {added:.2f} s added")
    assert added == pytest.approx(sum(h["frames"] for h in holds) / fps, abs=1.5 / fps)
    # each hold lasts its description's speech, or its marked captions' reading time where that is longer
    # (issue 53: none over 20 characters a second), rounded up to a whole frame
    assert all(0 <= h["frames"] / fps - max(h["speech"], h["reading"]) < 1 / fps + 1e-6 for h in holds), holds
    # the speech the holds carry: each hold at most a frame longer than its clip (LINE_GAP of silence closing it)
    track = audio.decode(cut)
    db = audio.frame_db(track)
    cues = captions.read_srt(cut.with_suffix(".srt"))
    marked = [c for c in cues if c["text"].lstrip(captions.RLM).startswith(words.text("kit:description-caption",
                                                                                       text="").strip())]
    assert len(marked) >= len(holds)
    shift = 0.0
    for h in holds:
        start = h["frame"] / fps + shift
        first = min((c for c in marked if -1e-3 <= c["start"] - start < 0.1), key=lambda c: c["start"])
        onset = (int(start * 100) + int(np.argmax(db[int(start * 100):] > -45))) / 100
        assert abs(onset - first["start"]) <= audio.EDGE + 1 / fps, (h, onset, first["start"])
        shift += h["frames"] / fps
    check_transcript(final, "ur", tiny_bundle, words)


def test_a_change_to_the_code_that_holds_and_captions_the_cut_makes_the_cut_again(tmp_path, monkeypatch):
    """The described cut is kept while its key holds; the key covers the code that makes its holds and
    captions, so a fix there reaches cuts already made (a cut made by older code is not kept)."""
    from onepass.film.kit import describe
    from onepass.voiceover import captions
    final = tmp_path / "ch05.mp4"
    final.write_bytes(b"a chapter")
    result, service = SimpleNamespace(final=final), SimpleNamespace(spec="espeak")
    before = describe.described_key(result, [], service)
    assert describe.described_key(result, [], service) == before
    changed = tmp_path / "captions.py"
    changed.write_text(Path(captions.__file__).read_text(encoding="utf-8") + "\n# a fix\n", encoding="utf-8")
    monkeypatch.setattr(captions, "__file__", str(changed))
    assert describe.described_key(result, [], service) != before
    # and x264's settings, which the cut takes from the film's (engine/encoding.py)
    from onepass.engine import encoding
    monkeypatch.undo()
    assert describe.described_key(result, [], service) == before
    monkeypatch.setattr(encoding, "ENCODER_OPTIONS", {**encoding.ENCODER_OPTIONS, "preset": "medium"})
    assert describe.described_key(result, [], service) != before
