"""onepass: an explainer film of one forward pass of GPT-2, rendered with Manim from the model's
real numbers. The distribution's one top-level name: its packages are the repository's folders
data/, engine/, film/, scenes/, voiceover/, words/ (pyproject.toml maps them under it), and cli.py is the
`onepass` command."""
from pathlib import Path as _Path

# A checkout used without installing it (`python render.py` there, PYTHONPATH=<checkout>): its
# packages are the folders beside this one, as pyproject.toml's package-dir maps them for an install.
_checkout = _Path(__file__).resolve().parent.parent
if (_checkout / "pyproject.toml").is_file() and (_checkout / "film" / "__init__.py").is_file() \
        and str(_checkout) not in __path__:
    __path__.append(str(_checkout))
del _Path, _checkout

__all__ = ['OnepassError', 'Rendered', 'render']


def __getattr__(name: str):
    """OnepassError, Rendered, render: from onepass.film.make.api (film's Python API), loaded when first asked for."""
    if name in __all__:
        import importlib
        return getattr(importlib.import_module('onepass.film.make.api'), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
