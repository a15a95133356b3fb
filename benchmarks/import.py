"""Time and peak memory of importing gold answers, against a bare ``csv`` parse of the same file.

What it measures
----------------
In a temporary directory it writes ``--workers`` workers, ``--items`` gold items and a CSV of
``--rows`` gold answers (distinct random (worker, item) pairs, answers "0"/"1"; 1,000,000 rows
by default, about 20 MB). Then, each in a fresh child process (this script re-invoked with a
hidden ``--child`` flag):

* ``parse``: ``csv.reader`` over the file opened as UTF-8 text, counting rows -- the floor any
  CSV import pays;
* ``import``: ``django.setup()`` on its own database, ``migrate``, a user and a project, the
  workers and gold items imported (not timed); then the timed part,
  :func:`assignment.services.project_data_import` of the gold-answer file: read, validate,
  resolve ids, check duplicates and upsert in batches, in one transaction.

Each child reports its wall time and its peak resident memory above the baseline it had just
before the timed part (Linux: the peak mark is reset through ``/proc/self/clear_refs``; elsewhere
``ru_maxrss`` above the baseline, which can read low). The table gives both and the ratio
import / parse.

The database is SQLite, a file in the temporary directory, unless ``DATABASE_URL`` is set to a
PostgreSQL URL: then a scratch database ``tvcs_bench_import_<pid>`` is created next to it (the
role needs CREATEDB) and dropped at the end.

Run from the repository root::

    python benchmarks/import.py                        # 1,000,000 rows, SQLite, ~1-2 min
    python benchmarks/import.py --rows 100000          # quick check
    DATABASE_URL=postgres://tvcs:tvcs@127.0.0.1:5432/tvcs python benchmarks/import.py
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.child_runs import memory_mib, reset_peak_memory  # noqa: E402

# --------------------------------------------------------------------------------------------
# Data


def write_files(directory: Path, *, rows: int, workers: int, items: int, seed: int) -> None:
    if rows > workers * items:
        raise SystemExit(f"--rows {rows} exceeds --workers x --items = {workers * items} pairs")
    rng = np.random.default_rng(seed)
    with open(directory / "workers.csv", "w", encoding="utf-8", newline="") as out:
        out.write("worker_id,name,max_tasks\n")
        out.writelines(f"worker-{i:05d},Worker {i},\n" for i in range(workers))
    with open(directory / "gold_items.csv", "w", encoding="utf-8", newline="") as out:
        out.write("item_id,category,true_label\n")
        out.writelines(f"item-{k:06d},c{k % 5},{k % 2}\n" for k in range(items))
    pairs = rng.choice(workers * items, size=rows, replace=False)
    answers = rng.integers(0, 2, rows)
    with open(directory / "gold_answers.csv", "w", encoding="utf-8", newline="") as out:
        out.write("worker_id,item_id,answer\n")
        for start in range(0, rows, 100_000):
            chunk = pairs[start : start + 100_000]
            w, k = np.divmod(chunk, items)
            out.writelines(
                f"worker-{a:05d},item-{b:06d},{c}\n"
                for a, b, c in zip(
                    w.tolist(), k.tolist(), answers[start : start + 100_000].tolist(), strict=True
                )
            )


# --------------------------------------------------------------------------------------------
# Children


def child_parse(path: Path) -> dict:
    baseline = reset_peak_memory()
    start = time.perf_counter()
    with open(path, encoding="utf-8", newline="") as f:
        rows = sum(1 for _ in csv.reader(f)) - 1
    seconds = time.perf_counter() - start
    return {"rows": rows, "seconds": seconds, "peak_mib": memory_mib()[0] - baseline}


def child_import(directory: Path) -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from assignment.models import GoldAnswer
    from assignment.services import project_create, project_data_import

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create_user("bench")
    project = project_create(owner=owner, name="bench")
    for kind in ("workers", "gold_items"):
        with open(directory / f"{kind}.csv", "rb") as f:
            project_data_import(project=project, kind=kind, file=f, file_name=f"{kind}.csv")
    path = directory / "gold_answers.csv"
    baseline = reset_peak_memory()
    start = time.perf_counter()
    with open(path, "rb") as f:
        result = project_data_import(
            project=project, kind="gold_answers", file=f, file_name=path.name
        )
    seconds = time.perf_counter() - start
    peak = memory_mib()[0] - baseline
    stored = GoldAnswer.objects.filter(worker__project=project).count()
    return {
        "rows": result.rows,
        "stored": stored,
        "seconds": seconds,
        "peak_mib": peak,
        "database": connection.vendor,
    }


def run_child(what: str, directory: Path, env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", what, "--dir", str(directory)],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------
# PostgreSQL scratch database


def _postgres_admin(url: str):
    import psycopg2

    parts = urlsplit(url)
    conn = psycopg2.connect(
        dbname=parts.path.lstrip("/"),
        user=parts.username,
        password=parts.password,
        host=parts.hostname,
        port=parts.port,
    )
    conn.autocommit = True
    return conn


def scratch_database(url: str) -> tuple[str, str]:
    """Create a scratch database beside ``url``'s; return ``(its URL, its name)``."""
    name = f"tvcs_bench_import_{os.getpid()}"
    conn = _postgres_admin(url)
    with conn.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    conn.close()
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}")), name


def drop_database(url: str, name: str) -> None:
    conn = _postgres_admin(url)
    with conn.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
    conn.close()


# --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2_000)
    parser.add_argument("--items", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", choices=["parse", "import"], help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child == "parse":
        print(json.dumps(child_parse(args.dir / "gold_answers.csv")))
        return
    if args.child == "import":
        print(json.dumps(child_import(args.dir)))
        return

    url = os.environ.get("DATABASE_URL", "")
    postgres = url.startswith(("postgres://", "postgresql://"))
    with tempfile.TemporaryDirectory(prefix="tvcs-bench-import-") as tmp:
        directory = Path(tmp)
        start = time.perf_counter()
        write_files(
            directory, rows=args.rows, workers=args.workers, items=args.items, seed=args.seed
        )
        size = (directory / "gold_answers.csv").stat().st_size
        print(
            f"{args.rows:,} gold answers of {args.workers:,} workers on {args.items:,} items: "
            f"{size / 2**20:.1f} MiB CSV, written in {time.perf_counter() - start:.1f} s"
        )
        env = {
            **os.environ,
            "TVCS_DATA_DIR": str(directory),
            "TVCS_LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
        scratch = None
        if postgres:
            env["DATABASE_URL"], scratch = scratch_database(url)
        else:
            env["DATABASE_URL"] = f"sqlite:///{directory / 'bench.sqlite3'}"
        try:
            parse = run_child("parse", directory, env)
            imported = run_child("import", directory, env)
        finally:
            if scratch:
                drop_database(url, scratch)

    assert parse["rows"] == args.rows, parse
    assert imported["rows"] == imported["stored"] == args.rows, imported
    ratio = imported["seconds"] / parse["seconds"]
    print(f"Python {platform.python_version()}, {platform.machine()}, {imported['database']}")
    print()
    print("| step | seconds | rows/s | peak memory above baseline |")
    print("|---|---|---|---|")
    for name, result in (("bare csv parse", parse), ("import (validate + upsert)", imported)):
        print(
            f"| {name} | {result['seconds']:.2f} | {args.rows / result['seconds']:,.0f} | "
            f"{result['peak_mib']:.1f} MiB |"
        )
    print()
    print(f"import / parse time ratio: {ratio:.1f}")


if __name__ == "__main__":
    main()
