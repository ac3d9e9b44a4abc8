"""Piper voices onepass fetches for the user, one recommended voice per language where one exists.

    render.py --fetch-voice en      # en_US-ljspeech-medium from rhasspy/piper-voices, once
    render.py --fetch-voice ur      # none exists: says so and names the alternatives

A fetched voice lives in onepass.data.home.voices_dir()/piper/ as NAME.onnx, NAME.onnx.json (its config,
which names its language) and NAME.MODEL_CARD (its dataset and licence). `installed(lang)` finds the
voice for a language there (any piper voice a user puts there counts too), and `--voice auto`
(voiceover/services.py best_offline_spec) picks it before espeak-ng.

The download goes through huggingface_hub's hf_hub_download (it reads HF_ENDPOINT and
HF_HUB_OFFLINE), after one short probe of the hub (onepass.data.hub.unreachable: PROBE_TIMEOUT seconds, no
retry), into a staging folder beside the voices, named for this process; the files are moved into
place only once all three are whole, the model last, so a half-downloaded file never replaces or
poses as a voice (a killed fetch's staging folder is removed by the next fetch).
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from onepass.data import home
from onepass.data.errors import OnepassError
from onepass.data.files import remove_dead_owned

REPO = "rhasspy/piper-voices"       # the piper project's voices on the Hugging Face hub
REVISION = "main"
STAGING_PREFIX = ".onepass-voice-"  # <voices>/piper/.onepass-voice-p<PID>-*: a fetch under way


@dataclass(frozen=True)
class Recommended:
    name: str           # the file stem: en_US-ljspeech-medium
    folder: str         # its folder in REPO
    licence: str        # its dataset's licence as its MODEL_CARD names it (said if the card cannot be read)

    def files(self) -> list[str]:
        """The repo paths to fetch, the model last (it is what makes the voice count once moved)."""
        return [f"{self.folder}/MODEL_CARD", f"{self.folder}/{self.name}.onnx.json", f"{self.folder}/{self.name}.onnx"]


# one voice per language: a single speaker, medium quality (~63 MB), a dataset free to use in a lecture
RECOMMENDED: dict[str, Recommended] = {
    "en": Recommended("en_US-ljspeech-medium", "en/en_US/ljspeech/medium", "public domain (the LJ Speech dataset)"),
    "es": Recommended("es_ES-davefx-medium", "es/es_ES/davefx/medium", "CC0"),
}


class VoiceFetchError(OnepassError, RuntimeError):
    """A voice could not be fetched (none exists for the language, the hub did not answer, ...)."""


def base_language(lang: str) -> str:
    """en-US, en_US, en -> en."""
    return lang.replace("_", "-").split("-")[0].lower()


def folder() -> Path:
    return home.voices_dir() / "piper"


def voice_language(model: Path) -> str | None:
    """The language a piper voice's config (MODEL.onnx.json) names, as a BCP 47 code (en-US)."""
    try:
        config = json.loads(Path(str(model) + ".json").read_text(encoding="utf-8"))
        code = (config.get("language") or {}).get("code") or (config.get("espeak") or {}).get("voice")
    except (OSError, ValueError, AttributeError):
        return None
    return code.replace("_", "-") if isinstance(code, str) and code else None


def installed(lang: str) -> Path | None:
    """The piper voice in voices_dir() for `lang`: the recommended one when it is there, else the
    first by name whose config names the language; a model without its config does not count."""
    want = base_language(lang)
    found = [m for m in sorted(folder().glob("*.onnx"))
             if m.is_file() and Path(str(m) + ".json").is_file()
             and base_language(voice_language(m) or "") == want]
    pick = RECOMMENDED.get(want)
    for m in found:
        if pick and m.stem == pick.name:
            return m
    return found[0] if found else None


def licence_of(card: Path, fallback: str) -> str:
    """The `License:` line of a voice's MODEL_CARD (the licence of the recordings it was trained on)."""
    try:
        m = re.search(r"^\s*\*?\s*License:\s*(.+?)\s*$", card.read_text(encoding="utf-8"), re.M | re.I)
    except OSError:
        m = None
    return m[1] if m else fallback


def _language_name(lang: str) -> str:
    from babel import Locale, UnknownLocaleError
    try:
        return Locale.parse(lang.replace("-", "_")).get_display_name("en") or lang
    except (UnknownLocaleError, ValueError, TypeError):
        return lang


def alternatives(lang: str) -> str:
    """What a film in `lang` can be narrated with when no piper voice exists for it."""
    return (f"the alternatives: espeak-ng (--voice espeak, what --voice auto picks for {_language_name(lang)}), or your "
            f"own recordings (--voice recorded:DIR, one clip per line; --script-sheet FILE.txt lists what to read)")


def upgrade_hint(lang: str, kind: str, piper_ok: bool) -> str | None:
    """What to run for a voice that sounds like a person, when `--voice auto` settled on `kind`
    (espeak, festival, none) for a film in `lang` and a piper voice exists for it; else None."""
    want = base_language(lang)
    if kind == "piper" or want not in RECOMMENDED:
        return None
    steps = ([] if installed(want) else [f"render.py --fetch-voice {want}"]) + \
        ([] if piper_ok else ["pip install 'onepass[piper]'"])
    return f"a neural voice for {_language_name(want)}: {' and '.join(steps)}" if steps else None


def rich_bar(progress, label: str):
    """A tqdm class for hf_hub_download whose bar is a task of the rich Progress `progress` named
    `label` (as the render shows its own): tqdm keeps the counts, each refresh copies them to the task."""
    from tqdm import tqdm

    class RichBar(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs.pop("name", None)
            kwargs.update(file=io.StringIO(), disable=False, mininterval=0.1)
            self._task = None
            super().__init__(*args, **kwargs)
            self._task = progress.add_task(label, total=self.total)
            self.display()

        def display(self, msg=None, pos=None):
            if getattr(self, "_task", None) is not None:
                progress.update(self._task, completed=self.n, total=self.total)
            return True

        def close(self):
            if getattr(self, "_task", None) is not None and not self.disable:
                self.display()
            super().close()

    return RichBar


def fetch(lang: str, progress=None, log=print) -> Path:
    """The recommended piper voice for `lang` in voices_dir(), downloaded once (a second call asks
    nothing); `progress`, a rich Progress, shows each file's bar. VoiceFetchError when none exists
    for the language or the hub cannot give it."""
    want = base_language(lang)
    pick = RECOMMENDED.get(want)
    if pick is None:
        raise VoiceFetchError(f"there is no piper voice for {_language_name(want)} ({lang}) to fetch (onepass "
                              f"recommends one for {', '.join(sorted(RECOMMENDED))}); {alternatives(want)}")
    dest = folder()
    model = dest / f"{pick.name}.onnx"
    card = dest / f"{pick.name}.MODEL_CARD"
    if model.is_file() and Path(str(model) + ".json").is_file():
        log(f"{pick.name} is already here: {model} (licence, per its MODEL_CARD: {licence_of(card, pick.licence)})")
        return model
    from onepass.data import hub
    why = hub.unreachable(REPO)
    if why:
        raise VoiceFetchError(f"cannot fetch {pick.name}: {why}. Try again when online, or use "
                              f"{alternatives(want).removeprefix('the alternatives: ')}")
    dest.mkdir(parents=True, exist_ok=True)
    remove_dead_owned(dest, home.owner(STAGING_PREFIX))          # a killed fetch's staging folder
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}p{os.getpid()}-", dir=dest))
    log(f"downloading {pick.name} from {REPO} at {hub.endpoint()} into {dest}")
    try:
        from huggingface_hub import hf_hub_download
        got = []
        for path in pick.files():
            kwargs = {"tqdm_class": rich_bar(progress, Path(path).name)} if progress is not None else {}
            try:
                got.append(Path(hf_hub_download(REPO, path, revision=REVISION, local_dir=staging,
                                                etag_timeout=hub.PROBE_TIMEOUT, **kwargs)))
            except Exception as exc:         # 404, refused, timed out, disk full: nothing is moved into place
                raise VoiceFetchError(f"the download of {path} from {hub.endpoint()} failed ({hub._short(exc)}); "
                                      f"nothing was changed in {dest}") from None
        card_part, config_part, model_part = got
        os.replace(card_part, card)
        os.replace(config_part, Path(str(model) + ".json"))
        os.replace(model_part, model)        # last: the voice counts from here
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"fetched {pick.name} ({_language_name(want)}) into {model}; licence, per its MODEL_CARD: "
        f"{licence_of(card, pick.licence)}")
    return model
