"""A built Text as data only: what scenes/text.py's label shelf keeps on disk, read back with nothing
from the file ever run.

The shelf used to pickle labels, and unpickling runs whatever a file names: a file planted in the
user's cache ran its code in the next scene process. Here a label is its mobjects' attributes, as
manim's own `Mobject.__deepcopy__` sees them, written as JSON (numbers, strings, lists, dicts, a
path, one of two enums, a reference to another object of the file) beside the arrays (glyph points,
colours) in one safetensors file, a format that holds tensors and a string header and nothing else.

`load` makes objects only of the classes in CLASSES (with `cls.__new__`, as a deep copy does, so no
constructor runs), then checks the whole (`check`): a Text at the root, the attributes a shape needs
present and of their kind, points (n, 3) finite floats in whole curves, colours (k, 4) within 0..1.
Anything else raises StoredError, and the shelf builds the label again.
"""
from __future__ import annotations

import enum
import json
from pathlib import Path, PurePath

import numpy as np
from manim import CapStyleType, LineJointType, ManimColor, Text, VGroup, VMobject, VMobjectFromSVGPath
from safetensors.numpy import load as load_arrays
from safetensors.numpy import save as save_arrays

from onepass.engine.text import PARSE_ONLY

FORMAT = "onepass-label-1"
CLASSES = {c.__name__: c for c in (Text, VMobjectFromSVGPath, VGroup, VMobject, ManimColor)}
ENUMS = {e.__name__: e for e in (CapStyleType, LineJointType)}
DTYPES = ("float64", "float32", "int64", "int32", "bool")
MAX_OBJECTS = 20_000          # a paragraph of glyphs is a few hundred: more is not a label


class StoredError(ValueError):
    """A stored label that cannot be used (not ours, damaged, another label's, another shape)."""


class _Unstorable(Exception):
    """A value the format does not hold (a function, an unknown class): the label is not kept."""


def dumps(mob: Text, key: str) -> bytes | None:
    """`mob` as the bytes of a safetensors file tagged with `key` (the shelf's own name for it, checked
    by `loads`); None when it holds something the format does not (then it is simply not kept).
    What only the SVG parse read (engine/text.py's PARSE_ONLY, as compact_text drops it) is written
    empty: it is never drawn, and it held a VGroup per glyph, eight times the objects to read back."""
    objects: list[dict] = []
    index: dict[int, int] = {}
    arrays: dict[str, np.ndarray] = {}
    named: dict[int, str] = {}
    keep: list = []

    def ref(obj) -> dict:
        if id(obj) not in index:
            name = type(obj).__name__
            if CLASSES.get(name) is not type(obj):
                raise _Unstorable(name)
            index[id(obj)] = len(objects)
            entry: dict = {"class": name}
            objects.append(entry)
            entry["attrs"] = {k: value(type(v)() if k in PARSE_ONLY else v) for k, v in vars(obj).items()}
        return {"obj": index[id(obj)]}

    def value(v):
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int) and type(v) is int:
            return v
        if type(v) is float:
            if not np.isfinite(v):
                raise _Unstorable("a float that is not finite")
            return v
        if isinstance(v, np.generic):          # a numpy number (a Text's initial_height): exact in JSON
            if v.dtype.name not in DTYPES or not np.isfinite(v):
                raise _Unstorable(f"a number of {v.dtype}")
            return {"number": v.dtype.name, "value": v.item()}
        if isinstance(v, np.ndarray):
            a = v
            if a.dtype.name not in DTYPES:
                raise _Unstorable(f"an array of {a.dtype}")
            if id(v) not in named:              # an array two shapes share stays one
                named[id(v)] = f"a{len(arrays)}"
                arrays[named[id(v)]] = np.ascontiguousarray(a)
                keep.append(v)                  # so no id is reused while this runs
            return {"array": named[id(v)]}
        if isinstance(v, enum.Enum):
            if ENUMS.get(type(v).__name__) is not type(v):
                raise _Unstorable(type(v).__name__)
            return {"enum": type(v).__name__, "value": v.value}
        if isinstance(v, PurePath):
            return {"path": v.as_posix()}
        if type(v) is list:
            return {"list": [value(x) for x in v]}
        if type(v) is tuple:
            return {"tuple": [value(x) for x in v]}
        if type(v) is dict:
            if not all(type(k) is str for k in v):
                raise _Unstorable("a dict with keys that are not strings")
            return {"dict": {k: value(x) for k, x in v.items()}}
        return ref(v)         # a mobject or a colour; anything else is refused there

    try:
        ref(mob)
    except _Unstorable:
        return None
    header = json.dumps({"format": FORMAT, "key": key, "objects": objects}, allow_nan=False)
    return save_arrays(arrays, metadata={"label": header})


def loads(data: bytes, key: str) -> Text:
    """The Text `dumps` stored under `key`; StoredError for anything else."""
    try:
        arrays = load_arrays(data)
        header = json.loads(_metadata(data)["label"])
    except StoredError:
        raise
    except Exception as exc:              # not a safetensors file, no header, bad JSON: never ours
        raise StoredError(f"not a stored label ({type(exc).__name__})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StoredError("another format")
    if header.get("key") != key:
        raise StoredError("another label's file")
    specs = header.get("objects")
    if not isinstance(specs, list) or not 0 < len(specs) <= MAX_OBJECTS:
        raise StoredError("no objects")
    made = []
    shared: dict[str, np.ndarray] = {}
    for spec in specs:
        cls = CLASSES.get(spec.get("class")) if isinstance(spec, dict) else None
        if cls is None or not isinstance(spec.get("attrs"), dict):
            raise StoredError("an object of a class a label does not hold")
        made.append(cls.__new__(cls))

    def value(v):
        if v is None or isinstance(v, (bool, str, int)) or (type(v) is float and np.isfinite(v)):
            return v
        if not isinstance(v, dict) or len(v) not in (1, 2):
            raise StoredError("a value of no known kind")
        if "obj" in v:
            i = v["obj"]
            if type(i) is not int or not 0 <= i < len(made):
                raise StoredError("a reference to no object")
            return made[i]
        if "array" in v:
            a = arrays.get(v["array"]) if isinstance(v["array"], str) else None
            if a is None or a.dtype.name not in DTYPES:
                raise StoredError("a missing array")
            return shared.setdefault(v["array"], a)
        if "number" in v:
            kind, x = v["number"], v.get("value")
            if kind not in DTYPES or isinstance(x, (str, dict, list)) or x is None or not np.isfinite(x):
                raise StoredError("a number that is not one")
            return np.dtype(kind).type(x)
        if "enum" in v:
            e = ENUMS.get(v["enum"]) if isinstance(v["enum"], str) else None
            try:
                return e(v.get("value"))
            except Exception:
                raise StoredError("an unknown enum value") from None
        if "path" in v and isinstance(v["path"], str):
            return Path(v["path"])
        if isinstance(v.get("list"), list):
            return [value(x) for x in v["list"]]
        if isinstance(v.get("tuple"), list):
            return tuple(value(x) for x in v["tuple"])
        if isinstance(v.get("dict"), dict):
            return {k: value(x) for k, x in v["dict"].items()}
        raise StoredError("a value of no known kind")

    for obj, spec in zip(made, specs):
        attrs = spec["attrs"]
        if not all(isinstance(k, str) and k.isidentifier() and not k.startswith("__") for k in attrs):
            raise StoredError("an attribute name that is not one")
        obj.__dict__.update({k: value(v) for k, v in attrs.items()})
    root = made[0]
    if type(root) is not Text:
        raise StoredError("not a Text")
    check(root, made)
    return root


def _metadata(data: bytes) -> dict:
    """The string header safetensors keeps beside its arrays (its first 8 bytes: the header's length)."""
    n = int.from_bytes(data[:8], "little")
    if not 0 < n <= len(data) - 8:
        raise StoredError("no header")
    meta = json.loads(data[8:8 + n]).get("__metadata__")
    if not isinstance(meta, dict) or not isinstance(meta.get("label"), str):
        raise StoredError("no label in the header")
    return meta


_NEEDED: dict[type, frozenset] = {}


def _needed(cls) -> frozenset:
    """The attributes a fresh mobject of `cls`'s kind has (a Text's: a VGroup's and its own)."""
    if cls not in _NEEDED:
        base = VGroup if cls is Text else VMobject
        text = {"original_text", "text", "chars", "_font_size", "line_spacing", "initial_height"}
        _NEEDED[cls] = frozenset(vars(base())) | frozenset(text if cls is Text else ())
    return _NEEDED[cls]


def _rgbas(a) -> bool:
    return (isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim == 2 and a.shape[1] == 4
            and a.shape[0] >= 1 and bool(np.all((a >= 0) & (a <= 1))))


def check(root: Text, made: list) -> None:
    """Every object of a stored label is what drawing and copying it will read; StoredError if not."""
    for obj in made:
        if isinstance(obj, ManimColor):
            rgba = vars(obj).get("_ManimColor__value")
            if not (isinstance(rgba, np.ndarray) and rgba.shape == (4,) and _rgbas(rgba[None])):
                raise StoredError("a colour that is not one")
            continue
        missing = _needed(type(obj)) - vars(obj).keys()
        if missing:
            raise StoredError(f"a shape without {sorted(missing)[0]}")
        pts, per = obj.points, obj.n_points_per_cubic_curve
        if not (isinstance(pts, np.ndarray) and pts.dtype == np.float64 and pts.ndim == 2 and pts.shape[1] == 3
                and type(per) is int and per > 0 and len(pts) % per == 0 and np.isfinite(pts).all()):
            raise StoredError("points that are not whole curves")
        if not all(_rgbas(getattr(obj, k)) for k in ("fill_rgbas", "stroke_rgbas", "background_stroke_rgbas")):
            raise StoredError("colours that are not colours")
        if not (isinstance(obj.submobjects, list) and all(isinstance(m, VMobject) for m in obj.submobjects)):
            raise StoredError("parts that are not shapes")
        if obj.updaters != [] or not isinstance(obj.name, str):
            raise StoredError("a shape that is not still")
    if not (isinstance(root.original_text, str) and isinstance(root.text, str) and isinstance(root.chars, VGroup)):
        raise StoredError("a Text without its string")
    _acyclic(root, set(), set())


def _acyclic(mob, path: set, done: set) -> None:
    """No shape is its own part (manim's get_family would recurse for ever)."""
    if id(mob) in path:
        raise StoredError("a shape that is its own part")
    if id(mob) in done:
        return
    path.add(id(mob))
    for m in mob.submobjects:
        _acyclic(m, path, done)
    path.discard(id(mob))
    done.add(id(mob))
