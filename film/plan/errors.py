"""PipelineError: the one error the film build raises for a problem the user can act on."""
from __future__ import annotations

from onepass.data.errors import OnepassError


class PipelineError(OnepassError, RuntimeError):
    """A scene failed to render, a chapter failed to join, or a source file breaks a convention
    the cache key relies on; the message says which and why."""
