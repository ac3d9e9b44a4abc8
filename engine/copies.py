"""A mobject's deep copy, made the way manim makes it but without copy.deepcopy's general machinery
for the values a mobject is made of.

manim copies a mobject with `copy.deepcopy` (Mobject.copy), and `Mobject.__deepcopy__` deep-copies
every attribute in turn. A scene makes thousands of copies (every Transform copies its mobject and
its target as it begins; every FadeIn, generate_target and save_state one more), and most of what
they copy is numbers, strings, numpy arrays and ManimColors: chapter 02's Urdu dry run made 2.3
million deepcopy calls for about 3,100 copies, a ManimColor going through copy's pickling protocol
(`__reduce_ex__`, then `_reconstruct`) each time.

`mobject_deepcopy` is `Mobject.__deepcopy__` (manim 0.22: a new object of the same class, recorded
in the memo first, each attribute of `__dict__` deep-copied in order and set with setattr, then
`original_id`), with each attribute copied by `deep_copy`: what copy.deepcopy gives, reached
faster for the kinds a mobject holds, and copy.deepcopy itself (with the same memo) for anything
else:

* the values copy.deepcopy returns as they are (None, numbers, strings, functions, classes, ...:
  its own atomic types, by exact type) are returned as they are;
* anything already in the memo is the copy the memo holds (shared values stay shared);
* a numpy array of numbers (exactly np.ndarray, not of objects) is `ndarray.copy(order="K")`,
  what ndarray.__deepcopy__ makes;
* a list, a dict, a tuple (exact types) as copy's own _deepcopy_list, _deepcopy_dict and
  _deepcopy_tuple build them (the new list or dict in the memo before its items; a tuple of
  values that all copy to themselves is itself);
* a mobject whose class keeps manim's (this) __deepcopy__: this function, directly;
* an enum member (LineJointType, CapStyleType) whose class keeps Enum.__deepcopy__: itself, as
  that returns; a numpy number: its own __deepcopy__, called directly;
* an object of a plain class, one that copy.deepcopy would copy through object.__reduce_ex__ (no
  __deepcopy__, __reduce__, __reduce_ex__, __getstate__, __setstate__, __getnewargs__, __slots__,
  __getattr__ or __getattribute__ of its own, no copyreg entry): ManimColor is one. As _reconstruct
  does: `cls.__new__(cls)`, in the memo, then its `__dict__` deep-copied into it. ManimColor is not
  shared between copies: it is mutable (its array is written in place, manim does so itself).

Installed by engine/frames.py's faster_manim() while a scene renders (and by dry_run()).
tests/test_frame_path.py compares its copies with manim's own. Issue 50 (2 shared cores):
bench/dry_run_speed.py, 15 scenes of chapters 00-06 dry-run in English, 0.87 of manim's time with
these copies alone and 0.79 with all of faster_manim(); every top-level copy made in dry runs of
all 27 scenes of chapters 00-06 (English; five in Urdu) compared equal, graph for graph, to
manim's; bench/frame_hashes.py --manim-copies: chapters 01, 02, 03, 06 (English) and 02 (Urdu)
at 480p15, every decoded frame identical with and without it.
"""
from __future__ import annotations

import contextlib
import copy
import copyreg
import enum
import types
import weakref

import numpy as np
from manim import Mobject

# copy.deepcopy's own atomic types (Python 3.11's copy._deepcopy_dispatch entries that are
# _deepcopy_atomic), matched by exact type as deepcopy does
ATOMIC = frozenset({type(None), type(Ellipsis), type(NotImplemented), int, float, bool, complex, bytes, str,
                    types.CodeType, type, range, types.BuiltinFunctionType, types.FunctionType, weakref.ref,
                    property})

_NIL = object()
# how an object of a class other than those above is copied, found once per class
ITSELF, SCALAR, MOBJECT, PLAIN, DEEPCOPY = range(5)
_KIND: dict[type, int] = {}


def _plain(cls: type) -> bool:
    """Whether copy.deepcopy copies an object of `cls` as object.__reduce_ex__(4) describes it:
    cls.__new__(cls), then its __dict__ deep-copied into the new object's."""
    return (cls not in copyreg.dispatch_table and not issubclass(cls, type)
            and getattr(cls, "__deepcopy__", None) is None
            and cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__
            and cls.__getstate__ is object.__getstate__ and not hasattr(cls, "__setstate__")
            and not hasattr(cls, "__getnewargs_ex__") and not hasattr(cls, "__getnewargs__")
            and cls.__getattribute__ is object.__getattribute__ and not hasattr(cls, "__getattr__")
            and not copyreg._slotnames(cls) and "__dict__" in dir(cls) and cls.__new__ is object.__new__)


def _kind(cls: type) -> int:
    kind = _KIND.get(cls)
    if kind is None:
        copier = getattr(cls, "__deepcopy__", None)
        if issubclass(cls, type):
            kind = ITSELF                      # a class (of a metaclass of its own): copy's atomic
        elif issubclass(cls, enum.Enum) and copier is enum.Enum.__deepcopy__:
            kind = ITSELF                      # Enum.__deepcopy__ returns the member itself
        elif issubclass(cls, np.generic) and copier is np.generic.__deepcopy__:
            kind = SCALAR                      # a numpy number: its own __deepcopy__
        elif copier is mobject_deepcopy:
            kind = MOBJECT
        elif _plain(cls):
            kind = PLAIN
        else:
            kind = DEEPCOPY
        _KIND[cls] = kind
    return kind


def deep_copy(x, memo: dict):
    """copy.deepcopy(x, memo), the same copy, faster for what a mobject is made of."""
    cls = type(x)
    if cls in ATOMIC:
        return x
    y = memo.get(id(x), _NIL)
    if y is not _NIL:
        return y
    if cls is np.ndarray:
        if x.dtype.hasobject:
            return copy.deepcopy(x, memo)
        y = x.copy(order="K")
    elif cls is list:
        y = []
        memo[id(x)] = y
        append = y.append
        for item in x:
            append(deep_copy(item, memo))
        return y
    elif cls is dict:
        y = {}
        memo[id(x)] = y
        for key, value in x.items():
            y[deep_copy(key, memo)] = deep_copy(value, memo)
        return y
    elif cls is tuple:
        items = [deep_copy(item, memo) for item in x]
        # an item's copy may have copied this tuple already (a cycle through it): that copy
        y = memo.get(id(x), _NIL)
        if y is not _NIL:
            return y
        if all(a is b for a, b in zip(items, x)):
            return x            # as copy's _deepcopy_tuple: itself, not memoized
        y = tuple(items)
    else:
        kind = _kind(cls)
        if kind == ITSELF:
            return x
        if kind == MOBJECT:
            return mobject_deepcopy(x, memo)       # it puts itself in the memo
        if kind == SCALAR:
            y = x.__deepcopy__(memo)
            if y is x:
                return x
        elif kind == PLAIN and "__deepcopy__" not in x.__dict__:
            y = cls.__new__(cls)
            memo[id(x)] = y
            state = x.__dict__
            if state:
                y.__dict__.update({deep_copy(k, memo): deep_copy(v, memo) for k, v in state.items()})
            return y
        else:
            return copy.deepcopy(x, memo)
    memo[id(x)] = y
    return y


_SET_BY_SETATTR: dict[type, frozenset | None] = {}


def _set_by_setattr(cls: type) -> frozenset | None:
    """The attribute names that `setattr` on an object of `cls` sets otherwise than by storing into
    its __dict__ (the data descriptors: properties with a setter, ...); None when every name is
    (a __setattr__ of its own)."""
    if cls not in _SET_BY_SETATTR:
        _SET_BY_SETATTR[cls] = None if cls.__setattr__ is not object.__setattr__ else frozenset(
            name for klass in cls.__mro__ for name, v in vars(klass).items()
            if hasattr(type(v), "__set__") or hasattr(type(v), "__delete__"))
    return _SET_BY_SETATTR[cls]


def mobject_deepcopy(self, clone_from_id: dict):
    """manim 0.22's Mobject.__deepcopy__, each attribute copied by deep_copy (an atomic value, most
    of a mobject's, without a call) and stored as setattr stores it."""
    cls = self.__class__
    result = cls.__new__(cls)
    clone_from_id[id(self)] = result
    special = _set_by_setattr(cls)
    if special is None:
        for k, v in self.__dict__.items():
            setattr(result, k, deep_copy(v, clone_from_id))
    else:
        into = result.__dict__
        for k, v in self.__dict__.items():
            v = v if type(v) in ATOMIC else deep_copy(v, clone_from_id)
            if k in special:
                setattr(result, k, v)
            else:
                into[k] = v
    result.original_id = str(id(self))
    return result


@contextlib.contextmanager
def faster_copies():
    """While the block runs, Mobject.__deepcopy__ is mobject_deepcopy; what it was before after it."""
    before = Mobject.__deepcopy__
    Mobject.__deepcopy__ = mobject_deepcopy
    try:
        yield
    finally:
        Mobject.__deepcopy__ = before
