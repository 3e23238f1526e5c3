"""The documentation holds together: every relative link in README.md and docs/*.md points to
a file that exists, every link's #anchor to a heading of its page, and no tracked file
points outside the repository to the rule text the project was started from (the rules
live in docs/rules.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

from tests.helpers import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# [text](target) and ![alt](target), and reference definitions "[name]: target".
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", flags=re.M)
FENCED_CODE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", flags=re.M | re.S)
URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", flags=re.I)
# Spelled in pieces, so that this file does not match itself.
FORBIDDEN = ("../" + "shared", "RULES" + ".md")


def _without_code(text: str) -> str:
    """The page with fenced code blocks and inline code removed (links there are not links)."""
    return re.sub(r"`[^`\n]*`", "", FENCED_CODE.sub("", text))


def _targets(page: Path) -> list[str]:
    text = _without_code(page.read_text())
    return INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text)


def _relative_targets(page: Path) -> list[str]:
    return [t for t in _targets(page) if not (URL_SCHEME.match(t) or t.startswith("#"))]


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped (word
    characters, hyphens and spaces kept), spaces as hyphens, "-1", "-2" for repeats."""
    text = FENCED_CODE.sub("", page.read_text())
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        repeat, candidate = 0, slug
        while candidate in anchors:
            repeat += 1
            candidate = f"{slug}-{repeat}"
        anchors.add(candidate)
    return anchors


def test_every_relative_link_points_to_an_existing_file() -> None:
    broken = []
    for page in PAGES:
        for target in _relative_targets(page):
            path = unquote(target.split("#", 1)[0].split("?", 1)[0])
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to missing files:\n" + "\n".join(broken)


def test_every_anchor_names_a_heading_of_its_page() -> None:
    broken, known = [], {}
    for page in PAGES:
        for target in _targets(page):
            if URL_SCHEME.match(target) or "#" not in target:
                continue
            name, anchor = target.split("#", 1)
            linked = (page.parent / unquote(name)).resolve() if name else page
            if linked.suffix != ".md" or not linked.is_file():
                continue
            if linked not in known:
                known[linked] = _anchors(linked)
            if anchor not in known[linked]:
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to headings that do not exist:\n" + "\n".join(broken)


def test_no_tracked_file_points_outside_the_repository_to_the_rules() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    offenders = []
    for name in listed.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:  # binary (images, Parquet)
            continue
        text = data.decode("utf-8", errors="replace")
        for needle in FORBIDDEN:
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in line:
                    offenders.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not offenders, (
        "these lines mention the rule text outside the repository; cite docs/rules.md:\n"
        + "\n".join(offenders)
    )
