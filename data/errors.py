"""The one base of every error the user can act on.

    from onepass.data.errors import OnepassError
    class CatalogError(OnepassError, ValueError): ...

render.py catches OnepassError and prints its message (no traceback) with exit status 2: the
message says what is wrong and what to do. Anything else that escapes is a bug in onepass and
keeps its traceback. A new user-facing error derives from OnepassError (and from the built-in
kind its callers catch, ValueError, RuntimeError, ..., where they catch one).
"""
from __future__ import annotations


class OnepassError(Exception):
    """Something the user can fix (an input, a setting, a missing tool); the message says what."""
