"""Reliability round 4 (issue 41): nothing hangs, nothing listens, nothing is taken on trust.

One test (or a few) per finding of the issue, each failing on the code before its fix; what each
proves is listed in docs/RELIABILITY.md.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import one_clear_line, run_main  # noqa: E402

ESPEAK = shutil.which("espeak-ng")
needs_espeak = pytest.mark.skipif(ESPEAK is None, reason="needs espeak-ng")


# -- 1. a recorded voice aligns every line of a chapter, and an interrupt ends it cleanly ---------------

def _sheet_lines(bundle, chapter: str, tmp_path: Path) -> list[tuple[str, str]]:
    """(line id, text) of a chapter as its script sheet lists them (what a narrator records)."""
    sheet = tmp_path / f"sheet-{chapter}.txt"
    rc, _, err = run_main("--chapter", chapter, "--bundle", str(bundle.path), "--script-sheet", str(sheet))
    assert rc == 0, err
    rows = [r for r in sheet.read_text(encoding="utf-8").split("\n") if r and not r.startswith("#")]
    return list(zip(rows[::2], rows[1::2]))


def _record(lines, folder: Path, voice: str = "en-us") -> Path:
    """Each line read by espeak-ng into <line id>.wav, as the issue's repro records them."""
    folder.mkdir(parents=True, exist_ok=True)
    for lid, text in lines:
        subprocess.run([ESPEAK, "-v", voice, "-w", str(folder / f"{lid}.wav"), text], check=True,
                       stdin=subprocess.DEVNULL, capture_output=True)
    return folder


def _leftovers(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("onepass-align") or p.suffix == ".wav")


def _env(tmp_path: Path) -> dict:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp), "ONEPASS_VOICE_CACHE": str(tmp_path / "voice-cache"),
            "ONEPASS_FORKSERVER": "off", "PYTHONPATH": str(ROOT)}


@needs_espeak
def test_every_line_of_a_chapter_is_aligned_in_one_process(tiny_bundle, tmp_path):
    """aeneas's espeak-ng extension hung forever on a process's second alignment: the check of a whole
    chapter's recordings (10 lines, all in one process) now finishes, and leaves no temporary files."""
    lines = _sheet_lines(tiny_bundle, "00", tmp_path)
    assert len(lines) >= 3
    folder = _record(lines, tmp_path / "rec")
    env = _env(tmp_path)
    code = ("import json, sys\nfrom voiceover import services, script\n"
            "lines = json.loads(sys.argv[1])\n"
            "svc = services.make_service('recorded:' + sys.argv[2])\n"
            "print(json.dumps(svc.check([(lid, text, []) for lid, text in lines])))\n")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(lines), str(folder)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
    assert _leftovers(Path(env["TMPDIR"])) == []


def _start_recorded_render(tiny_bundle, tmp_path, folder):
    env = _env(tmp_path)
    cmd = [sys.executable, str(ROOT / "render.py"), "--chapter", "00", "--bundle", str(tiny_bundle.path),
           "--voice", f"recorded:{folder}", "--quality", "low", "--out", str(tmp_path / "out")]
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True), Path(env["TMPDIR"])


@needs_espeak
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_while_aligning_ends_the_run_cleanly(tiny_bundle, tmp_path, sig):
    """Ctrl-C (to the whole process group, as a terminal sends it) or SIGTERM in the middle of the
    alignments ends the run with status 130 within seconds, leaving no alignment folder or WAV."""
    lines = _sheet_lines(tiny_bundle, "00", tmp_path)
    folder = _record(lines, tmp_path / "rec")
    proc, tmp = _start_recorded_render(tiny_bundle, tmp_path, folder)
    try:
        deadline, seen = time.monotonic() + 180, set()
        while time.monotonic() < deadline and proc.poll() is None:
            seen |= {p.name for p in tmp.iterdir() if p.name.startswith("onepass-align")}
            if len(seen) >= 2:          # the second alignment (the one that hung) is under way
                break
            time.sleep(0.01)
        time.sleep(0.2)
        assert proc.poll() is None and len(seen) >= 2, f"the run did not align clips ({seen})"
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert _leftovers(tmp) == []


@needs_espeak
@pytest.mark.render
def test_a_recorded_render_of_a_whole_chapter_finishes(tiny_bundle, tmp_path):
    """The repro of issue 41: the script sheet, every line recorded, chapter 00 rendered with
    --voice recorded:DIR (the shortest chapter, tiny weights, low quality)."""
    lines = _sheet_lines(tiny_bundle, "00", tmp_path)
    folder = _record(lines, tmp_path / "rec")
    proc, tmp = _start_recorded_render(tiny_bundle, tmp_path, folder)
    try:
        _, err = proc.communicate(timeout=540)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert list((tmp_path / "out").rglob("ch00-*.mp4"))
    assert _leftovers(tmp) == []
