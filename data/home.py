"""Where onepass writes: the one module that decides it.

    from onepass.data import home
    home.output_root()        # ./out under the current folder (as manim's media/); --out overrides
    home.bundles_dir()        # extracted bundles
    home.voice_cache_dir()    # spoken clips, by voice kind
    home.label_cache_dir()    # built text labels (None: "off")
    home.source_memo_path()   # memo of facts read from source files (None: "off")
    home.voices_dir()         # voices onepass fetched or was given to keep
    home.TEMP_PREFIXES        # every temporary-folder prefix onepass uses (the clean-ups read them)

Caches live in one folder, `cache_root()`: $ONEPASS_CACHE, else the platform's user cache
folder ($XDG_CACHE_HOME/onepass or ~/.cache/onepass on Linux, ~/Library/Caches/onepass on
macOS, %LOCALAPPDATA%\\onepass\\Cache on Windows). Nothing is written inside the installed
package. The older, narrower settings still work and win over the root: $ONEPASS_VOICE_CACHE,
$ONEPASS_LABEL_CACHE and $ONEPASS_SOURCE_CACHE (the last two also take "off").
Every function reads the environment when called (a test or a caller may change it).
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

APP = "onepass"
CACHE_ENV = "ONEPASS_CACHE"                 # the root of every cache below
VOICE_CACHE_ENV = "ONEPASS_VOICE_CACHE"     # spoken clips only
LABELS_ENV = "ONEPASS_LABEL_CACHE"          # built labels only; "off": none
SOURCES_ENV = "ONEPASS_SOURCE_CACHE"        # source memo only; "off": none

# Temporary folders: every prefix onepass names one with, and who removes what a killed run left.
# In the system temp folder, named with their owner's process id (`<prefix>[<tag>-]p<PID>-`), removed
# once that process is gone (onepass.data.files.remove_dead_owned, called by the next build's clean-up,
# film/make/build.py remove_leftovers, and by the next process that makes one of the same kind):
ALIGN_PREFIX = "onepass-align-"             # voiceover/align.py: aeneas's working folder
MEDIA_PREFIX = "onepass-media-"             # film/run/media.py: manim's media folder of a scene render
CHROMIUM_TEMP = "onepass-chromium-tmp-"     # film/kit/handout.py: Chromium's own TMPDIR while it prints
NETWORK_PREFIX = "onepass-net-"             # voiceover/services.py: a network voice's downloads
OWNED_PREFIXES = (ALIGN_PREFIX, MEDIA_PREFIX, CHROMIUM_TEMP, NETWORK_PREFIX)
# In an output folder (or its .scenes/, clips/, stills/), removed by the next run into it
# (film/make/build.py remove_leftovers, which holds the folder's lock):
STAGE_PREFIX = "onepass-scene-"             # film/run/runner.py: a scene render until it is checked
JOIN_PREFIX = "onepass-join-"               # voiceover/mixdown.py: a chapter's scenes joined
CONCAT_PREFIX = "onepass-concat-"           # voiceover/mixdown.py: narration concatenated
BURN_PREFIX = "onepass-burn-"               # voiceover/mixdown.py: captions burnt in
FILM_PREFIX = "onepass-film-"               # film/run/join.py: the whole film joined
HANDOUT_PREFIX = "onepass-handout-"         # film/kit/handout.py: a handout's page, images and Chromium's profile
OUTPUT_PREFIXES = (STAGE_PREFIX, MEDIA_PREFIX, JOIN_PREFIX, CONCAT_PREFIX, FILM_PREFIX, BURN_PREFIX,
                   HANDOUT_PREFIX)          # MEDIA_PREFIX: where older versions kept manim's media folders
STILLS_CUT = "-stills-"     # film/kit/handout.py writes stills/.chNN-stills-* first
CLIP_CUT = "-cut-"          # film/kit/clips.py cuts into clips/.chNN-cut-*
# In the system temp folder for the few seconds of one call, removed by the `with` that made them:
ESPEAK_PREFIX = "onepass-espeak-"           # voiceover/services.py
FESTIVAL_PREFIX = "onepass-festival-"       # voiceover/services.py
PASSING_PREFIXES = (ESPEAK_PREFIX, FESTIVAL_PREFIX)
# Inside one of the folders above, removed with it:
CHROMIUM_PROFILE = "onepass-chromium-"      # film/kit/handout.py: the browser's profile, in the handout's folder
INNER_PREFIXES = (CHROMIUM_PROFILE,)
TEMP_PREFIXES = OWNED_PREFIXES + OUTPUT_PREFIXES + PASSING_PREFIXES + INNER_PREFIXES


def owner(*prefixes: str):
    """For onepass.data.files.remove_dead_owned: a function of a folder name that matches
    `<prefix>[<hex tag>-]p<PID>-<random>` for one of `prefixes` (group 1: the owner's process id)."""
    return re.compile(rf"(?:{'|'.join(map(re.escape, prefixes))})(?:[0-9a-f]+-)?p([0-9]+)-").match


def _platform_cache() -> Path:
    """The user's cache folder by the platform's convention."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"    # the spec: a relative one is ignored


def cache_root() -> Path:
    """$ONEPASS_CACHE, else onepass's folder in the user's cache folder."""
    setting = os.environ.get(CACHE_ENV, "")
    if setting:
        return Path(setting).expanduser().absolute()
    base = _platform_cache()
    return base / APP / "Cache" if os.name == "nt" else base / APP


def output_root() -> Path:
    """Where renders go unless --out says otherwise: out/ under the current folder."""
    return Path.cwd() / "out"


def bundles_dir() -> Path:
    """Extracted bundles (data/extract.py), one folder each."""
    return cache_root() / "bundles"


def voice_cache_dir() -> Path:
    """Spoken clips (voiceover/services.py), one folder per voice kind: $ONEPASS_VOICE_CACHE, else
    voices' clips under cache_root()."""
    setting = os.environ.get(VOICE_CACHE_ENV, "")
    return Path(setting).expanduser().absolute() if setting else cache_root() / "voice"


def _switchable(env: str, name: str) -> Path | None:
    setting = os.environ.get(env, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting).expanduser().absolute()
    return cache_root() / name


def label_cache_dir() -> Path | None:
    """Built labels (onepass.scenes.text.Shelf): $ONEPASS_LABEL_CACHE, else labels/ under cache_root();
    None when that setting is "off"."""
    return _switchable(LABELS_ENV, "labels")


def source_memo_path() -> Path | None:
    """The memo of facts read from source files (film/plan/source_memo.py): $ONEPASS_SOURCE_CACHE, else
    sources/ under cache_root(); None when that setting is "off"."""
    return _switchable(SOURCES_ENV, "sources")


def tokenizers_dir() -> Path:
    """Tokenizers onepass built from a model file (a GGUF's, as tokenizer.json: data, never code)."""
    return cache_root() / "tokenizers"


def dequantized_dir() -> Path:
    """A GGUF file's weights as transformers dequantized them (float32 safetensors, about 4 bytes a
    parameter: 540 MB for SmolLM2-135M), so a second extraction reads them instead of the GGUF file."""
    return cache_root() / "dequantized"


def voices_dir() -> Path:
    """Voice models onepass keeps for the user (downloaded or installed voices)."""
    return cache_root() / "voices"
