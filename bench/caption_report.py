"""The caption report per chapter and language (issue 43 item 4), without rendering.

    python bench/caption_report.py --bundle DIR [--voice espeak] [--lang en,es,ur] [--chapter 00,...]
                                   [--scenes] [--save cues.json] [--load cues.json] [--before] [--problems]

Each chapter's narration lines are timed sentence by sentence by the voice asked for (espeak: from
its real audio; none: the estimated rate), one line after another with the film's gap between
lines (the scenes only add time between lines, so the film's captions have at least this room);
with --scenes, each scene is instead built with manim's dry run (draw=False) and its own cues and
length are used, as the film's join does (minutes per chapter). The cues are cut into captions
with onepass.voiceover.captions.join_cues (or, with --before, the baseline's cutting: the file at git
commit BEFORE) and checked with onepass.voiceover.captions_check. --save keeps the raw cues, --load
reuses them (before and after on the same timing).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEFORE = "470f64117a663d25b11d912c3561663531d67fbf"


def dry_cues(bundle: Path, chapter: str, lang: str, voice: str):
    """(per-scene cue lists, per-scene lengths) of a chapter, without drawing a frame."""
    from onepass.engine.dry_run import dry_run
    from onepass.scenes.base import SceneInputs
    from onepass.scenes.registry import scenes_of
    media = tempfile.mkdtemp(prefix="onepass-caption-report-")
    lists, lengths = [], []
    for cls in scenes_of(chapter):
        with dry_run(media):
            scene = cls(SceneInputs(Path(bundle), voice=voice, lang=lang))
            scene.render()
        lists.append([{k: v for k, v in c.items() if k != "clip"} for c in scene.cues])
        lengths.append(float(scene.renderer.time))
    return lists, lengths


def line_cues(bundle: Path, chapter: str, lang: str, voice: str):
    """(one cue list, its length): the chapter's lines timed by the voice, without a scene."""
    from onepass.data import bundle as bundle_io
    from onepass.voiceover import audio, services
    from onepass.voiceover.script import chapter_lines, line_id
    from onepass.words.catalog import Words
    b, words = bundle_io.load(bundle), Words.load(lang)
    service = services.make_service(voice, lang)
    cues, t = [], 0.0
    for beat, line in chapter_lines(chapter, b, b.ledger(), words).items():
        # as a scene asks for it (cached clips reused): the segments keep the sentences as written
        segments = service.generate_from_text(line.text, line_id=line_id(chapter, beat), lang=lang)["segments"]
        texts = [s["text"] for s in segments]
        segs = [{"start": s["start"] + t, "end": s["end"] + t, "text": x} for s, x in zip(segments, texts)]
        cues.append({"beat": beat, "start": segs[0]["start"], "end": segs[-1]["end"], "text": line.text,
                     "segments": segs})
        t = segs[-1]["end"] + audio.LINE_GAP
    return [cues], [t]


def before_module():
    """voiceover/captions.py as it was at BEFORE, loaded under a name of its own."""
    src = subprocess.run(["git", "show", f"{BEFORE}:voiceover/captions.py"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="onepass-caption-before-")) / "captions_before.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("captions_before", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle")
    ap.add_argument("--voice", default="espeak")
    ap.add_argument("--lang", default="en,es,ur")
    ap.add_argument("--chapter", default="00,01,02,03,04,05,06")
    ap.add_argument("--save")
    ap.add_argument("--load")
    ap.add_argument("--before", action="store_true")
    ap.add_argument("--scenes", action="store_true", help="build each scene (dry run) for its cues: slow")
    ap.add_argument("--problems", action="store_true", help="list every cue over a limit")
    a = ap.parse_args()
    from onepass.voiceover import captions
    from onepass.voiceover.captions_check import Report
    raw = json.loads(Path(a.load).read_text()) if a.load else {}
    if not a.load:
        for lang in a.lang.split(","):
            for ch in a.chapter.split(","):
                raw[f"{ch}/{lang}"] = (dry_cues if a.scenes else line_cues)(Path(a.bundle), ch, lang, a.voice)
                print(f"built {ch}/{lang}", file=sys.stderr, flush=True)
        if a.save:
            Path(a.save).write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    cut = before_module() if a.before else captions
    print("| chapter | lang | cues | line over 42 | over 2 lines | under 1 s | over 7 s | 20+ cps (speech that fast) |")
    print("|---|---|---|---|---|---|---|---|")
    for key, (lists, lengths) in raw.items():
        ch, lang = key.split("/")
        r = Report.of(cut.join_cues(lists, lengths))
        print(f"| {ch} | {lang} | {r.cues} | {r.length} | {r.lines} | {r.short} | {r.long} | {r.cps} ({r.cps_excused}) |")
        if a.problems:
            for p in r.problems:
                print(f"    {p}")


if __name__ == "__main__":
    main()
