"""--weights auto and the model hub, without the internet: a hub of our own on 127.0.0.1.

HubServer serves a saved GPT-2-shaped model (the tiny random one, config.json + model.safetensors)
in the hub's URL layout, the way huggingface_hub talks to huggingface.co:
    GET  /api/models/<id>/revision/<rev>     the repo's info (its commit)
    GET  /api/models/<id>/tree/<rev>         its files (sizes, the LFS file's sha256)
    HEAD /<id>/resolve/<rev>/<file>          X-Repo-Commit, ETag (the file's sha256), Content-Length
    GET  /<id>/resolve/<rev>/<file>          the bytes
Each run is a fresh process (the hub client reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when it is
imported), with HF_HOME in a temporary folder; the server counts every request.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from onepass.data import hub

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class HubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, repos: dict[str, Path]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.repos = {name: {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
                      for name, folder in repos.items()}
        self.requests: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):       # quiet
        pass

    def do_HEAD(self):
        self._serve(body=False)

    def do_GET(self):
        self._serve(body=True)

    def _send(self, code: int, data: bytes, headers: dict, body: bool):
        self.send_response(code)
        for k, v in {**headers, "Content-Length": str(len(data))}.items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _serve(self, body: bool):
        self.server.requests.append(f"{self.command} {self.path}")
        path = unquote(urlsplit(self.path).path)
        repos = self.server.repos
        m = re.fullmatch(r"/api/models/(.+)/revision/([^/]+)", path)
        if m:
            if m[1] not in repos:
                return self._send(404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"}, body)
            info = {"id": m[1], "modelId": m[1], "sha": COMMIT, "private": False,
                    "siblings": [{"rfilename": f} for f in sorted(repos[m[1]])]}
            return self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body)
        m = re.fullmatch(r"/api/models/(.+)/tree/([^/]+)", path)        # snapshot_download lists the files
        if m and m[1] in repos:
            tree = [{"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest(),
                     **({"lfs": {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}}
                        if name.endswith(".safetensors") else {})}
                    for name, data in sorted(repos[m[1]].items())]
            return self._send(200, json.dumps(tree).encode(), {"Content-Type": "application/json"}, body)
        m = re.fullmatch(r"/(.+)/resolve/([^/]+)/(.+)", path)
        if m and m[1] in repos and m[3] in repos[m[1]]:
            data = repos[m[1]][m[3]]
            headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha256(data).hexdigest()}"',
                       "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
            start = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
            if start and body:
                return self._send(206, data[int(start[1]):], headers, body)
            return self._send(200, data, headers, body)
        self._send(404, b"Entry not found", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT}, body)


def run_onepass(code: str, env: dict) -> subprocess.CompletedProcess:
    """`code` in a fresh Python with onepass importable and the hub client set by `env`."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE",
                         "ONEPASS_GPT2_WEIGHTS")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**base, "HF_HUB_DISABLE_TELEMETRY": "1", **env},
                          capture_output=True, text=True, timeout=300)


EXTRACT = """
import json
from onepass.data import extract
b = extract.extract({prompt!r}, "auto", model="gpt2")
print("WEIGHTS " + json.dumps(b.meta["weights"]))
"""


def weights_of(proc) -> dict:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("WEIGHTS "))[8:])


def test_auto_downloads_the_model_once_cites_it_and_reuses_the_cache(saved_weights, tiny_bundle, tmp_path):
    """No weights here, a hub that answers: `auto` downloads config.json and model.safetensors once
    through transformers into HF_HOME, the bundle cites hub id, revision and the file's sha256, and
    a later run (a new process, another prompt) loads them from the cache without one request."""
    served = saved_weights("tiny")
    safetensors = (served / "model.safetensors").read_bytes()
    env = {"HF_HOME": str(tmp_path / "hf"), "ONEPASS_CACHE": str(tmp_path / "cache")}
    with HubServer({"gpt2": served}) as server:
        env["HF_ENDPOINT"] = server.url
        first = run_onepass(EXTRACT.format(prompt="The cat sat on the"), env)
        w = weights_of(first)
        fetched = list(server.requests)
        second = run_onepass(EXTRACT.format(prompt="A dog ran to the"), env)
        w2 = weights_of(second)
        assert server.requests == fetched, "the second run asked the hub again"

    gets = [r for r in fetched if r.startswith("GET ") and "/resolve/" in r]
    assert sorted(r.rsplit("/", 1)[1] for r in gets) == ["config.json", "model.safetensors"]   # each once
    assert not any(r.endswith((".bin", ".pt")) for r in fetched)                                 # never a pickle
    cited = {"id": "gpt2", "revision": COMMIT, "file": "model.safetensors",
             "file_sha256": hashlib.sha256(safetensors).hexdigest()}
    assert w["hub"] == cited and w2["hub"] == cited and not w["synthetic"]
    assert w["sha256"] == tiny_bundle.meta["weights"]["sha256"]          # the very numbers served ran
    cache = tmp_path / "hf" / "hub" / "models--gpt2" / "snapshots" / COMMIT / "model.safetensors"
    assert cache.read_bytes() == safetensors
    assert f"downloading gpt2's weights from {server.url} once" in first.stdout
    assert f"weights: gpt2 from the Hugging Face cache, revision {COMMIT} (downloaded now)" in first.stdout
    assert f"weights: gpt2 from the Hugging Face cache, revision {COMMIT} (found on this machine)" in second.stdout
    assert "RANDOM" not in first.stdout + second.stdout


RESOLVE = """
from onepass.data import extract, hub
said = []
print("RESOLVED", extract.resolve_weights("auto", said.append, {model!r}))
print("SAID", *said, sep="\\n")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_hub_that_refuses_connections_falls_back_to_random_weights_at_once(tmp_path):
    """Nothing listens at HF_ENDPOINT: `auto` says why and renders random weights of the model's
    shapes. The one request that decides has a short timeout and is not retried."""
    proc = run_onepass(RESOLVE.format(model="gpt2-xl"),
                       {"HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"})
    assert proc.returncode == 0, proc.stderr
    assert "RESOLVED random" in proc.stdout
    said = proc.stdout.split("SAID\n", 1)[1]
    assert said.startswith("no real gpt2-xl weights on this machine and the hub at http://127.0.0.1:")
    assert "could not be reached (" in said and "Connection refused" in said
    assert "RANDOM weights (gpt2-xl's exact shapes" in said and "--weights gpt2-xl" in said
    assert not (tmp_path / "hf" / "hub" / "models--gpt2-xl" / "snapshots").exists()
    assert hub.PROBE_TIMEOUT <= 5                    # what an unanswered request may cost, once


def test_a_hub_that_never_answers_costs_one_request_then_random(tmp_path):
    """A hub that accepts the connection and says nothing: one connection (no retry), cut off by the
    probe's timeout, then random weights; HF_HUB_OFFLINE=1 asks nothing at all."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def hold():
        while True:
            try:
                accepted.append(listener.accept()[0])        # kept open, never answered
            except OSError:
                return
    threading.Thread(target=hold, daemon=True).start()
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": f"http://127.0.0.1:{listener.getsockname()[1]}"}
    try:
        proc = run_onepass(RESOLVE.format(model="distilgpt2"), env)
        offline = run_onepass(RESOLVE.format(model="distilgpt2"), {**env, "HF_HUB_OFFLINE": "1"})
        connections = len(accepted)
    finally:
        listener.close()
        for c in accepted:
            c.close()
    assert "RESOLVED random" in proc.stdout, proc.stderr
    assert f"could not be reached (no answer within {hub.PROBE_TIMEOUT:g} s)" in proc.stdout
    assert "RESOLVED random" in offline.stdout and "HF_HUB_OFFLINE is set" in offline.stdout
    assert connections == 1                          # the probe, once; the offline run none
