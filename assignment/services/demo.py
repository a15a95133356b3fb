"""The demo user and the demo project that ``runproduct`` starts with."""

from __future__ import annotations

import io
import logging
import secrets
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from assignment.models import (
    Project,
)
from assignment.services.projects import project_create, project_data_import
from assignment.services.quality import quality_estimate

logger = logging.getLogger(__name__)


#: The demo user's password, kept in the data folder (readable by its owner only) so that it
#: stays the same across restarts of ``runproduct``.
DEMO_PASSWORD_FILE = "demo-password"


def demo_user_ensure(*, password_file: Path, username: str = "demo") -> tuple:
    """The demo user and its password, the same on every call.

    The first call creates the user with a random password and writes it to
    ``password_file`` (mode 0600); later calls read it back. If the user's password was
    changed since (in the admin), it is left alone and the password returned is None.
    """
    user, created = get_user_model().objects.get_or_create(username=username)
    if password_file.exists() and not created:
        password = password_file.read_text(encoding="utf-8").strip()
        return user, password if user.check_password(password) else None
    password = secrets.token_urlsafe(12)
    password_file.touch(mode=0o600)
    password_file.write_text(password + "\n", encoding="utf-8")
    user.set_password(password)
    user.save(update_fields=["password"])
    logger.info("demo user %r: new password in %s", username, password_file)
    return user, password


def demo_project_create(
    *, owner, name: str = "figure-4 demo", n_workers: int = 100, n_tasks: int = 1000, seed: int = 0
) -> Project:
    """A project shaped like the paper's Figure 4, filled through the real import path.

    ``n_workers`` workers and ``n_tasks`` tasks in 5 categories; every worker answers 20 gold
    questions per category with an accuracy drawn uniformly from [0.5, 0.9] per (worker,
    category); the quality matrix is then estimated from those gold answers. Caps follow the
    figure at ratio 0.03: 3 workers per task, 30 tasks per worker, budget 80% of the caps.
    Returns the existing project if ``owner`` already has one called ``name``.
    """
    existing = Project.objects.filter(owner=owner, name=name).first()
    if existing is not None:
        return existing
    rng = np.random.default_rng(seed)
    categories = [f"c{k}" for k in range(5)]
    per_task = max(1, round(0.03 * n_workers))
    per_worker = max(1, round(0.03 * n_tasks))
    accuracy = rng.uniform(0.5, 0.9, (n_workers, len(categories)))
    items = [
        (f"g{c}-{k}", c, str(rng.integers(0, 2))) for c in range(len(categories)) for k in range(20)
    ]

    def rows(header: str, lines) -> io.BytesIO:
        return io.BytesIO(("\n".join([header, *lines]) + "\n").encode())

    answers = []
    for i in range(n_workers):
        for item_id, c, label in items:
            right = rng.random() < accuracy[i, c]
            answers.append(f"w{i},{item_id},{label if right else str(1 - int(label))}")
    with transaction.atomic():
        project = project_create(
            owner=owner, name=name, description="Demo data shaped like Figure 4 of the TVCS paper"
        )
        project.default_max_workers_per_task = per_task
        project.default_max_tasks_per_worker = per_worker
        project.default_budget = int(0.8 * min(n_tasks * per_task, n_workers * per_worker))
        project.save()
        files = [
            ("workers", rows("worker_id", (f"w{i}" for i in range(n_workers)))),
            (
                "tasks",
                rows(
                    "task_id,category",
                    (f"t{j},{categories[j % len(categories)]}" for j in range(n_tasks)),
                ),
            ),
            (
                "gold_items",
                rows(
                    "item_id,category,true_label",
                    (f"{item_id},{categories[c]},{label}" for item_id, c, label in items),
                ),
            ),
            ("gold_answers", rows("worker_id,item_id,answer", answers)),
        ]
        for kind, data in files:
            project_data_import(project=project, kind=kind, file=data, file_name=f"{kind}.csv")
        quality_estimate(project=project)
    logger.info("created the demo project %s", project.pk)
    return project
