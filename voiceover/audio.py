"""Mastering one narration line: trim, pause, loudness-normalise, limit, pad.

Every line of every chapter goes through `master()`, so all narration sits at one loudness:

    TARGET_LUFS  = -16 LUFS integrated (EBU R128 / ITU-R BS.1770 measurement), the usual level
                   for speech published online: each clip is measured in this process by
                   pyloudnorm (a line's five measurements took a second through ffmpeg), the
                   chapter's whole track by ffmpeg's ebur128 filter; the two agree to 0.1 LU
    CEILING_DBTP = -1.5 dBTP true peak (4x oversampled), so nothing clips after AAC encoding

Layout of a mastered clip (mono, 48 kHz, 16-bit WAV):

    [sentence 1][SENTENCE_PAUSE][sentence 2] ... [sentence n][LINE_GAP of silence]

Each sentence is trimmed to its speech (plus EDGE either side). The clip's `segments` give
each sentence's start and end in seconds from the clip's start: captions use them as-is.
"""
from __future__ import annotations

import math
import os
import re
import subprocess
import warnings
import wave
from pathlib import Path

import numpy as np

from onepass.data.errors import OnepassError
from onepass.data.files import discard, temp_name

SR = 48_000
TARGET_LUFS = -16.0
CEILING_DBTP = -1.5
SENTENCE_PAUSE = 0.30     # seconds between sentences of one line
LINE_GAP = 0.45           # seconds of silence closing every line, before the next one starts
EDGE = 0.03               # seconds kept either side of detected speech when trimming
SILENCE_BELOW_DB = 40.0   # a 10 ms frame this far under the loudest frame counts as silence
PIPELINE = "master-v3"    # bump when mastering changes, so cached clips are redone


class AudioError(OnepassError, RuntimeError):
    """Audio that cannot be read, written or mastered; the message says which file and why."""


# -- reading and writing ----------------------------------------------------
def decode(path: Path, sr: int = SR) -> np.ndarray:
    """Any audio file ffmpeg reads -> mono float32 at `sr`."""
    proc = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-vn", "-ac", "1", "-ar", str(sr),
                           "-f", "f32le", "-"], capture_output=True)
    if proc.returncode != 0:
        raise AudioError(f"could not decode {path}: {proc.stderr.decode(errors='replace').strip()[-300:]}")
    return np.frombuffer(proc.stdout, dtype="<f4").astype(np.float32)


def resample(x: np.ndarray, sr_in: int, sr_out: int = SR) -> np.ndarray:
    if sr_in == sr_out:
        return np.asarray(x, dtype=np.float32)
    from scipy.signal import resample_poly  # deferred: scipy costs ~0.3 s; only synthesis needs it
    g = math.gcd(sr_in, sr_out)
    return resample_poly(np.asarray(x, dtype=np.float64), sr_out // g, sr_in // g).astype(np.float32)


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """A 16-bit PCM WAV -> (mono float32 in [-1, 1], sample rate)."""
    with wave.open(str(path), "rb") as w:
        sr, ch, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
        raw = w.readframes(n)
    if width != 2:
        x = decode(path)
        return x, SR
    x = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    if ch > 1:
        x = x.reshape(-1, ch).mean(axis=1)
    return x, sr


def write_wav(path: Path, x: np.ndarray, sr: int = SR):
    """float in [-1, 1] -> 16-bit mono WAV, written atomically."""
    path = Path(path)
    tmp = temp_name(path)            # unique: two runs voicing the same line never share it
    pcm = np.clip(np.round(np.asarray(x, dtype=np.float64) * 32767.0), -32768, 32767).astype("<i2")
    try:
        with wave.open(str(tmp), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(sr)
            w.writeframes(pcm.tobytes())
        os.replace(tmp, path)
    finally:
        discard(tmp)


# -- measuring ----------------------------------------------------------------
_I = re.compile(r"I:\s+(-?[\d.]+|-inf)\s+LUFS")
_PEAK = re.compile(r"Peak:\s+(-?[\d.]+|-inf)\s+dBFS")


def loudness(x: np.ndarray, sr: int = SR) -> tuple[float, float]:
    """(integrated loudness in LUFS, true peak in dBTP), measured by ffmpeg's ebur128 filter."""
    if len(x) == 0:
        return float("-inf"), float("-inf")
    proc = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-f", "f32le", "-ar", str(sr), "-ac", "1", "-i", "-",
                           "-af", "ebur128=peak=true", "-f", "null", "-"],
                          input=np.asarray(x, dtype="<f4").tobytes(), capture_output=True)
    err = proc.stderr.decode(errors="replace")
    summary = err[err.rfind("Summary:"):]
    i, p = _I.search(summary), _PEAK.search(summary)
    if proc.returncode != 0 or not i or not p:
        raise AudioError(f"ebur128 measurement failed: {err.strip()[-300:]}")
    return float(i.group(1)), float(p.group(1))


_METERS: dict = {}


def lufs(x: np.ndarray, sr: int = SR) -> float:
    """Integrated loudness in LUFS (ITU-R BS.1770-4: K-weighting, 400 ms blocks, both gates),
    measured in this process by pyloudnorm; -inf for silence or a clip shorter than one block."""
    import pyloudnorm  # deferred: only mastering measures (scipy comes with it)
    meter = _METERS.get(sr) or _METERS.setdefault(sr, pyloudnorm.Meter(sr))
    # whole blocks only, as ffmpeg's ebur128 counts them (a block every 100 ms once 400 ms are in):
    # pyloudnorm rounds the count up and measures a last block that runs past the end, which put a
    # one-second clip 0.3 LU below what ffmpeg reports
    blocks = math.floor((len(x) / sr - meter.block_size) / 0.1 + 1e-9)
    if blocks < 0:
        return float("-inf")
    x = np.asarray(x[: int(round((meter.block_size + 0.1 * blocks) * sr))], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # log10(0) on silent blocks: gated out
        return float(_integrated_loudness(meter, x))


def _integrated_loudness(meter, x: np.ndarray) -> float:
    """pyloudnorm 0.2.0's Meter.integrated_loudness for one channel, the same operations on the same
    numbers in the same order (so the same float, bit for bit: tests/test_narration.py compares the
    two), without its per-block Python lists: each block's sum of squares is read from one squared
    copy of the filtered signal instead of squaring its slice again (a line's 5-6 measurements were a
    third of its mastering's CPU, half of that in those lists)."""
    from scipy.signal import lfilter  # deferred, as for pyloudnorm (which imports it too)
    for stage in meter._filters.values():           # K-weighting: the two biquads, as the meter has them
        x = lfilter(stage.b, stage.a, x)
        if stage.passband_gain != 1.0:
            x = stage.passband_gain * x
    t_g, step = meter.block_size, 1.0 - meter.overlap
    n_blocks = int(np.round(((len(x) / meter.rate - t_g) / (t_g * step)))) + 1
    squares, scale = np.square(x), 1.0 / (t_g * meter.rate)
    z = np.empty(n_blocks)
    for j in range(n_blocks):
        # pyloudnorm's bounds: the same float expression, truncated (j a float64 there as here)
        j64 = np.float64(j)
        z[j] = scale * np.sum(squares[int(t_g * (j64 * step) * meter.rate):int(t_g * (j64 * step + 1) * meter.rate)])
    level = [-0.691 + 10.0 * np.log10(zj) for zj in z]          # one channel: G = 1.0, a sum of one term
    gated = z[[lj >= -70.0 for lj in level]] if n_blocks else z
    relative = -0.691 + 10.0 * np.log10(np.mean(gated)) - 10.0
    gated = z[[lj > relative and lj > -70.0 for lj in level]] if n_blocks else z
    return -0.691 + 10.0 * np.log10(np.nan_to_num(np.mean(gated)))


def _oversampled(x: np.ndarray) -> np.ndarray:
    """x at 4x its rate (float64, 4 * len(x) samples): where a true peak is looked for."""
    from scipy.signal import resample_poly  # deferred: scipy costs ~0.3 s; only mastering needs it
    return resample_poly(np.asarray(x, dtype=np.float64), 4, 1)[: 4 * len(x)]


def true_peak_env(x: np.ndarray) -> np.ndarray:
    """Per-sample peak magnitude of the 4x-oversampled signal (a true-peak estimate)."""
    up = _oversampled(x)
    np.abs(up, out=up)
    # the largest of each sample's 4 (over strided views: a reduction along an axis of length 4
    # costs numpy several times as much, for the same numbers), in place (a maximum is exact in any order)
    peak = np.maximum(up[0::4], up[1::4])
    for k in (2, 3):
        np.maximum(peak, up[k::4], out=peak)
    return np.maximum(peak, np.abs(x), out=peak)


def true_peak(x: np.ndarray) -> float:
    """true_peak_env(x).max(), without the envelope: the largest magnitude of the 4x-oversampled signal
    or of x itself (the same float: a maximum is exact in any order)."""
    if len(x) == 0:
        return float(np.max(np.abs(x)))                 # the error true_peak_env(x).max() raises
    up = _oversampled(x)
    return float(max(up.max(), -up.min(), np.abs(x).max()))


def frame_db(x: np.ndarray, sr: int = SR, frame_s: float = 0.01) -> np.ndarray:
    """RMS level of consecutive frames, in dBFS."""
    n = max(1, int(sr * frame_s))
    m = len(x) // n
    if m == 0:
        return np.array([-120.0])
    rms = np.sqrt(np.mean(np.square(x[: m * n].reshape(m, n), dtype=np.float64), axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-6))


def runs(flags) -> list[tuple[int, int]]:
    """[(first, stop)] of each run of true values (stop: the index after its last)."""
    out, start = [], None
    for i, f in enumerate(np.append(np.asarray(flags, dtype=bool), False)):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i))
            start = None
    return out


def voiced(x: np.ndarray, sr: int = SR, frame_s: float = 0.01) -> np.ndarray:
    """Which frames hold voice: those within SILENCE_BELOW_DB of the loudest (the one test of
    speech against silence, for trimming a clip and for placing a recording's pieces, align.py)."""
    db = frame_db(x, sr, frame_s)
    return db > db.max() - SILENCE_BELOW_DB


def silent_stretches(x: np.ndarray, sr: int = SR, below_db: float = -50.0, min_s: float = 1.0,
                     frame_s: float = 0.01) -> list[tuple[float, float]]:
    """[(start, end)] of stretches at least `min_s` long whose 10 ms frames all sit under `below_db`."""
    return [(a * frame_s, b * frame_s) for a, b in runs(frame_db(x, sr, frame_s) < below_db)
            if (b - a) * frame_s >= min_s]


# -- mastering ----------------------------------------------------------------
def trim(x: np.ndarray, sr: int = SR) -> np.ndarray:
    """Cut leading and trailing silence, keeping EDGE seconds around the speech."""
    if len(x) == 0:
        return x
    speech = np.nonzero(voiced(x, sr))[0]
    if len(speech) == 0:
        return x[:0]
    frame = int(sr * 0.01)
    edge = int(sr * EDGE)
    start = max(0, speech[0] * frame - edge)
    end = min(len(x), (speech[-1] + 1) * frame + edge)
    return x[start:end]


def limit(x: np.ndarray, ceiling_db: float = CEILING_DBTP, sr: int = SR, env: np.ndarray | None = None) -> np.ndarray:
    """A look-ahead peak limiter: gain dips smoothly around every (true) peak above the ceiling.
    `env`: x's true_peak_env where the caller has it (oversampling is linear: a gain times a
    signal's envelope is the envelope of the signal times that gain)."""
    from scipy.ndimage import minimum_filter1d, uniform_filter1d  # deferred, as above
    ceiling = 10 ** (ceiling_db / 20)
    env = true_peak_env(x) if env is None else env
    need = np.maximum(env, 1e-9)                     # min(1, ceiling / env), in place
    np.divide(ceiling, need, out=need)
    np.minimum(need, 1.0, out=need)
    if need.min() >= 1.0:
        return x
    w = max(1, int(sr * 0.004))                      # 4 ms either side
    gain = minimum_filter1d(need, size=2 * w + 1, mode="nearest")
    gain = uniform_filter1d(gain, size=w + 1, mode="nearest")   # never above `need` at a peak
    return np.multiply(x, gain, out=gain).astype(np.float32)


def normalise(x: np.ndarray, sr: int = SR) -> tuple[np.ndarray, float, float]:
    """Gain to TARGET_LUFS, then limit to CEILING_DBTP; returns (audio, loudness, true peak)."""
    measured = lufs(x, sr)
    if not np.isfinite(measured) or measured < -60:
        return x, measured, float("-inf")          # silence (or nearly): nothing to normalise
    y, env = x, true_peak_env(x)                     # the envelope once: each try scales it
    for _ in range(4):                               # limiting costs a little loudness: top it up
        gain = 10 ** ((TARGET_LUFS - measured) / 20)
        y = limit(x * gain, sr=sr, env=env * gain)
        got = lufs(y, sr)
        if abs(got - TARGET_LUFS) <= 0.15:
            break
        measured += got - TARGET_LUFS
    ceiling = 10 ** (CEILING_DBTP / 20)
    top = true_peak(y)
    if top > ceiling:                                # belt and braces: never over the ceiling
        y = y * (ceiling / top)
        got = lufs(y, sr)
        top = ceiling                                # oversampling is linear: the peak scales with y
    return y.astype(np.float32), got, 20 * math.log10(top) if top > 0 else float("-inf")


def master(chunks: list[tuple[str, np.ndarray]], sr: int = SR) -> tuple[np.ndarray, list[dict], dict]:
    """[(sentence text, audio at sr)] -> (clip, segments, stats). See the module docstring."""
    pause = np.zeros(int(round(SENTENCE_PAUSE * sr)), dtype=np.float32)
    parts, segments, t = [], [], 0
    for text, audio in chunks:
        speech = trim(np.asarray(audio, dtype=np.float32), sr)
        if len(speech) == 0:
            continue
        if parts:
            parts.append(pause)
            t += len(pause)
        segments.append({"start": t / sr, "end": (t + len(speech)) / sr, "text": text})
        parts.append(speech)
        t += len(speech)
    if not parts:
        raise AudioError("the voice produced no audible speech for: " + " ".join(c[0] for c in chunks)[:120])
    speech = np.concatenate(parts)
    speech, level, peak = normalise(speech, sr)
    clip = np.concatenate([speech, np.zeros(int(round(LINE_GAP * sr)), dtype=np.float32)])
    stats = {"lufs": round(level, 2), "true_peak_dbtp": round(peak, 2), "speech_seconds": len(speech) / sr}
    return clip, segments, stats
