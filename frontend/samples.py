"""The data page's sample files, CSV and JSON, written in the project's own labels.

One small project in every kind, consistent across kinds (4 workers, 6 tasks in 2 categories,
4 gold items answered by every worker), so that a project manager can upload the six files in
order and get a quality matrix, runs and labels. Labels are given here by their position in the
project's label set; a position past its end (the third label, in a binary project) is the first
label, so a binary project's samples use ``labels[0]`` and ``labels[1]`` alone and a project of
more labels sees a third one too. A task's own prior is P(second label) in a binary project and
a distribution over every label in a project of more (:mod:`assignment.priors`).

The rows are built once with typed values (None for a blank cell, numbers, objects) and written
as the importer reads each format: CSV cells as text (an object as its JSON text), JSON as a
list of objects with the same keys, one a line, numbers as numbers and blanks as null.
"""

from __future__ import annotations

import csv
import io
import json

from assignment.data_files import FORMATS
from assignment.importers import KINDS

_WORKERS = [("w1", "Ana", None), ("w2", "Ben", 3), ("w3", "Chen", None), ("w4", "Dara", 2)]
#: (task, category, max_workers, (position of the label it leans to, its probability) or None,
#: payload)
_TASKS = [
    ("t1", "birds", None, None, {"url": "https://example.org/images/1.jpg"}),
    ("t2", "birds", 2, None, None),
    ("t3", "birds", None, (0, 0.7), None),
    ("t4", "cars", None, None, None),
    ("t5", "cars", None, None, None),
    ("t6", "cars", 1, (1, 0.6), None),
]
_GOLD_ITEMS = [("g1", "birds", 1), ("g2", "birds", 0), ("g3", "cars", 1), ("g4", "cars", 2)]
_GOLD_ANSWERS = [
    ("w1", [1, 0, 1, 1]),
    ("w2", [1, 1, 1, 0]),
    ("w3", [0, 0, 1, 2]),
    ("w4", [1, 0, 0, 2]),
]
_ANSWERS = [
    ("w1", "t1", 1),
    ("w2", "t1", 1),
    ("w3", "t1", 0),
    ("w1", "t2", 0),
    ("w4", "t2", 0),
    ("w2", "t4", 1),
    ("w3", "t4", 1),
    ("w3", "t5", 2),
    ("w4", "t6", 1),
]
_QUALITY = {
    "w1": (0.85, 0.7),
    "w2": (0.6, 0.8),
    "w3": (0.55, 0.9),
    "w4": (0.75, 0.65),
}


def _label(labels: list[str], position: int) -> str:
    return labels[position] if position < len(labels) else labels[0]


def _prior(labels: list[str], leaning) -> float | dict[str, float] | None:
    """A task's own prior: none, P(second label), or a distribution over the labels."""
    if leaning is None:
        return None
    position, probability = leaning
    if len(labels) == 2:
        return probability if position == 1 else round(1.0 - probability, 4)
    share = round((1.0 - probability) / (len(labels) - 1), 4)
    others = [label for label in labels if label != labels[position]]
    shares = {label: share for label in others[:-1]}
    shares[others[-1]] = round(1.0 - probability - share * (len(others) - 1), 4)
    return {labels[position]: probability, **shares}


def _rows(kind: str, labels: list[str]) -> tuple[list[str], list[tuple]]:
    """The header and rows of ``kind``'s sample in ``labels``, with typed values."""
    if kind == "workers":
        return ["worker_id", "name", "max_tasks"], _WORKERS
    if kind == "tasks":
        rows = [
            (task, category, cap, _prior(labels, leaning), payload)
            for task, category, cap, leaning, payload in _TASKS
        ]
        return ["task_id", "category", "max_workers", "prior", "payload"], rows
    if kind == "gold_items":
        rows = [(item, category, _label(labels, p)) for item, category, p in _GOLD_ITEMS]
        return ["item_id", "category", "true_label"], rows
    if kind == "gold_answers":
        items = [item for item, _, _ in _GOLD_ITEMS]
        rows = [
            (worker, item, _label(labels, p))
            for worker, positions in _GOLD_ANSWERS
            for item, p in zip(items, positions, strict=True)
        ]
        return ["worker_id", "item_id", "answer"], rows
    if kind == "answers":
        rows = [(worker, task, _label(labels, p)) for worker, task, p in _ANSWERS]
        return ["worker_id", "task_id", "answer"], rows
    if kind == "quality":
        categories = ("birds", "cars")
        rows = [
            (worker, category, q)
            for worker, qualities in _QUALITY.items()
            for category, q in zip(categories, qualities, strict=True)
        ]
        return ["worker_id", "category", "quality"], rows
    raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


def _csv_cell(value: object) -> str:
    """A typed value as the CSV importer reads it: blank, a number, an object's JSON text."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def sample_text(kind: str, labels: list[str], *, format: str) -> str:
    """The sample file of ``kind`` for a project whose label set is ``labels``, as text in
    ``format`` (``"csv"`` or ``"json"``)."""
    header, rows = _rows(kind, labels)
    if format == "json":
        objects = (json.dumps(dict(zip(header, row, strict=True))) for row in rows)
        return "[\n" + ",\n".join(objects) + "\n]\n"
    if format != "csv":
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_csv_cell(value) for value in row] for row in rows)
    return text.getvalue()
