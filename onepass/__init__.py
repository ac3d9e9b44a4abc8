"""onepass: an explainer film of one forward pass of GPT-2, rendered with Manim from the model's
real numbers. The distribution's one top-level name: its packages are the repository's folders
data/, engine/, film/, scenes/, voiceover/, words/ (pyproject.toml maps them under it), and cli.py is the
`onepass` command."""
__all__ = ['OnepassError', 'Rendered', 'render']


def __getattr__(name: str):
    """OnepassError, Rendered, render: from onepass.film.make.api (film's Python API), loaded when first asked for."""
    if name in __all__:
        import importlib
        return getattr(importlib.import_module('onepass.film.make.api'), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
