"""README is a short front page and the guides live in docs/ (issue 50 item 5): every relative link in
README.md and docs/*.md opens a file that exists, at a heading that exists; every page in docs/ is
reachable from README; every `docs/X.md` a page names exists; README stays a five-minute read."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")


def _unfenced(text: str) -> str:
    """The text outside fenced code blocks (where a '#' line is a comment, not a heading)."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)


def _prose(text: str) -> str:
    """The text outside code blocks and inline code, where a link is a link."""
    return re.sub(r"`[^`\n]*`", "", _unfenced(text))


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without markup, lower case, punctuation dropped
    (letters, digits, '-' and '_' kept, in any script), each space a '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _unfenced(page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    return [target for _, target in LINK.findall(_prose(page.read_text(encoding="utf-8")))
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]          # http:, https:, mailto: are not ours


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_opens_a_file_and_a_heading_that_exist(page):
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_docs_page_a_page_names_exists(page):
    named = set(re.findall(r"\bdocs/[\w-]+\.md\b", page.read_text(encoding="utf-8")))
    assert sorted(n for n in named if not (ROOT / n).exists()) == []


def test_every_guide_in_docs_is_linked_from_readme():
    readme = ROOT / "README.md"
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in relative_links(readme)}
    assert sorted(p.name for p in PAGES[1:] if p.resolve() not in linked) == []


def test_readme_is_a_five_minute_read_with_the_two_commands_on_top():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 180, "README grew: move the guide into docs/ and link it"
    top = text.split("```", 2)[1]
    assert "make render CHAPTER=02" in top and "make test " in top


def test_the_checker_sees_a_broken_link_and_a_missing_heading(tmp_path):
    (tmp_path / "a.md").write_text("# Where files go\n\n## Caches, and `out/`\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#caches-and-out) [gone](c.md) [no heading](a.md#speed) "
                    "[self](#top) `[code](x.md)` [web](https://example.org/x.md)\n\n# Top\n", encoding="utf-8")
    got = broken_links(page)
    assert [g.split(":")[0] for g in got] == ["c.md", "a.md#speed"]
