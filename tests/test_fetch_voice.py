"""`render.py --fetch-voice LANG` and `--voice auto`, without the internet: tests/test_hub.py's hub of
our own on 127.0.0.1 serves a fake piper voice (.onnx bytes, its .onnx.json, its MODEL_CARD) in the
layout of rhasspy/piper-voices. Each fetch is a fresh render.py process (the hub client reads
HF_ENDPOINT when imported) with ONEPASS_CACHE in a temporary folder.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.test_hub import ROOT, HubServer
from onepass.voiceover import piper_voices, services

EN = piper_voices.RECOMMENDED["en"]
ES = piper_voices.RECOMMENDED["es"]
MODEL = b"not really onnx, but bytes a voice is made of " * 200


def voice_files(pick, lang_code: str, with_model: bool = True) -> dict[str, bytes]:
    """A piper voice's three files at their paths in the repo."""
    card = f"# Model card for {pick.name}\n\n## Dataset\n\n* URL: https://example.org/\n* License: public domain\n"
    config = {"audio": {"sample_rate": 22050}, "espeak": {"voice": lang_code.lower().replace("_", "-")},
              "language": {"code": lang_code}, "num_speakers": 1}
    files = {f"{pick.folder}/MODEL_CARD": card.encode(), f"{pick.folder}/{pick.name}.onnx.json": json.dumps(config).encode()}
    if with_model:
        files[f"{pick.folder}/{pick.name}.onnx"] = MODEL
    return files


def fetch_voice(lang: str, env: dict) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE")}
    proc = subprocess.run([sys.executable, "render.py", "--fetch-voice", lang], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**base, "HF_HUB_DISABLE_TELEMETRY": "1", **env})
    proc.said = " ".join((proc.stdout + proc.stderr).split())      # what the user reads (render.py logs on stderr)
    return proc


@pytest.fixture
def piper_hub(tmp_path):
    """(server, env): the hub serving the English voice whole and the Spanish one without its model."""
    server = HubServer({})
    server.repos = {piper_voices.REPO: {**voice_files(EN, "en_US"), **voice_files(ES, "es_ES", with_model=False)}}
    with server:
        yield server, {"HF_ENDPOINT": server.url, "HF_HOME": str(tmp_path / "hf"),
                       "ONEPASS_CACHE": str(tmp_path / "cache")}


def test_fetch_voice_downloads_once_names_the_licence_and_auto_picks_it(piper_hub, tmp_path, monkeypatch):
    """--fetch-voice en downloads the voice once into the voices folder and names its licence; a second
    call asks the hub nothing; `auto` then narrates English with it (where piper-tts is importable) and
    Urdu, which has no piper voice, with espeak-ng."""
    server, env = piper_hub
    first = fetch_voice("en", env)
    assert first.returncode == 0, first.said
    asked = list(server.requests)
    second = fetch_voice("en", env)
    assert second.returncode == 0, second.said
    assert server.requests == asked, "the second fetch asked the hub again"

    model = tmp_path / "cache" / "voices" / "piper" / f"{EN.name}.onnx"
    assert model.read_bytes() == MODEL and json.loads((model.parent / f"{EN.name}.onnx.json").read_text())
    assert sorted(p.name for p in model.parent.iterdir()) == sorted([model.name, model.name + ".json",
                                                                     f"{EN.name}.MODEL_CARD"])   # no staging left
    gets = [r for r in asked if r.startswith("GET ") and "/resolve/" in r]
    assert sorted(r.rsplit("/", 1)[1] for r in gets) == sorted(["MODEL_CARD", f"{EN.name}.onnx.json", f"{EN.name}.onnx"])
    said = first.said
    assert f"fetched {EN.name} (English) into {model}; licence, per its MODEL_CARD: public domain" in said
    assert f"{EN.name} is already here: {model}" in second.said

    monkeypatch.setenv("ONEPASS_CACHE", env["ONEPASS_CACHE"])
    if not services.piper_available():
        monkeypatch.setattr(services, "piper_available", lambda: True)   # PiperService loads piper only to speak
    assert services.best_offline_spec("en") == f"piper:{model}"
    voice = services.make_service("auto", "en")
    assert isinstance(voice, services.PiperService) and voice.model == model.resolve()
    assert services.best_offline_spec("ur") == "espeak:ur"
    assert isinstance(services.make_service("auto", "ur"), services.EspeakService)
    assert services.best_offline_spec("es").startswith("espeak:")       # Spanish was never fetched
    # what a render narrated by espeak-ng says to run for a neural voice (render.py say_voice)
    assert piper_voices.upgrade_hint("es", "espeak", True) == "a neural voice for Spanish: render.py --fetch-voice es"
    assert piper_voices.upgrade_hint("en", "espeak", False) == "a neural voice for English: pip install 'onepass[piper]'"
    assert piper_voices.upgrade_hint("en", "piper", True) is None and piper_voices.upgrade_hint("ur", "espeak", True) is None


def test_fetch_voice_for_urdu_says_none_exists_and_names_the_alternatives(piper_hub, tmp_path):
    server, env = piper_hub
    proc = fetch_voice("ur", env)
    said = proc.said
    assert proc.returncode == 2, said
    assert "there is no piper voice for Urdu (ur) to fetch" in said
    assert "espeak-ng (--voice espeak" in said and "--voice recorded:DIR" in said
    assert server.requests == [] and not (tmp_path / "cache" / "voices" / "piper").exists()


def test_a_failed_fetch_leaves_no_voice_behind(piper_hub, tmp_path, monkeypatch):
    """The Spanish model is missing on the hub: the fetch fails with the reason (exit 2) and leaves
    neither a part of the voice nor its staging folder, so `auto` still picks espeak-ng."""
    server, env = piper_hub
    proc = fetch_voice("es", env)
    said = proc.said
    assert proc.returncode == 2, said
    assert f"the download of {ES.folder}/{ES.name}.onnx from {server.url} failed" in said
    assert list((tmp_path / "cache" / "voices" / "piper").iterdir()) == []
    monkeypatch.setenv("ONEPASS_CACHE", env["ONEPASS_CACHE"])
    monkeypatch.setattr(services, "piper_available", lambda: True)
    assert services.best_offline_spec("es").startswith("espeak:")
