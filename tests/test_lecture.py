"""The lecture kit (film/kit/clips.py, film/kit/slides.py): a clip per beat cut frame-exactly from the
chapter, its captions and poster, clips.json, the offline HTML deck (driven in Debian's
Chromium with the network blocked) and the PowerPoint.

Chapter 02 of the tiny model is built through the real build (plan, keys, join) with a
stand-in scene renderer: each scene is a picture whose colours change every frame, as many frames as its beats
need, and cues for the lines chapter 02 really speaks, timed the way manim times them (each
beat on a frame). So the fixture takes seconds, not the minute a manim render would.
"""
from __future__ import annotations

import dataclasses
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass import cli as render  # noqa: E402
from onepass.film.make import build, request  # noqa: E402
from onepass.film.kit import clips, describe, slides  # noqa: E402
from onepass.film.plan import keys  # noqa: E402
from tests.helpers import StandInVoice, packets_account  # noqa: E402
from onepass.words.catalog import Words  # noqa: E402
from onepass.voiceover import captions, script  # noqa: E402
from onepass.voiceover.media import probe, stream_seconds, video_facts  # noqa: E402

FPS = 15
CHROMIUM = Path("/usr/bin/chromium")

FAKE_SCENE = '''\
"""Stand-in for onepass.film.run.render_job: a picture as long as the spec says, and its cues."""
import json, subprocess, sys
spec = json.loads(sys.argv[1])
tmp = spec["out"] + ".part.mp4"
subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                f"color=c=black:size=160x90:rate={spec['fps']},format=rgb24,geq=r='mod(N*37+X,256)'"
                f":g='mod(N*91+Y,256)':b='{spec['hue']}'",        # every frame its own colours
                "-frames:v", str(spec["frames"]), "-c:v", "libx264",
                "-pix_fmt", "yuv420p", "-g", "30", tmp], check=True)
import os
os.replace(tmp, spec["out"])
cues = []
for beat, text, start, end, clip, marks in spec["beats"]:
    if clip:
        subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                        f"sine=frequency=330:sample_rate=48000:duration={end - start:.3f}", "-ac", "1", clip],
                       check=True)
    sentences = [s.strip() + "." for s in text.split(". ") if s.strip()]
    step = (end - start) / len(sentences)
    segments = [{"start": start + i * step, "end": start + (i + 1) * step, "text": s.rstrip(".") + "."}
                for i, s in enumerate(sentences)]
    # each marker said where its character stands in the line, with the end of its sentence
    said = {}
    for name, at in marks:
        when = start + (end - start) * at / max(len(text), 1)
        said[name] = [when, next((s["end"] for s in segments if s["end"] >= when), end)]
    cues.append({"beat": beat, "start": start, "end": end, "text": text, "segments": segments,
                 "clip_start": start, "cached": True, "clip": clip, "overrun": 0.0, "marks": said})
json.dump(cues, open(spec["cues"], "w"))
''' + packets_account('spec["out"]', 'spec["out"]')


class Chapter02:
    """Chapter 02 of the tiny model, built by onepass.film.make.build with the stand-in scene renderer."""

    def __init__(self, tmp: Path, bundle, voiced: bool, words=None):
        self.tmp, self.bundle, self.voiced = tmp, bundle, voiced
        self.fake = tmp / "fake_scene.py"
        self.fake.write_text(FAKE_SCENE)
        self.lines = script.chapter_lines("02", bundle, bundle.ledger(), words)
        src = keys.chapter_source("onepass.scenes.ch02_attention")
        self.beats = {scene: (["title"] if i == 0 else []) + src.beats[scene] for i, scene in enumerate(src.scenes)}
        self.options = build.BuildOptions(quality="low", out=tmp / "out", jobs=2,
                                          voice=StandInVoice("fake") if voiced else None, command=self.command,
                                          words=words)
        self.result = build.render(["02"], bundle, self.options)[0]

    def command(self, job, cues):
        beats, frame = [], 0
        for k, beat in enumerate(self.beats[job.scene]):
            # beats 1.0 s apart plus a few frames of animation after each line; times as manim
            # records them (floats that land on a frame, give or take rounding)
            start, end = frame / FPS + 1e-9, frame / FPS + 1.0
            clip = str(self.tmp / f"ch02-{beat}.wav") if self.voiced else None
            beats.append([beat, self.lines[beat].text, start, end, clip, list(self.lines[beat].marks)])
            frame += FPS + 3 + k
        spec = {"out": str(job.mp4), "cues": str(cues), "frames": frame + 4, "fps": FPS, "beats": beats,
                "hue": 70 * job.index}                 # every scene its own blue
        return [sys.executable, str(self.fake), json.dumps(spec)]


@pytest.fixture(scope="module")
def silent(tiny_bundle, tmp_path_factory):
    """Chapter 02 as `--voice none` makes it (no audio track), with mp4 clips and the decks."""
    ch = Chapter02(tmp_path_factory.mktemp("lecture-silent"), tiny_bundle, voiced=False)
    ch.clips = clips.write_clips(ch.result, "mp4")
    ch.deck = slides.write_deck([ch.result], "mp4")
    # its files as built, before a test adds to them: what kit_copy starts from
    ch.built = tmp_path_factory.mktemp("lecture-built") / "out"
    shutil.copytree(ch.tmp / "out", ch.built)
    return ch


def kit_copy(silent, tmp: Path) -> Chapter02:
    """Chapter 02, its clips and decks as `silent` built them, in a folder of its own: a test that
    damages or remakes the kit starts from a copy (a build of its own took about 8 s)."""
    shutil.copytree(silent.built, tmp / "out")
    ch = Chapter02(tmp, silent.bundle, voiced=False)
    assert not ch.result.joined and all(s.cached for s in ch.result.scenes)       # the copy's, found
    return ch


@pytest.fixture(scope="module")
def voiced(tiny_bundle, tmp_path_factory):
    return Chapter02(tmp_path_factory.mktemp("lecture-voiced"), tiny_bundle, voiced=True)


def frame_of(video: Path, n: int) -> np.ndarray:
    """Frame n of a video, decoded to RGB."""
    w, h = (int(v) for v in (probe(video, "v:0", "stream=width,height")[k] for k in ("width", "height")))
    raw = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(video), "-vf", f"select=eq(n\\,{n})",
                          "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3).astype(float)


def png(path: Path) -> np.ndarray:
    from PIL import Image      # pillow: a manim dependency, needed only to read the posters here
    return np.asarray(Image.open(path).convert("RGB"), dtype=float)


# ---------------------------------------------------------------------------------------
# Clips

def test_one_clip_per_beat_adding_up_to_the_chapter_frame_for_frame(silent):
    entries = silent.clips.entries
    assert [e["beat"] for e in entries] == list(silent.lines)            # one per narration line, in order
    chapter_frames, _ = video_facts(silent.result.final)
    counted = [video_facts(silent.clips.path(e))[0] for e in entries]
    assert counted == [e["frames"] for e in entries]
    assert sum(counted) == chapter_frames
    assert entries[0]["start_frame"] == 0 and entries[-1]["end_frame"] == chapter_frames
    assert all(a["end_frame"] == b["start_frame"] for a, b in zip(entries, entries[1:]))
    folder = silent.clips.folder
    assert folder == silent.result.final.parent / "clips"
    for e in entries:
        for name in (f"ch02-{e['beat']}.mp4", f"ch02-{e['beat']}.png", f"ch02-{e['beat']}.vtt",
                     f"ch02-{e['beat']}.srt"):
            assert (folder / name).is_file(), name
    # no temporaries (a captioned clip's `.<name>.key` is its stamp, kept: it says which render it was cut from)
    assert not [p for p in folder.iterdir() if ".part" in p.name or (p.name.startswith(".ch") and p.suffix != ".key")]


def test_beats_start_on_the_frame_their_cue_names(silent):
    """Every beat after a scene's first starts where its line starts: round(start * fps)
    frames after its scene's first frame."""
    offset, expected = 0, {}
    for s in silent.result.scenes:
        for i, cue in enumerate(json.loads(s.job.cues.read_text())):
            expected[cue["beat"]] = offset + (0 if i == 0 else round(cue["start"] * FPS))
        offset += s.frames
    assert {e["beat"]: e["start_frame"] for e in silent.clips.entries} == expected


def test_clip_starts_on_its_beats_frame_and_its_poster_is_its_last_frame(silent):
    chapter = silent.result.final
    e = next(e for e in silent.clips.entries if e["beat"] == "mask")       # mid-scene, mid-chapter
    first = frame_of(silent.clips.path(e), 0)
    here, before, after = (frame_of(chapter, e["start_frame"] + d) for d in (0, -1, 1))
    diff = lambda a, b: np.abs(a - b).mean()  # noqa: E731
    assert diff(first, here) < 0.5 * min(diff(first, before), diff(first, after))
    poster = png(silent.clips.folder / e["files"]["poster"])
    assert diff(poster, frame_of(chapter, e["end_frame"] - 1)) < 0.01        # decoded from the chapter itself
    assert diff(poster, frame_of(chapter, e["end_frame"] - 2)) > 0.1


def test_clips_json_indexes_every_clip(silent):
    index = json.loads((silent.clips.folder / "clips.json").read_text())
    assert index["chapters"]["02"]["frames"] == video_facts(silent.result.final)[0]
    rows = [c for c in index["clips"] if c["chapter"] == "02"]
    assert [(c["beat"], c["text"]) for c in rows] == [(b, " ".join(t.text.split())) for b, t in silent.lines.items()]
    for c in rows:
        assert c["title"] == silent.result.title
        assert c["end"] == pytest.approx(c["end_frame"] / FPS) and c["start"] == pytest.approx(c["start_frame"] / FPS)
        assert c["frames"] == c["end_frame"] - c["start_frame"]
        assert set(c["files"]) >= {"mp4", "poster", "vtt", "srt"}


def test_clip_captions_are_retimed_to_start_at_zero(silent):
    e = next(e for e in silent.clips.entries if e["beat"] == "softmax")
    cues = captions.read_srt(silent.clips.folder / e["files"]["srt"])
    assert cues[0]["start"] == pytest.approx(0.0, abs=0.002)
    assert cues[-1]["end"] <= e["frames"] / FPS + 0.001
    assert " ".join(" ".join(c["text"].split()) for c in cues) == e["text"]
    vtt = (silent.clips.folder / e["files"]["vtt"]).read_text()
    assert vtt.startswith("WEBVTT") and "00:00:00.000 -->" in vtt


def test_a_second_run_renders_and_rewrites_nothing(silent):
    folder = silent.clips.folder
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    again = build.render(["02"], silent.bundle, silent.options)[0]
    assert not again.joined and all(s.cached for s in again.scenes)
    cs = clips.write_clips(again, "mp4")
    deck = slides.write_deck([again], "mp4")
    assert (cs.cut, cs.kept) == (0, len(silent.lines))
    assert deck.written == []
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_a_failed_cut_leaves_the_folder_as_it_was(silent, monkeypatch):
    folder = silent.clips.folder
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}

    def broken(args, cwd=None):
        out = [a for a in args if str(a).endswith(".gif")]
        Path(out[0]).write_bytes(b"GIF89a half")          # ffmpeg got as far as one file
        raise clips.MediaError("ffmpeg: disk full")
    monkeypatch.setattr(clips, "run_ffmpeg", broken)
    with pytest.raises(clips.ClipError, match="disk full"):
        clips.write_clips(silent.result, "gif")
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_voiced_clips_carry_their_stretch_of_the_narration_in_each_format(voiced):
    mp4 = clips.write_clips(voiced.result, "mp4")
    e = mp4.entries[3]
    path = mp4.path(e)
    assert probe(path, "a:0", "stream=codec_name")["codec_name"] == "aac"
    assert stream_seconds(path, "a") == pytest.approx(e["frames"] / FPS, abs=0.05)
    webm = clips.write_clips(voiced.result, "webm")
    w = webm.entries[3]
    assert probe(webm.path(w), "v:0", "stream=codec_name")["codec_name"] == "vp9"
    assert probe(webm.path(w), "a:0", "stream=codec_name")["codec_name"] == "opus"
    assert video_facts(webm.path(w))[0] == e["frames"]
    gif = clips.write_clips(voiced.result, "gif")
    g = probe(gif.path(gif.entries[3]), "v:0", "stream=codec_name,width,r_frame_rate")
    assert g["codec_name"] == "gif" and int(g["width"]) <= clips.GIF_WIDTH
    assert eval(g["r_frame_rate"]) <= clips.GIF_FPS
    assert probe(gif.path(gif.entries[3]), "a:0", "stream=codec_name") is None
    # every format of a beat stays listed side by side
    index = json.loads((gif.folder / "clips.json").read_text())
    row = next(c for c in index["clips"] if c["id"] == e["id"])
    assert {"mp4", "webm", "gif"} <= set(row["files"])


def test_frames_of_a_scene_without_narration_go_to_the_beat_before():
    def scene(name, frames, cues):
        return SimpleNamespace(fps=15.0, frames=frames, job=SimpleNamespace(scene=name, key=name)), cues
    parts = [scene("A", 30, [{"beat": "a", "start": 0.0, "text": "A."}, {"beat": "b", "start": 1.0, "text": "B."}]),
             scene("Quiet", 12, []),
             scene("C", 20, [{"beat": "c", "start": 0.2, "text": "C."}])]
    result = SimpleNamespace(chapter="09", scenes=[p[0] for p in parts])
    spans = clips.beat_spans(result, [p[1] for p in parts])
    assert [(s.beat, s.start, s.end) for s in spans] == [("a", 0, 15), ("b", 15, 42), ("c", 42, 62)]
    assert spans[1].scene_keys == ["A", "Quiet"]


def test_cues_that_disagree_with_the_frames_fail_loudly():
    s = SimpleNamespace(fps=15.0, frames=10, job=SimpleNamespace(scene="A", key="A"))
    result = SimpleNamespace(chapter="09", scenes=[s])
    with pytest.raises(clips.ClipError, match="beat 'b' starts at frame 30"):
        clips.beat_spans(result, [[{"beat": "a", "start": 0.0, "text": "A."}, {"beat": "b", "start": 2.0, "text": "B."}]])


def test_render_py_clip_flags(capsys):
    req = request.from_args(render.parse_args(["--chapter", "02", "--clips", "--slides", "--clip-format", "webm",
                                               "--voice", "none"]))
    assert (req.clips, req.slides, req.kit_format) == (True, True, "webm")
    for bad, says in ((["--chapter", "02", "--clip-format", "gif"], "--clip-format: needs --clips or --slides"),
                      (["--chapter", "02", "--clips", "--clip-format", "avi"], "--clip-format: must be one of"),
                      (["--inspect", "--clips"], "--clips: the lecture kit needs chapters"),
                      (["--list", "--slides"], "--list takes no --slides")):
        assert render.main(bad + ["--voice", "none"] if bad[0] != "--list" else bad) == 2, bad
        assert says in capsys.readouterr().err, bad


# ---------------------------------------------------------------------------------------
# Decks

def test_powerpoint_has_a_video_and_the_narration_on_every_slide(silent):
    from pptx import Presentation          # python-pptx: read back what film/kit/slides.py wrote
    from pptx.enum.shapes import MSO_SHAPE_TYPE
    prs = Presentation(str(silent.deck.pptx))
    assert len(prs.slides) == len(silent.lines) == silent.deck.slides
    for slide, (beat, line) in zip(prs.slides, silent.lines.items()):
        text = line.text
        movies = [s for s in slide.shapes if s.shape_type == MSO_SHAPE_TYPE.MEDIA]
        assert len(movies) == 1, beat
        assert slide.notes_slide.notes_text_frame.text == " ".join(text.split())
    media = {p.partname for p in prs.part.package.iter_parts() if p.partname.startswith("/ppt/media/")
             and p.partname.endswith(".mp4")}
    assert len(media) == len(silent.lines)


def test_captions_burnt_together_are_each_clips_own(silent, tmp_path):
    """The deck burns its clips' captions by one ffmpeg process (mixdown.burn_captions_together),
    each input with its own filter chain, captions and output: each captioned clip holds the same
    video packets as its clip burnt alone (by a process of its own, as before)."""
    from onepass.voiceover import mixdown
    from onepass.voiceover.media import packet_hashes
    folder = silent.clips.folder
    for e in (silent.clips.entries[1], silent.clips.entries[-1]):
        alone = tmp_path / f"{e['id']}.mp4"
        mixdown.burn_captions(folder / e["files"]["mp4"], folder / e["files"]["srt"], alone)
        assert packet_hashes(alone) == packet_hashes(folder / f"{e['id']}{slides.CAPTIONED}"), e["id"]


def test_a_failed_burn_names_its_clip_and_keeps_those_before_it(silent, tmp_path):
    """When the process burning several clips fails, they are burnt one at a time: the error names
    the clip that failed (as when each had a process of its own), the clips before it are kept,
    and nothing half-written is left."""
    entries = silent.clips.entries[:3]
    for e in entries:
        for kind in ("mp4", "srt"):
            shutil.copy(silent.clips.folder / e["files"][kind], tmp_path)
    (tmp_path / entries[1]["files"]["mp4"]).write_bytes(b"not a video")
    copied = {p.name for p in tmp_path.iterdir()}
    cs = dataclasses.replace(silent.clips, folder=tmp_path, entries=entries)
    with pytest.raises(clips.ClipError, match=f"burning captions into {entries[1]['id']}.mp4 failed"):
        slides.captioned_clips(cs, "en")
    made = f"{entries[0]['id']}{slides.CAPTIONED}"
    assert {p.name for p in tmp_path.iterdir()} - copied == {made, f".{made}.key"}
    before = (tmp_path / made).stat().st_mtime_ns
    assert slides.captioned_clips(dataclasses.replace(cs, entries=entries[:1]), "en") == {entries[0]["id"]: tmp_path / made}
    assert (tmp_path / made).stat().st_mtime_ns == before                 # kept: stamped when burnt


def test_html_deck_is_self_contained(silent):
    page = silent.deck.html.read_text(encoding="utf-8")
    assert silent.deck.html.parent == silent.clips.folder
    assert "http://" not in page and "https://" not in page and "<track" not in page
    data = json.loads(page.split('<script id="deck-data" type="application/json">')[1].split("</script>")[0])
    assert [s["notes"] for s in data["slides"]] == [" ".join(t.text.split()) for t in silent.lines.values()]
    assert all((silent.clips.folder / s["clip"]).is_file() for s in data["slides"])


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (make system installs Debian's chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM),
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                    "--disable-component-update", "--no-first-run"])
        yield b
        b.close()


def test_html_deck_plays_offline_in_chromium(silent, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def offline(route):
        requests.append(route.request.url)
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()
    page.route("**/*", offline)
    page.goto(silent.deck.html.as_uri())

    def playing():
        page.wait_for_function("() => { const v = document.querySelector('#stage video');"
                               " return v && !v.paused && v.currentTime > 0.2; }", timeout=15000)
        return page.evaluate("() => { const v = document.querySelector('#stage video');"
                             " return {clip: v.dataset.clip, t: v.currentTime, src: v.currentSrc,"
                             " tracks: Array.from(v.textTracks, t => t.kind), cues: v.textTracks[0].cues.length,"
                             " mode: v.textTracks[0].mode, chapter: v.textTracks[1].cues[0].text} }")

    if page.is_visible("#start"):          # the browser wanted a click before playing sound
        page.click("#start")
    first = playing()
    beats = [e["id"] for e in silent.clips.entries]
    assert first["clip"] == f"{beats[0]}.mp4" and first["src"].startswith("file://")
    assert first["tracks"] == ["captions", "chapters", "descriptions"]
    assert first["cues"] >= 1 and first["mode"] == "showing"
    assert first["chapter"] == slides.slide_heading("{chapter} · {title} — {beat}", silent.clips.entries[0])
    # it plays on: its time moves past where it was (waited for, not a fixed 300 ms)
    page.wait_for_function(f"() => document.querySelector('#stage video').currentTime > {first['t']}", timeout=5000)

    page.keyboard.press("ArrowRight")
    second = playing()
    assert second["clip"] == f"{beats[1]}.mp4" and second["cues"] >= 1
    assert page.locator("#stage video").count() == 1
    page.keyboard.press("PageDown")
    assert playing()["clip"] == f"{beats[2]}.mp4"
    page.keyboard.press("ArrowLeft")
    assert playing()["clip"] == f"{beats[1]}.mp4"
    page.keyboard.press("PageUp")
    assert playing()["clip"] == f"{beats[0]}.mp4"
    assert page.text_content("#notes") == silent.clips.entries[0]["text"]
    page.click("#chapters button[data-chapter='02']")
    assert playing()["clip"] == f"{beats[0]}.mp4"
    page.screenshot(path=str(silent.tmp / "deck.png"))

    # a clip stops on its last frame
    page.keyboard.press("End")
    page.wait_for_function("() => document.querySelector('#stage video').ended", timeout=15000)
    last = page.evaluate("() => { const v = document.querySelector('#stage video');"
                         " return {clip: v.dataset.clip, t: v.currentTime, d: v.duration} }")
    assert last["clip"] == f"{beats[-1]}.mp4" and last["t"] == pytest.approx(last["d"], abs=0.1)

    assert errors == []
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    page.close()


def test_html_deck_of_burnt_captions_shows_them_once(silent, browser):
    """Clips cut from a --burn-captions chapter carry their captions in the picture: the deck
    keeps the text track (for search and screen readers) but does not draw it a second time."""
    burnt = dataclasses.replace(silent.clips, entries=[dict(e, burnt_captions=True) for e in silent.clips.entries])
    page_file = silent.clips.folder / "burnt.html"
    page_file.write_text(slides.deck_html([burnt], "mp4", "burnt", slides.deck_words(Words.load("en"))), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(page_file.as_uri())
    page.wait_for_function("() => document.querySelector('#stage video')", timeout=15000)
    track = page.evaluate("() => { const t = document.querySelector('#stage video').textTracks[0];"
                          " return {mode: t.mode, cues: t.cues.length} }")
    assert track["mode"] == "hidden" and track["cues"] >= 1
    page.close()


def test_the_request_writes_clips_and_deck(silent):
    """The lecture kit a request asks for (render.py and the batch alike), on an already-built
    chapter: reports what it did and lists the files."""
    req = request.from_args(render.parse_args(["--chapter", "02", "--clips", "--slides", "--voice", "none"]))
    said = []
    files, shown = request.lecture_kit(req, [silent.result], said.append)
    assert [p.name for p in shown] == ["clips.json", "index.html", "lecture-ch02.pptx"]
    assert len(files) == len(silent.lines) + 3 and all(p.is_file() for p in files)
    assert f"{len(silent.lines)} mp4 clips, 0 cut" in said[0] and "unchanged" in said[0]


# ---------------------------------------------------------------------------------------
# The deck, accessible (issue 43 item 5): axe-core, the keyboard alone, audio description

@pytest.fixture(scope="module")
def a11y_decks(tiny_long_bundle, tmp_path_factory):
    """a11y_decks[lang]: chapter 02 of a 30-token prompt, silent, in that language (en, ur): its
    clips, its descriptions track and the deck made from them; each made on first use (a test
    process that runs only one language's tests makes only that deck)."""
    class Decks(dict):
        def __missing__(self, lang):
            words = Words.load(lang)
            ch = Chapter02(tmp_path_factory.mktemp(f"a11y-{lang}"), tiny_long_bundle, voiced=False, words=words)
            ch.words = words
            ch.clips = clips.write_clips(ch.result, "mp4")
            # the chapter's descriptions track and transcript, as every render writes them
            describe.write_tracks([ch.result], tiny_long_bundle, words)
            ch.track = slides.read_vtt(slides.descriptions_path(ch.result.final))
            assert len(ch.track) >= len(ch.clips.entries) - 1
            ch.deck = slides.write_deck([ch.result], "mp4", words)
            ch.data = json.loads(ch.deck.html.read_text(encoding="utf-8").split('type="application/json">', 1)[1]
                                 .split("</script>", 1)[0])
            self[lang] = ch
            return ch
    return Decks()


# window.speechSynthesis replaced before the deck's script runs: each utterance is recorded with
# the clip's state when it is spoken, and "spoken" for a while, then ended as a browser ends it
SPEECH_STUB = """
window.__said = [];
window.__speechMs = 250;
const stub = {
  speak(u) {
    const v = document.querySelector('#stage video');
    const said = {text: u.text, lang: u.lang, paused: v.paused, t: v.currentTime, slide: Number(v.dataset.slide)};
    window.__said.push(said);
    setTimeout(() => u.dispatchEvent(new Event('start')), 0);
    setTimeout(() => {
      said.pausedAtEnd = v.paused;
      said.tAtEnd = v.currentTime;
      u.dispatchEvent(new Event('end'));
      setTimeout(() => { said.resumed = !v.paused; }, 150);
    }, window.__speechMs);
  },
  cancel() {}, pause() {}, resume() {}, getVoices() { return []; }, speaking: false, pending: false,
};
Object.defineProperty(window, 'speechSynthesis', {value: stub, configurable: true});
"""


def deck_page(browser, ch):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.add_init_script(SPEECH_STUB)
    page.goto(ch.deck.html.as_uri())
    page.wait_for_function("() => { const v = document.querySelector('#stage video');"
                           " return v && !v.paused && v.currentTime > 0.1; }", timeout=15000)
    return page


def axe_violations(page) -> list[tuple[str, str, list]]:
    from axe_playwright_python.sync_playwright import Axe
    found = Axe().run(page, options={"resultTypes": ["violations"]}).response["violations"]
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]]) for v in found]


def slide_now(page) -> int:
    return page.evaluate("() => Number(document.querySelector('#stage video').dataset.slide)")


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_the_deck_has_no_axe_violations_and_the_transcript_beside_the_slide(a11y_decks, browser, lang):
    """axe-core (every rule it runs by default, best practices included, any impact) finds nothing
    in the deck as it opens, on the last slide with audio description on while a description is
    read, and with the transcript and chapter list hidden; the transcript (narration and
    descriptions) sits beside the video, on the side the language reads towards."""
    ch = a11y_decks[lang]
    page = deck_page(browser, ch)
    found = {"open": axe_violations(page)}
    box = {k: page.locator(k).bounding_box() for k in ("#stage video", "#transcript")}
    if lang == "ur":
        assert box["#transcript"]["x"] + box["#transcript"]["width"] <= box["#stage video"]["x"] + 1
    else:
        assert box["#transcript"]["x"] >= box["#stage video"]["x"] + box["#stage video"]["width"] - 1
    first = ch.data["slides"][0]
    assert page.text_content("#notes") == first["notes"] == ch.clips.entries[0]["text"]
    assert page.eval_on_selector_all("#descriptions p", "ps => ps.map(p => p.textContent)") == \
        [d["text"] for d in first["descriptions"]]
    page.evaluate("() => { window.__speechMs = 60000; }")         # a description still being read
    page.click("#describe")
    page.keyboard.press("End")
    page.wait_for_function("() => document.querySelector('#descriptions p.speaking')", timeout=15000)
    found["describing"] = axe_violations(page)
    page.click("#transcript-toggle")
    page.keyboard.press("c")
    assert page.locator("#transcript").is_hidden() and page.locator("#chapters").is_hidden()
    found["hidden"] = axe_violations(page)
    assert page.errors == []
    page.close()
    assert found == {state: [] for state in found}


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_every_control_is_reached_and_operated_by_the_keyboard_alone_with_a_visible_focus(a11y_decks, browser, lang):
    ch = a11y_decks[lang]
    page = deck_page(browser, ch)
    n = len(ch.data["slides"])
    controls = page.eval_on_selector_all("button:not([disabled]):not([hidden])", "bs => bs.map(b => b.id || b.textContent)")
    # Tab goes round every button (and the transcript, which scrolls), each with a visible outline
    seen = {}
    for _ in range(len(controls) + 4):
        page.keyboard.press("Tab")
        f = page.evaluate("""() => { const e = document.activeElement, s = getComputedStyle(e);
            return e === document.body ? null : {id: e.id || e.textContent, visible: e.matches(':focus-visible'),
                    style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor}; }""")
        if f:                                # between the last control and the first: the page itself
            seen[f["id"]] = f
    assert set(controls) | {"transcript"} <= set(seen), set(controls) - set(seen)
    for name, f in seen.items():
        assert f["visible"] and f["style"] != "none" and f["width"] >= 2, (name, f)

    def tab_to(target: str):
        for _ in range(len(controls) + 4):
            if page.evaluate("() => document.activeElement.id") == target:
                return
            page.keyboard.press("Tab")
        raise AssertionError(f"Tab never reached #{target}")

    def pressed(target: str) -> bool:
        return page.get_attribute(f"#{target}", "aria-pressed") == "true"

    # every slide, forward and back, by the keys the deck names (the arrows follow the reading)
    forward, backward = ("ArrowLeft", "ArrowRight") if lang == "ur" else ("ArrowRight", "ArrowLeft")
    page.evaluate("() => document.activeElement.blur()")
    keys = [forward, " ", "PageDown", "ArrowDown", "Enter"]
    for i in range(1, n):
        page.keyboard.press(keys[i % len(keys)])
        assert slide_now(page) == i
    page.keyboard.press(forward)
    assert slide_now(page) == n - 1
    for i in range(n - 2, n - 5, -1):
        page.keyboard.press(backward if i % 2 else "PageUp")
        assert slide_now(page) == i
    page.keyboard.press("Home")
    assert slide_now(page) == 0
    page.keyboard.press("End")
    assert slide_now(page) == n - 1
    # every button by Tab and Enter or space
    tab_to("prev")
    page.keyboard.press("Enter")
    assert slide_now(page) == n - 2
    tab_to("next")
    page.keyboard.press(" ")
    assert slide_now(page) == n - 1
    page.keyboard.press("Home")                         # on the body: not a button
    tab_to("play")
    page.keyboard.press(" ")
    assert page.evaluate("() => document.querySelector('#stage video').paused")
    assert page.text_content("#play") == ch.words.text("kit:deck-play")
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.querySelector('#stage video').paused", timeout=5000)
    assert page.text_content("#play") == ch.words.text("kit:deck-pause")
    tab_to("captions")
    page.keyboard.press(" ")
    assert not pressed("captions")
    assert page.evaluate("() => document.querySelector('#stage video').textTracks[0].mode") == "hidden"
    page.keyboard.press("Enter")
    assert pressed("captions")
    assert page.evaluate("() => document.querySelector('#stage video').textTracks[0].mode") == "showing"
    tab_to("describe")
    page.keyboard.press("Enter")
    assert pressed("describe")
    page.keyboard.press(" ")
    assert not pressed("describe")
    tab_to("transcript-toggle")
    page.keyboard.press(" ")
    assert page.locator("#transcript").is_hidden() and not pressed("transcript-toggle")
    page.keyboard.press("Enter")
    assert page.locator("#transcript").is_visible()
    tab_to("fullscreen")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.fullscreenElement !== null", timeout=5000)
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.fullscreenElement === null", timeout=5000)
    # letter shortcuts can be turned off (WCAG 2.1.4): then n no longer hides the transcript
    tab_to("letters")
    page.keyboard.press("Enter")
    assert not pressed("letters")
    page.keyboard.press("n")
    assert page.locator("#transcript").is_visible()
    page.keyboard.press(" ")
    page.keyboard.press("n")
    assert page.locator("#transcript").is_hidden()
    page.keyboard.press("n")
    # a chapter's button goes to its first slide; the focus stays on it
    page.keyboard.press("End")
    for _ in range(len(controls) + 4):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.dataset.chapter") == "02":
            break
    page.keyboard.press("Enter")
    assert slide_now(page) == 0
    assert page.evaluate("() => document.activeElement.dataset.chapter") == "02"
    assert page.get_attribute("#chapters button[data-chapter='02']", "aria-current") == "true"
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_descriptions_are_read_aloud_in_the_decks_language_while_the_clip_waits(a11y_decks, browser, lang):
    """With audio description on, each description of a slide is handed to the browser's speech
    synthesis (window.speechSynthesis, observed by a stand-in) at the moment its cue names, in
    the deck's language; the clip is paused from before it is spoken until it ends, then plays on."""
    ch = a11y_decks[lang]
    page = deck_page(browser, ch)
    assert page.evaluate("() => window.__said.length") == 0, "read aloud before audio description was asked for"
    shown = [i for i, s in enumerate(ch.data["slides"]) if len(s["descriptions"]) > 1][:2] or [0, 1]
    page.keyboard.press("d")
    assert page.get_attribute("#describe", "aria-pressed") == "true"
    expected = []
    for i in sorted({0, *shown}):
        page.evaluate(f"() => show({i})")
        want = ch.data["slides"][i]["descriptions"]
        expected += [(i, d) for d in want]
        page.wait_for_function(f"() => window.__said.filter(s => s.slide === {i}).length === {len(want)}"
                               f" && document.querySelector('#stage video').ended", timeout=20000)
    said = page.evaluate("() => window.__said")
    assert [(s["slide"], s["text"]) for s in said] == [(i, d["text"]) for i, d in expected]
    for s, (i, d) in zip(said, expected):
        assert s["lang"] == lang
        assert s["paused"] and s["pausedAtEnd"] and s["tAtEnd"] == s["t"], s       # the picture held
        assert s["t"] == pytest.approx(d["start"], abs=0.35), (s, d)               # where its cue says
    assert all(s["resumed"] for s in said[:-1] if s["t"] < ch.data["slides"][s["slide"]]["duration"] - 0.4)
    # the descriptions the deck reads are the chapter's track, cut per clip
    assert [d["text"] for s in ch.data["slides"] for d in s["descriptions"]] == [c["text"] for c in ch.track]
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_powerpoint_slides_are_titled_first_their_videos_described_and_their_text_in_its_language(a11y_decks, lang):
    """Issue 43 item 6, read back with python-pptx: each slide's first shape (reading order) is
    its title placeholder holding the slide's heading; its video (a picture with a poster) has
    the beat's descriptions as its alternative text; every text run says its language."""
    from pptx import Presentation
    from pptx.enum.shapes import PP_PLACEHOLDER
    ch = a11y_decks[lang]
    prs = Presentation(str(ch.deck.pptx))
    assert prs.core_properties.language == lang
    assert len(prs.slides) == len(ch.data["slides"])
    for slide, s in zip(prs.slides, ch.data["slides"]):
        first = slide.shapes[0]
        assert first.is_placeholder and first.placeholder_format.type == PP_PLACEHOLDER.TITLE, s["beat"]
        assert slide.shapes.title.text == s["heading"]
        pictures = slide.shapes._spTree.xpath("./p:pic")
        assert len(pictures) == 1
        alt = pictures[0].xpath("./p:nvPicPr/p:cNvPr/@descr")
        assert s["descriptions"] or s["beat"] == "title", s["beat"]            # a title card: its title
        assert alt == [" ".join(d["text"] for d in s["descriptions"]) or s["heading"]], s["beat"]
        for part in (slide, slide.notes_slide):
            runs = part._element.xpath(".//a:r")
            assert runs and all(r.xpath("./a:rPr/@lang") == [lang] for r in runs), s["beat"]
        assert (first.text_frame.paragraphs[0]._p.pPr.get("rtl") == "1") == (lang == "ur")



# ---------------------------------------------------------------------------------------
# Text shown as written (issue 21: a prompt with `<!--` emptied the deck; markup in a caption
# was read as markup by the deck's cues)

MARKUP = "<!-- a </script> b </b> &amp; <i>c</i> {\\b1}d\\N"


def markup_deck(silent, texts: list[str], name: str, lang: str = "en") -> tuple[Path, object]:
    """A deck page (beside the clips) whose slides' notes and captions are `texts`, one slide each;
    returns the page and its clip set."""
    folder, entries = silent.clips.folder, []
    for i, text in enumerate(texts):
        e = silent.clips.entries[i % len(silent.clips.entries)]
        srt = f"{name}-{i}.srt"
        captions.write_srt(captions.caption_blocks({"start": 0.0, "end": 1.0, "text": text}), folder / srt, lang)
        entries.append(dict(e, text=text, files=dict(e["files"], srt=srt)))
    cs = dataclasses.replace(silent.clips, entries=entries)
    page = folder / f"{name}.html"
    page.write_text(slides.deck_html([cs], "mp4", name, slides.deck_words(Words.load(lang))), encoding="utf-8")
    return page, cs


@pytest.fixture(scope="module")
def reader(browser):
    """The Chromium page deck_text reads decks in: one for every deck (a page of its own, a
    browser context each, took 0.35 s of the 0.55 s a reading took); each deck is a navigation,
    a new document, so nothing of the last one stays."""
    page = browser.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    page.close()


def deck_text(reader, page_file: Path) -> list[dict]:
    """Per slide, what Chromium shows: notes, chapter buttons and each cue's text as displayed."""
    reader.errors.clear()
    reader.goto(page_file.as_uri())
    shown = reader.evaluate("""() => DECK.slides.map((s, i) => { show(i);
        const t = document.querySelector('#stage video').textTracks[0];
        return {notes: document.getElementById('notes').textContent,
                buttons: document.querySelectorAll('#chapters button').length,
                cues: Array.from(t.cues, c => c.getCueAsHTML().textContent)}; })""")
    assert reader.errors == []
    return shown


def test_markup_in_a_prompt_keeps_the_deck_working_and_is_shown_as_written(silent, reader):
    """`<!--` in the deck's data made its JSON unparseable (no buttons, no video); `</b>` and
    `&amp;` in a caption were read as WebVTT markup."""
    page_file, cs = markup_deck(silent, [MARKUP, "plain"], "markup")
    assert json.loads(page_file.read_text().split('type="application/json">')[1].split("</script>")[0])
    shown = deck_text(reader, page_file)
    assert [s["buttons"] for s in shown] == [1, 1]
    assert shown[0]["notes"] == MARKUP
    srt = captions.read_srt(cs.folder / cs.entries[0]["files"]["srt"])
    assert shown[0]["cues"] == [c["text"] for c in srt]
    assert "".join(shown[0]["cues"]).replace("\n", " ") == MARKUP


def test_powerpoint_notes_hold_markup_as_written(silent):
    from pptx import Presentation
    cs = dataclasses.replace(silent.clips, entries=[dict(silent.clips.entries[0], text=MARKUP)])
    prs = Presentation(io.BytesIO(slides.deck_pptx([cs], "t")))
    assert prs.slides[0].notes_slide.notes_text_frame.text == MARKUP


CAPTION_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Co", "Cn")), min_size=1, max_size=120) \
    .map(lambda t: " ".join(t.split())).filter(bool)


def assert_lines_spell(lines: list[str], text: str):
    """The caption lines, read in order, are `text`: each line the next stretch of it (less the RLM an
    RTL line starts with), the lines parted at one space, or inside a word only where that word is
    longer than a line (textwrap breaks it: a 43-digit number on two lines)."""
    at = 0
    for line in (line.lstrip(captions.RLM) for line in lines):
        assert text.startswith(line, at), (line, text[at:])
        at += len(line)
        if at < len(text) and text[at] == " ":
            at += 1
        elif at < len(text):
            word = text[text.rfind(" ", 0, at) + 1:(text + " ").find(" ", at)]
            assert len(word) > captions.LINE_CHARS, (word, lines)
    assert at == len(text), (lines, text)


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(CAPTION_TEXT, min_size=1, max_size=4), lang=st.sampled_from(["en", "ur"]))
@example(texts=[MARKUP, "{\\", "&lt; -->"], lang="en")
@example(texts=["0" * 43, "a " + "ب" * 50 + " c"], lang="ur")      # words longer than a line
def test_any_text_is_shown_exactly_in_deck_cues_and_notes(silent, reader, texts, lang):
    """Captions, deck cues and notes made from arbitrary Unicode show exactly the text: each cue
    as Chromium's TextTrack displays it is the caption line (the SRT's), the notes the line."""
    page_file, cs = markup_deck(silent, texts, "prop", lang)
    shown = deck_text(reader, page_file)
    for s, e in zip(shown, cs.entries):
        assert s["notes"] == e["text"]
        assert s["cues"] == [c["text"] for c in captions.read_srt(cs.folder / e["files"]["srt"])]
        assert_lines_spell([line for cue in s["cues"] for line in cue.split("\n")], e["text"])
    from pptx import Presentation
    prs = Presentation(io.BytesIO(slides.deck_pptx([dataclasses.replace(cs, entries=cs.entries[:1])], "t")))
    assert prs.slides[0].notes_slide.notes_text_frame.text == texts[0]


# ---------------------------------------------------------------------------------------
# Damaged lecture outputs are made again (issue 21)

def _kit(ch, force=False):
    """What `--clips --slides` (with `force`) does on the chapter: build, clips, deck."""
    result = build.render(["02"], ch.bundle, dataclasses.replace(ch.options, force=force))[0]
    return result, clips.write_clips(result, "mp4", force=force), slides.write_deck([result], "mp4", force=force)


def test_damaged_clips_posters_captions_and_decks_are_made_again(silent, tmp_path):
    from onepass.data.bundle import sha256_file
    ch = kit_copy(silent, tmp_path)
    result, cs, deck = _kit(ch)
    assert cs.cut == 0 and deck.written == []
    final, folder = result.final, cs.folder
    e = cs.entries[2]
    files = [cs.path(e), folder / e["files"]["poster"], folder / e["files"]["srt"], final.with_suffix(".png"),
             final.with_suffix(".srt"), deck.pptx, deck.html]
    good = {p: sha256_file(p) for p in files}
    with open(files[0], "r+b") as f:                       # a truncated clip
        f.truncate(files[0].stat().st_size // 2)
    files[1].write_bytes(b"")                               # an emptied poster
    files[2].write_text("1\nnot a caption\n")              # garbled captions
    files[3].write_bytes(b"")                               # the chapter's thumbnail, emptied
    files[4].write_bytes(b"\xff\xfe garbled")
    files[5].write_bytes(b"PK not a deck")
    files[6].write_bytes(b"\xff garbled")
    result, cs, deck = _kit(ch)
    assert cs.cut == 1 and deck.pptx in deck.written
    same = [p for p in files if p != deck.pptx]            # a PowerPoint is stamped with the time it was made
    assert {p: sha256_file(p) for p in same} == {p: good[p] for p in same}
    assert video_facts(cs.path(cs.entries[2]))[0] == e["frames"]
    from pptx import Presentation
    assert len(Presentation(str(deck.pptx)).slides) == len(cs.entries)


def test_force_makes_every_lecture_output_again(silent, tmp_path):
    ch = kit_copy(silent, tmp_path)
    stamp = {p: p.stat().st_mtime_ns for p in (ch.result.final.parent / "clips").iterdir() if p.suffix != ".lock"}
    _, cs, deck = _kit(ch, force=True)
    assert cs.cut == len(cs.entries) and deck.pptx in deck.written and deck.html in deck.written
    again = {p: p.stat().st_mtime_ns for p in stamp}
    assert [p.name for p in stamp if again[p] == stamp[p] and p.suffix in (".mp4", ".png", ".srt", ".vtt")] == []


def test_what_a_killed_cut_or_burn_left_is_removed_by_the_next_run(silent, tmp_path, monkeypatch):
    from onepass.voiceover import mixdown
    ch = kit_copy(silent, tmp_path)
    dest = ch.result.final.parent
    left = [dest / "clips" / ".ch02-cut-x1y2", dest / "onepass-burn-z3"]
    for p in left:
        p.mkdir()
        (p / "half.mp4").write_bytes(b"half")
    _kit(ch)
    assert not any(p.exists() for p in left)
    # the burn works beside its output (where the next run looks), not in $TMPDIR
    seen = []
    monkeypatch.setattr(mixdown, "run_ffmpeg", lambda args, cwd=None: seen.append(Path(cwd)))
    mixdown.burn_captions(ch.result.final, ch.result.final.with_suffix(".srt"), dest / "burnt.mp4")
    assert seen[0].parent == dest and seen[0].name.startswith("onepass-burn-")
