"""Helpers of the API tests: data files, clients with tokens, uploads, synchronous runs."""

from __future__ import annotations

import io

from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from assignment import services

WORKERS_CSV = "worker_id,name,max_tasks\n" + "".join(f"w{i},W{i},\n" for i in range(1, 7))
TASKS_CSV = "task_id,category,max_workers,prior\n" + "".join(
    f"t{j},{'birds' if j % 2 else 'cars'},,\n" for j in range(1, 11)
)
GOLD_ITEMS_CSV = "item_id,category,true_label\ng1,birds,1\ng2,birds,0\ng3,cars,1\ng4,cars,0\n"
GOLD_ANSWERS_CSV = "worker_id,item_id,answer\n" + "".join(
    f"w{i},g{k},{answer}\n"
    for i in range(1, 7)
    for k, answer in enumerate(("1", "0", "1", "0") if i % 3 else ("0", "0", "1", "1"), start=1)
)
ANSWERS_CSV = "worker_id,task_id,answer\nw1,t1,1\nw2,t1,1\nw3,t1,0\nw1,t2,0\nw4,t3,1\n"


def client_for(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def upload(client: APIClient, project_id: int, kind: str, content: str | bytes, name=None):
    data = content.encode("utf-8") if isinstance(content, str) else content
    file = SimpleUploadedFile(name or f"{kind}.csv", data, content_type="text/csv")
    return client.post(
        f"/api/projects/{project_id}/data/{kind}/", {"file": file}, format="multipart"
    )


def fill_project(project) -> None:
    """Workers, tasks, gold items and answers, an estimated quality matrix, answers."""
    for kind, text in (
        ("workers", WORKERS_CSV),
        ("tasks", TASKS_CSV),
        ("gold_items", GOLD_ITEMS_CSV),
        ("gold_answers", GOLD_ANSWERS_CSV),
        ("answers", ANSWERS_CSV),
    ):
        services.project_data_import(
            project=project, kind=kind, file=io.BytesIO(text.encode()), file_name=f"{kind}.csv"
        )
    services.quality_estimate(project=project)


def execute(run_id: int):
    """What the Celery task does, here and now."""
    assert services.run_claim(run_id=run_id)
    return services.run_execute(run_id=run_id)
