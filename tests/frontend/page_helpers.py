"""Helpers of the page tests: the sample files, and computing a queued run in-process."""

from __future__ import annotations

import io

from assignment import services
from assignment.importers import KINDS
from frontend.samples import sample_text


def sample_bytes(kind: str, labels=("0", "1"), *, format: str = "csv") -> bytes:
    """The data page's sample file of ``kind`` in ``format`` for a project of ``labels``."""
    return sample_text(kind, list(labels), format=format).encode()


def fill_from_samples(project, kinds=KINDS, *, format: str = "csv") -> None:
    """Import the sample file of each of ``kinds`` (all, in the order a project is filled)
    in ``format``."""
    for kind in kinds:
        services.project_data_import(
            project=project,
            kind=kind,
            file=io.BytesIO(sample_bytes(kind, project.labels, format=format)),
            file_name=f"{kind}.{format}",
        )


def execute(run_id: int) -> None:
    """What a worker does with a queued run."""
    assert services.run_claim(run_id=run_id)
    services.run_execute(run_id=run_id)


def form_inputs(page: str, form_index: int = -1) -> dict[str, str]:
    """What a browser sends for the ``form_index``-th form of ``page`` left as it is: its
    inputs' and text areas' names and values (checked boxes and radios only; no buttons)."""
    from html.parser import HTMLParser

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.forms: list[dict[str, str]] = []
            self.area: str | None = None

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "form":
                self.forms.append({})
            elif self.forms and tag == "input" and attrs.get("name"):
                kind = attrs.get("type", "text")
                if kind in ("checkbox", "radio") and "checked" not in attrs:
                    return
                if kind not in ("submit", "button"):
                    self.forms[-1][attrs["name"]] = attrs.get("value") or ""
            elif self.forms and tag == "textarea":
                self.area = attrs["name"]
                self.forms[-1][self.area] = ""

        def handle_endtag(self, tag):
            if tag == "textarea":
                self.area = None

        def handle_data(self, data):
            if self.area:
                self.forms[-1][self.area] += data.removeprefix("\n")

    reader = Reader()
    reader.feed(page)
    return reader.forms[form_index]
