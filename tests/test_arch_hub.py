"""A Llama-style model's real weights from the hub (a stand-in hub on 127.0.0.1, tests/test_hub.py's) or
from a folder, and the gated model's one-line advice: the same paths GPT-2's weights take."""
from __future__ import annotations

import json

import pytest

from onepass.data import extract
from tests.test_hub import COMMIT, HubServer, run_onepass

QWEN = """
import json
from onepass.data import extract
b = extract.extract("The cat sat on the", {weights!r}, model="qwen3-0.6b")
print("META " + json.dumps({{"weights": b.meta["weights"], "model": b.meta["model"], "arch": b.arch,
                            "ids": b.ids, "kv": b.shape.kv_heads, "qk_norm": b.shape.qk_norm}}))
"""


def meta_of(proc) -> dict:
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("META "))[5:])


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory):
    """A 2-layer Qwen3 (its real vocabulary, q/k norm, 4 query heads over 2 key/value heads) saved as a hub
    repository holds it: config.json + model.safetensors."""
    folder = tmp_path_factory.mktemp("qwen3")
    extract.synthetic_model("tiny", model="qwen3-0.6b").save_pretrained(folder, safe_serialization=True)
    return folder


def test_auto_downloads_a_qwen3_from_the_hub_and_cites_it(tiny_qwen3, tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf"), "ONEPASS_CACHE": str(tmp_path / "cache")}
    with HubServer({"Qwen/Qwen3-0.6B": tiny_qwen3}) as server:
        env["HF_ENDPOINT"] = server.url
        meta = meta_of(run_onepass(QWEN.format(weights="auto"), env))
        gets = sorted(r.rsplit("/", 1)[1] for r in server.requests if r.startswith("GET ") and "/resolve/" in r)
    assert gets == ["config.json", "model.safetensors"]
    assert meta["weights"]["hub"]["id"] == "Qwen/Qwen3-0.6B" and meta["weights"]["hub"]["revision"] == COMMIT
    assert not meta["weights"]["synthetic"] and meta["arch"] == "llama" and meta["qk_norm"] and meta["kv"] == 2
    assert meta["ids"] == [785, 8251, 7578, 389, 279]        # Qwen3's own tokenizer
    assert meta["model"] is None          # served at another size than Qwen3-0.6B's: said to be outside the list


def test_a_qwen3_folder_is_read_as_its_kind(tiny_qwen3, tmp_path):
    """In this process (the suite runs offline; no hub client to set up): a fresh Python would import
    torch and transformers again, which the fixture has imported here already."""
    b = extract.extract("The cat sat on the", str(tiny_qwen3), model="qwen3-0.6b", root=tmp_path, log=lambda m: None)
    assert not b.meta["weights"]["synthetic"] and b.arch == "llama" and b.meta["model"] is None
    assert b.shape.qk_norm and b.shape.kv_heads == 2 and b.ids == [785, 8251, 7578, 389, 279]


def test_the_gated_llama_says_how_to_get_it_in_one_line(tmp_path):
    """No token: `auto` asks the hub nothing, says to accept the licence and set HF_TOKEN, and renders
    random weights of Llama 3.2 1B's exact shapes."""
    code = ("from onepass.data import extract\nsaid = []\n"
            "print('RESOLVED', extract.resolve_weights('auto', said.append, 'llama-3.2-1b'))\nprint('SAID', *said)")
    proc = run_onepass(code, {"HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert proc.returncode == 0, proc.stderr
    assert "RESOLVED random" in proc.stdout
    said = proc.stdout.split("SAID ", 1)[1]
    assert "meta-llama/Llama-3.2-1B is gated" in said and "HF_TOKEN" in said and said.count("\n") <= 1
