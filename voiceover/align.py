"""Forced alignment of a recorded line against its text, offline (aeneas-ng: espeak-ng + DTW).

A narrator's recording of a line is cut into pieces where its sentences and its markers begin;
aeneas finds when each piece is said. Each sentence's start and end are then pulled in to where
its speech starts and stops (aeneas puts a boundary in the middle of the pause between pieces),
so captions and markers land on the words, not on the silence before them.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from onepass.data.errors import OnepassError
from onepass.data import home
from onepass.data.files import remove_dead_owned
from onepass.voiceover import audio
from onepass.voiceover.script import WORDS_PER_SECOND

VERSION = 2          # enters recorded clips' cache keys: a change here re-aligns them
# the film's language -> aeneas's (ISO 639-3); anything else is aligned with English's phonemes
LANGUAGES = {"en": "eng", "es": "spa", "ur": "urd"}
# a clip this much shorter or longer than the text takes to say is not a reading of that text
MIN_RATIO, MAX_RATIO = 0.4, 2.5


class AlignmentError(OnepassError, RuntimeError):
    """The recording cannot be matched to its text; the message says which line and why."""


def _speech_bounds(x: np.ndarray, sr: int, a: float, b: float) -> tuple[float, float]:
    """[a, b] narrowed to where there is speech in it (the whole of it when it is all quiet). A
    boundary can fall a few frames into the next piece's speech (or the last one's): a short
    run of sound cut off from the rest by a pause, at either end, is not this piece's."""
    frame = 0.01
    i, j = int(a * sr), int(b * sr)
    part = x[i:j]
    if len(part) < int(0.03 * sr):
        return a, b
    runs = [[first, stop - 1] for first, stop in audio.runs(audio.voiced(part, sr, frame))]  # [first, last] frames
    if not runs:
        return a, b
    short, pause = int(0.12 / frame), int(0.1 / frame)
    if len(runs) > 1 and runs[-1][1] - runs[-1][0] < short and runs[-1][0] - runs[-2][1] > pause:
        runs.pop()
    if len(runs) > 1 and runs[0][1] - runs[0][0] < short and runs[1][0] - runs[0][1] > pause:
        runs.pop(0)
    return a + runs[0][0] * frame, min(b, a + (runs[-1][1] + 1) * frame)


# Each alignment runs in a fresh Python process: aeneas's C extension for espeak-ng (cew) blocks
# forever on a second synthesis in one process (issue 41), where no signal reaches Python. The
# child gets a folder of its own (line.wav, line.txt, aeneas's temporary WAVs, result.json) named
# with this process's id, is killed on a timeout, an interrupt or SIGTERM (KeyboardInterrupt here),
# dies with its parent (PR_SET_PDEATHSIG), and a later alignment removes a folder whose owner is gone.
ALIGN_PREFIX = home.ALIGN_PREFIX
# a reading of a line follows espeak-ng's reading of it at most this fraction of the cost of the same
# words backwards (espeak readings in other voices: 0.72-0.79; another line's text: 0.93-1.04); the
# costs are of the whole cheapest DTW paths (voiceover/dtw.py)
FIT_RATIO = 0.88
MIN_WORDS_TO_CHECK = 4               # a title of a word or two reads alike backwards
ESPEAK_VOICES = {"en": "en-us", "es": "es", "ur": "ur"}
TIMEOUT = 60.0                       # seconds, plus SECONDS_PER_SECOND of the clip's length
SECONDS_PER_SECOND = 2.0

_CHILD = r"""
import ctypes, json, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG: die with the caller
except Exception:
    pass
if os.getppid() != int(sys.argv[3]):     # the caller died before that took effect
    sys.exit(3)
folder, lang = sys.argv[1], sys.argv[2]
out = {}
try:
    from aeneas.executetask import ExecuteTask
    from aeneas.runtimeconfiguration import RuntimeConfiguration
    from aeneas.task import Task
    task = Task(config_string="task_language=" + lang + "|is_text_type=plain|os_task_file_format=json")
    task.audio_file_path_absolute = folder + "/line.wav"
    task.text_file_path_absolute = folder + "/line.txt"
    ExecuteTask(task, rconf=RuntimeConfiguration("tmp_path=" + folder)).execute()
    out["times"] = [[float(f.begin), float(f.end)] for f in task.sync_map_leaves() if f.fragment_type == 0]
    if os.path.exists(folder + "/ref.wav"):
        # how well the recording follows the text read by espeak-ng, and the same words backwards
        from aeneas.audiofilemfcc import AudioFileMFCC
        from onepass.voiceover.dtw import end_cost       # DTWExact's cost, in numpy (voiceover/dtw.py)
        rconf = RuntimeConfiguration("tmp_path=" + folder)
        heard = AudioFileMFCC(folder + "/line.wav", rconf=rconf).all_mfcc
        def cost(name):
            return end_cost(heard, AudioFileMFCC(folder + "/" + name, rconf=rconf).all_mfcc)
        out["fit"] = [cost("ref.wav"), cost("rev.wav")]
except Exception as exc:             # aeneas raises its own kinds for every failure
    out["error"] = str(exc) or type(exc).__name__
with open(folder + "/result.json", "w", encoding="utf-8") as f:
    json.dump(out, f)
"""


def remove_dead_folders(root: Path | None = None) -> int:
    """Remove the alignment folders (`onepass-align-p<PID>-*`) in `root` (default: the system temp
    folder) whose process no longer runs (one killed with SIGKILL cannot remove its own); a live
    process's folder is kept. Returns how many were removed."""
    return remove_dead_owned(root or tempfile.gettempdir(), home.owner(ALIGN_PREFIX))


def _say(binary: str, lang: str, text: str, out: Path):
    subprocess.run([binary, "-v", ESPEAK_VOICES.get(lang, "en-us"), "-w", str(out), text], check=True,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)


def _run_child(folder: str, lang: str, limit: float) -> str:
    """Run the alignment child on `folder`; its stderr. The child leads a process group of its own
    (aeneas starts ffmpeg and espeak-ng under it), so a timeout, Ctrl-C or SIGTERM kills the whole
    group and waits for the child before the folder is removed: nothing writes into it afterwards."""
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, folder, LANGUAGES.get(lang, "eng"), str(os.getpid())],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=limit)
        return err or ""
    except subprocess.TimeoutExpired:
        raise AlignmentError(f"alignment did not finish in {limit:.0f} s") from None
    finally:
        if proc.returncode is None:
            _kill_group(proc)


def _kill_group(proc: subprocess.Popen):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _remove_folder(folder: str, tries: int = 40):
    """Remove an alignment folder; a grandchild killed a moment ago may still finish one write, so a
    folder that is not yet empty is tried again for up to two seconds."""
    for _ in range(tries):
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.exists(folder):
            return
        time.sleep(0.05)


def align(clip: np.ndarray, sr: int, pieces: list[str], lang: str = "en",
          timeout: float | None = None, check_words: bool = True) -> list[tuple[float, float]]:
    """When each of `pieces` (the line's text cut in order) is said in `clip`: (start, end) seconds.
    Runs aeneas in a child process of its own (see above); AlignmentError when it fails or takes
    longer than `timeout` (default: TIMEOUT plus twice the clip's length), and (`check_words`) when
    the clip is not a reading of these words: aeneas places any text on any sound, so the clip is
    also compared (MFCC, DTW) with espeak-ng reading the text and reading its words backwards; a
    reading of the text follows the first clearly better (cost ratio under FIT_RATIO), other words
    or noise follow both alike."""
    remove_dead_folders()
    limit = timeout if timeout is not None else TIMEOUT + SECONDS_PER_SECOND * len(clip) / max(sr, 1)
    tmp = tempfile.mkdtemp(prefix=f"{ALIGN_PREFIX}p{os.getpid()}-")
    try:
        wav, txt = Path(tmp) / "line.wav", Path(tmp) / "line.txt"
        audio.write_wav(wav, clip, sr)
        words = " ".join(" ".join(pieces).split())
        txt.write_text("\n".join(" ".join(p.split()) for p in pieces) + "\n", encoding="utf-8")
        espeak = shutil.which("espeak-ng") if check_words and len(words.split()) >= MIN_WORDS_TO_CHECK else None
        if espeak:
            try:
                _say(espeak, lang, words, Path(tmp) / "ref.wav")
                _say(espeak, lang, " ".join(words.split()[::-1]), Path(tmp) / "rev.wav")
            except (OSError, subprocess.SubprocessError):
                for name in ("ref.wav", "rev.wav"):
                    (Path(tmp) / name).unlink(missing_ok=True)
        stderr = _run_child(tmp, lang, limit)
        try:
            result = json.loads((Path(tmp) / "result.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = stderr.strip().splitlines()[-1:] or ["no result"]
            raise AlignmentError(f"alignment failed: {tail[0][:300]}") from None
    finally:
        _remove_folder(tmp)
    if "error" in result:
        raise AlignmentError(f"alignment failed: {result['error'][:300]}")
    if result.get("fit") and result["fit"][0] > FIT_RATIO * result["fit"][1]:
        raise AlignmentError("the clip does not follow this line's words (it matches them no better than the "
                             "same words read backwards)")
    leaves = result["times"]
    if len(leaves) != len(pieces):
        raise AlignmentError(f"alignment found {len(leaves)} pieces for {len(pieces)}")
    return [(float(a), float(b)) for a, b in leaves]


# a recording this far under full scale throughout holds no speech
SILENT_BELOW_DBFS = -50.0
# a file this many seconds longer than MAX_RATIO times its text's speaking time is not that line's
# recording, whatever its silences (trimming would otherwise keep a reading inside a long file)
SLACK_SECONDS = 10.0


def raw_problem(x: np.ndarray, sr: int, expected: float) -> str | None:
    """None when a recording as decoded (before trimming and mastering) may hold a reading of a
    text that takes about `expected` seconds to say; else why not (silent, far too long)."""
    seconds = len(x) / max(sr, 1)
    if seconds > MAX_RATIO * expected + SLACK_SECONDS:
        return (f"the file is {seconds:.1f} s long, far longer than its text takes to say (about "
                f"{expected:.0f} s)")
    if len(x) == 0 or not np.all(np.isfinite(x)) or float(audio.frame_db(x, sr).max()) < SILENT_BELOW_DBFS:
        return f"the clip is silent ({seconds:.1f} s with no sound above {SILENT_BELOW_DBFS:.0f} dBFS)"
    return None


def plausible(seconds: float, expected: float) -> str | None:
    """None when a clip of `seconds` can be a reading of a text that takes about `expected`
    seconds to say; else why not."""
    ratio = seconds / max(expected, 1e-6)
    if ratio < MIN_RATIO:
        return f"the clip is {seconds:.1f} s, far shorter than its text takes to say (about {expected:.0f} s)"
    if ratio > MAX_RATIO:
        return f"the clip is {seconds:.1f} s, far longer than its text takes to say (about {expected:.0f} s)"
    return None


def timed_line(clip: np.ndarray, sr: int, sentences: list[str], marks: list[tuple[int, int]],
               lang: str = "en") -> tuple[list[dict], list[float]]:
    """Sentence segments and marker times of a recorded line.

    `sentences`: the line's sentences in order; `marks`: each marker as (sentence index, character
    offset in that sentence). Returns ([{"start", "end", "text"}] per sentence, [time] per marker)."""
    cuts = {i: sorted({0, *[k for j, k in marks if j == i and 0 < k < len(s)]}) for i, s in enumerate(sentences)}
    pieces, owner = [], []
    for i, s in enumerate(sentences):
        bounds = cuts[i] + [len(s)]
        for a, b in zip(bounds, bounds[1:]):
            if s[a:b].strip():
                pieces.append(s[a:b])
                owner.append((i, a))
    times = align(clip, sr, pieces, lang)
    segments = []
    for i, s in enumerate(sentences):
        mine = [t for t, (j, _) in zip(times, owner) if j == i]
        a, b = _speech_bounds(clip, sr, mine[0][0], mine[-1][1])
        segments.append({"start": round(float(a), 4), "end": round(float(b), 4), "text": s})
    for k, seg in enumerate(segments):
        # a sentence squeezed into a sliver of the clip was not found in it: not a reading of this text
        expected = max(0.5, len(seg["text"].split()) / WORDS_PER_SECOND)
        if seg["end"] - seg["start"] < MIN_RATIO * 0.5 * expected:
            raise AlignmentError(f"sentence {k + 1} ({seg['text'][:40]!r}…) takes {seg['end'] - seg['start']:.2f} s "
                                 f"of the recording, far less than it takes to say: the clip does not read this text")
    starts = {o: t[0] for o, t in zip(owner, times)}
    mark_times = []
    for j, k in marks:
        if k <= 0 or (j, k) not in starts:
            mark_times.append(segments[j]["start"])
        else:
            mark_times.append(round(float(_speech_bounds(clip, sr, starts[(j, k)], segments[j]["end"])[0]), 4))
    return segments, mark_times
