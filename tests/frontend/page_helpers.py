"""Helpers of the page tests: the sample files, and computing a queued run in-process."""

from __future__ import annotations

from pathlib import Path

from assignment import services
from assignment.importers import KINDS

SAMPLES = Path(__file__).resolve().parents[2] / "frontend" / "static" / "frontend" / "samples"


def sample_path(kind: str) -> Path:
    return SAMPLES / f"{kind}.csv"


def fill_from_samples(project, kinds=KINDS) -> None:
    """Import the sample file of each of ``kinds`` (all, in the order a project is filled)."""
    for kind in kinds:
        with sample_path(kind).open("rb") as file:
            services.project_data_import(
                project=project, kind=kind, file=file, file_name=f"{kind}.csv"
            )


def execute(run_id: int) -> None:
    """What a worker does with a queued run."""
    assert services.run_claim(run_id=run_id)
    services.run_execute(run_id=run_id)
