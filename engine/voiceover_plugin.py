"""manim-voiceover, for what onepass does not do itself: its network voices (gTTS, OpenAI, Azure,
ElevenLabs, Gemini), and never a question on stdin.

`service_class(kind)` imports the plugin's service class for a network voice. manim-voiceover asks
before installing missing extras (`prompt_ask_missing_extras`, `prompt_ask_missing_package`),
offers to write a .env file (`create_dotenv_file`) and, in the Azure service, asks again after an
authentication failure: all with a bare `input()`. A render must never wait on a question, so
every such helper is replaced by one that raises a readable error instead, in the helper module
and in every manim_voiceover module already imported (they bind the helpers by name):
`install()`, which `service_class` runs after each import. Nothing else of manim-voiceover is used
(the scenes' narration is engine/narration.py; the clips, their cache and timing are onepass's).
"""
from __future__ import annotations

import importlib
import sys

# kind -> (module, class) of manim-voiceover's network services
NETWORK_CLASSES = {
    "gtts": ("manim_voiceover.services.gtts", "GTTSService"),
    "openai": ("manim_voiceover.services.openai", "OpenAIService"),
    "azure": ("manim_voiceover.services.azure", "AzureService"),
    "elevenlabs": ("manim_voiceover.services.elevenlabs", "ElevenLabsService"),
    "gemini": ("manim_voiceover.services.gemini", "GeminiService"),
}


class NoQuestions(RuntimeError):
    """manim-voiceover wanted to ask something on stdin; onepass never lets it."""


def _no_extras(target_module, extras: str, dependent_item: str) -> None:
    names = [target_module] if isinstance(target_module, str) else list(target_module)
    try:
        for name in names:
            importlib.import_module(name)
    except ImportError:
        raise NoQuestions(f"{dependent_item} needs the '{extras}' extra: "
                          f'pip install "manim-voiceover[{extras}]"') from None


def _no_package(target_module: str, package_name: str) -> None:
    try:
        importlib.import_module(target_module)
    except ImportError:
        raise NoQuestions(f"{package_name} is not installed: pip install {package_name}") from None


def _no_dotenv(required_variable_names, dotenv=".env") -> bool:
    raise NoQuestions("credentials missing: set " + ", ".join(required_variable_names)
                      + " in the environment (onepass never writes a .env file by asking)")


def _no_input(*_args, **_kwargs):
    raise NoQuestions("manim-voiceover tried to read an answer from stdin; onepass never lets it")


REPLACEMENTS = {
    "prompt_ask_missing_extras": _no_extras,
    "prompt_ask_missing_package": _no_package,
    "create_dotenv_file": _no_dotenv,
}


def install() -> None:
    """Patch every loaded manim_voiceover module; idempotent."""
    import manim_voiceover.helper  # noqa: F401  (make sure the helper itself is patched)
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "manim_voiceover" or name.startswith("manim_voiceover.")):
            continue
        for attr, replacement in REPLACEMENTS.items():
            if hasattr(module, attr):
                setattr(module, attr, replacement)
        # a module-level `input` shadows the builtin for code in that module only
        module.input = _no_input


def service_class(kind: str) -> type:
    """manim-voiceover's service class for network voice `kind` (a key of NETWORK_CLASSES), its
    modules patched never to ask; ImportError where the plugin cannot load it."""
    module_name, class_name = NETWORK_CLASSES[kind]
    install()                               # before the service module binds the helpers
    module = importlib.import_module(module_name)
    install()                               # and the modules it imported
    return getattr(module, class_name)
