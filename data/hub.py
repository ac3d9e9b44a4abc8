"""Real GPT-2 weights from the Hugging Face hub: found in its cache, or downloaded once.

`--weights auto` (data/extract.py resolve_weights) asks, in order: weights already on this machine
(`cached`), then the hub (`fetch`: transformers' own download, into the hub's cache, with its
progress bar and its settings: HF_HOME, HF_HUB_OFFLINE, HF_ENDPOINT), then falls back to random
weights. Whether the hub answers is decided by one request with a short timeout (PROBE_TIMEOUT
seconds, no retry), so an offline machine falls back in seconds rather than hanging; the verdict is
kept for the process (a batch asks once per model).

Only `model.safetensors` is ever fetched or read, never a pickle. `citation` says which files ran:
the hub id, the revision (the commit the cache holds) and the sha256 of model.safetensors.

huggingface_hub and transformers are imported inside the functions: a cached bundle needs neither.
"""
from __future__ import annotations

import os
from pathlib import Path

from onepass.data.bundle import sha256_file

FILES = ("config.json", "model.safetensors")   # what a GPT-2 needs from the hub (no tokenizer: ours is offline)
PROBE_TIMEOUT = 3.0        # seconds for the one request that decides whether the hub answers
_verdicts: dict[tuple[str, str], str] = {}     # (endpoint, hub id) -> why the hub could not serve it
downloaded: set[str] = set()                   # hub ids fetch() downloaded in this process (for the log)


def endpoint() -> str:
    """The hub the client talks to ($HF_ENDPOINT, else huggingface.co), as huggingface_hub reads it."""
    from huggingface_hub import constants
    return constants.ENDPOINT


def offline() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set: the hub is never asked."""
    from huggingface_hub import constants
    said = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return bool(constants.HF_HUB_OFFLINE) or said.strip().upper() in ("1", "ON", "YES", "TRUE")


def cached(hub_id: str) -> Path | None:
    """model.safetensors of `hub_id` in the hub's cache (its main revision), or None. No request."""
    try:
        from huggingface_hub import try_to_load_from_cache
        found = try_to_load_from_cache(hub_id, "model.safetensors")
    except Exception:          # an unusual hub install: treat as "not cached"
        return None
    return Path(found) if isinstance(found, str) else None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def unreachable(hub_id: str) -> str | None:
    """Why the hub cannot serve `hub_id` now (one line), or None when it answers. One request
    (GET /api/models/<id>/revision/main) with PROBE_TIMEOUT, never retried; kept per process."""
    if offline():
        return "HF_HUB_OFFLINE is set"
    key = (endpoint(), hub_id)
    if key in _verdicts:
        return _verdicts[key] or None
    from huggingface_hub import HfApi
    try:
        HfApi().model_info(hub_id, revision="main", timeout=PROBE_TIMEOUT)
        why = ""
    except Exception as exc:     # refused, no route, no name, timed out, 404, 5xx: all mean "not from the hub"
        timed_out = "timeout" in type(exc).__name__.lower() or "timed out" in str(exc).lower()
        if "JSONDecodeError" in {c.__name__ for c in type(exc).__mro__}:     # json's, requests', simplejson's
            # it answered, with a page that is not the hub's JSON (a captive portal, a proxy's login, another server)
            why = (f"the hub at {key[0]} answered, but not as a model hub does (not JSON: a web page, a proxy "
                   "or another server at that address?); check HF_ENDPOINT")
        else:
            detail = f"no answer within {PROBE_TIMEOUT:g} s" if timed_out else _short(exc)
            why = f"the hub at {key[0]} could not be reached ({detail})"
    _verdicts[key] = why
    return why or None


def fetch(hub_id: str, log=print) -> str | None:
    """Download `hub_id`'s config.json and model.safetensors once, through transformers (its cache,
    its progress bar). Returns None when done, else why not (one line)."""
    why = unreachable(hub_id)
    if why:
        return why
    log(f"downloading {hub_id}'s weights from {endpoint()} once, into the Hugging Face cache")
    try:
        from transformers.utils.hub import cached_file
        for name in FILES:              # one file at a time: one bar each (a snapshot's nested bars garble a terminal)
            cached_file(hub_id, name)
        downloaded.add(hub_id)
    except Exception as exc:
        why = f"the download from {endpoint()} failed ({_short(exc)})"
        _verdicts[(endpoint(), hub_id)] = why
        return why
    return None


def citation(hub_id: str) -> dict | None:
    """Which hub files a model loaded from the cache came from: {"id", "revision", "file",
    "file_sha256"}; None when the cache does not hold them."""
    path = cached(hub_id)
    if path is None:
        return None
    # <cache>/models--<id>/snapshots/<commit>/model.safetensors
    return {"id": hub_id, "revision": path.parent.name, "file": path.name, "file_sha256": sha256_file(path)}
