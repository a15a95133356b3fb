"""Domain errors of the assignment app: raised by services, importers and exporters.

Every error here is something the user can fix (a bad file, an unknown project); callers turn it
into their own kind of failure: a management command into ``CommandError`` (exit status 1), a
view into a form error. Programming errors stay ``ValueError`` / ``TypeError``.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousProjectError",
    "AnswersError",
    "DomainError",
    "ExportError",
    "ImportValidationError",
    "ProjectAlreadyExistsError",
    "ProjectNotFoundError",
    "ProjectValidationError",
    "QualityEstimationError",
    "RunLimitError",
    "RunStateError",
    "RunValidationError",
    "UserNotFoundError",
    "full_clean_or_raise",
]


class DomainError(Exception):
    """Base class: a failure the user caused and can correct; ``str()`` says how."""


class ImportValidationError(DomainError):
    """A data file was rejected; nothing of it was written.

    ``line`` (1-based, the line the row starts on) and ``column`` (the column's name in the
    header, or the JSON key) are None when the problem is not in one line or one column (an
    encoding, the size, a missing column of the header, pairs missing from a quality matrix).
    ``item`` is the row's object in a JSON file (1-based, in file order), which tells rows apart
    on one line (``json.dumps`` writes a whole list on one); None for CSV and outside rows.

    >>> str(ImportValidationError("workers.csv", 7, "max_tasks", "must be a non-negative integer"))
    'workers.csv, line 7, column max_tasks: must be a non-negative integer'
    >>> str(ImportValidationError("w.json", 1, "max_tasks", "must be ...", item=3))
    'w.json, line 1, object 3, column max_tasks: must be ...'
    """

    def __init__(
        self,
        file: str,
        line: int | None,
        column: str | None,
        message: str,
        *,
        item: int | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.item = item
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.file]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.item is not None:
            where.append(f"object {self.item}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {self.message}"


class UserNotFoundError(DomainError):
    """No user has the given username."""


class ProjectNotFoundError(DomainError):
    """No project has the given name (for the given owner)."""


class AmbiguousProjectError(DomainError):
    """Several owners have a project of that name; the owner must be given."""


class ProjectAlreadyExistsError(DomainError):
    """The owner already has a project of that name."""


class ProjectValidationError(DomainError):
    """A project's fields are invalid (an empty name, a label set that is not a label set)."""


class QualityEstimationError(DomainError):
    """The project lacks what a quality estimate needs (workers, tasks, gold or collected
    answers), has a label outside its label set, or the estimate's options do not fit its
    source (a model, or a fitted strength, for the wrong source)."""


class AnswersError(DomainError):
    """The collected answers cannot be read against the quality matrix (a worker or task
    without quality, a label outside the project's label set)."""


class ExportError(DomainError):
    """The requested export cannot be produced (unknown kind, nothing to export)."""


class RunValidationError(DomainError):
    """A run request is invalid (unknown method, bad option, no quality matrix)."""


class RunLimitError(DomainError):
    """The owner has as many runs queued or running as one user may; wait for some to end."""


class RunStateError(DomainError):
    """The run's status does not allow the operation (e.g. cancelling a finished run)."""


def full_clean_or_raise(instance, error: type[DomainError], **options) -> None:
    """``instance.full_clean(**options)``, its Django ``ValidationError`` raised as ``error``
    (a :class:`DomainError`) that names each field's problems: ``"field: message; ..."``."""
    from django.core.exceptions import ValidationError

    try:
        instance.full_clean(**options)
    except ValidationError as exc:
        problems = "; ".join(
            f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items()
        )
        raise error(problems) from None
