"""Every reference to the design document points at a section it has (docs/design.md)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
SOURCES = ("projections", "assignment", "frontend", "config", "benchmarks", "tests")
REFERENCE = re.compile(r"docs/design\.md#([\w-]+)")
IN_DOCUMENT = re.compile(r"\]\(#([\w-]+)\)")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors() -> set[str]:
    text = DESIGN.read_text(encoding="utf-8")
    return {anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def references() -> dict[str, set[str]]:
    files = [ROOT / "README.md", *(p for d in SOURCES for p in (ROOT / d).rglob("*.py"))]
    found = {}
    for path in files:
        names = set(REFERENCE.findall(path.read_text(encoding="utf-8")))
        if names:
            found[str(path.relative_to(ROOT))] = names
    return found


def test_the_anchor_rule_matches_github():
    assert anchor("Data flow: from upload to assignment") == "data-flow-from-upload-to-assignment"
    assert anchor("Random and q-lp") == "random-and-q-lp"
    assert anchor("K labels (one-coin)") == "k-labels-one-coin"


def test_code_and_readme_refer_to_sections_the_design_document_has():
    found = references()
    assert len(found) >= 5  # the engine's modules and the README refer to it
    known = anchors()
    broken = {path: sorted(names - known) for path, names in found.items() if names - known}
    assert not broken


def test_the_design_document_links_only_to_its_own_sections():
    links = set(IN_DOCUMENT.findall(DESIGN.read_text(encoding="utf-8")))
    assert links
    assert links <= anchors()


def test_nothing_refers_to_the_design_notes_outside_the_repository():
    files = [ROOT / "README.md", DESIGN, *(p for d in SOURCES for p in (ROOT / d).rglob("*.py"))]
    outside = [
        str(p.relative_to(ROOT))
        for p in files
        if p != Path(__file__).resolve()
        and re.search(r"DESIGN\.md|\.\./shared/", p.read_text("utf-8"))
    ]
    assert not outside
