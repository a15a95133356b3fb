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
