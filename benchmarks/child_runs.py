"""One solve in a process of its own: its time and peak memory, and the report's header.

Shared by the benchmarks that compare methods by memory (``budgets.py``, ``scale.py``). A
benchmark script runs itself with ``--child SPEC`` (:func:`run_child`); the child builds its
instance, calls :func:`measure_solve` and prints :func:`result_line`. Memory is the peak
resident set size during the solve minus the resident set size just before it, with the
instance built: Linux's ``VmHWM`` after resetting it (``echo 5 > /proc/self/clear_refs``). Not
``getrusage(RUSAGE_SELF).ru_maxrss``: in a child started by fork + exec it keeps the parent's
peak from before the exec, and it would also hold the kernels' compilation peak. Where
``clear_refs`` cannot be written, ``ru_maxrss`` is used instead and the row says so.
"""

from __future__ import annotations

import gc
import importlib.metadata
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT_PREFIX = "CHILD-RESULT "  # the child's result line on stdout
BASELINE_PREFIX = "CHILD-BASELINE "  # the child's line just before it starts the solve


def proc_status_kb(field: str, pid: int | str = "self") -> int | None:
    """A ``kB`` field of ``/proc/PID/status`` (``VmRSS``, ``VmHWM``), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_peak() -> bool:
    """Reset Linux's peak RSS (VmHWM) to the current RSS; False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return proc_status_kb("VmHWM") is not None


def ru_maxrss_kb() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes on macOS, KiB on Linux


def memory_mib() -> tuple[float, float]:
    """Return ``(peak, current)`` resident memory of this process in MiB."""
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024
    except OSError:  # not Linux: ru_maxrss is the best available (KiB on Linux, bytes on macOS)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return peak, peak


def reset_peak_memory() -> float:
    """Reset the peak-RSS mark where Linux allows it; return the baseline in MiB."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return memory_mib()[0]  # no reset: measure above the peak so far (may read too low)
    return memory_mib()[1]


def solve_fields(result, wall_seconds: float) -> dict:
    """The fields of a results row that one solve gives: its ``SolveResult``'s accuracy, standard
    error, seconds (wall clock and CPU), iterations, pairs and message, and the call's
    ``wall_seconds``."""
    return {
        "expected_accuracy": result.expected_accuracy,
        "accuracy_standard_error": result.accuracy_standard_error,
        "seconds": result.seconds,
        "cpu_seconds": result.cpu_seconds,
        "wall_seconds": wall_seconds,
        "iterations": result.iterations,
        "n_assigned": result.n_assigned,
        "message": result.message,
    }


def measure_solve(problem, *, method: str, seed: int, options: dict | None = None) -> dict:
    """``solve(problem, method=..., seed=...)`` with its time and peak memory: the measured
    fields of a results row. Call it in the child, with the instance built."""
    from assignment.engine.solve import solve

    gc.collect()
    hwm = reset_peak()
    baseline_kb = proc_status_kb("VmRSS") if hwm else ru_maxrss_kb()
    # for the parent, should it have to stop this process: RSS before and when the solve began
    baseline = {"baseline_kb": baseline_kb, "hwm": hwm, "time": time.time()}
    print(BASELINE_PREFIX + json.dumps(baseline), flush=True)
    start = time.perf_counter()
    res = solve(problem, method=method, seed=seed, **(options or {}))
    wall = time.perf_counter() - start
    peak_kb = proc_status_kb("VmHWM") if hwm else ru_maxrss_kb()
    extra = max(0, peak_kb - baseline_kb) * 1024
    import assignment

    return {
        **solve_fields(res, wall),
        "peak_method": "VmHWM" if hwm else "ru_maxrss",
        "baseline_rss_mb": baseline_kb / 1024,
        "peak_rss_mb": peak_kb / 1024,
        "extra_mb": extra / 2**20,
        "bytes_per_pair": extra / (problem.n_workers * problem.n_tasks),
        "ru_maxrss_mb": ru_maxrss_kb() / 1024,
        "engine": str(Path(assignment.__file__).resolve().parent),
    }


def result_line(result: dict) -> str:
    """What the child prints last: the parent reads its result from it."""
    return RESULT_PREFIX + json.dumps(result)


def run_child(script: Path, spec: dict, timeout: float, *, n_pairs: int) -> dict:
    """Run ``script --child SPEC`` in a new process; its result, or ``RuntimeError``.

    A child still running after ``timeout`` seconds is stopped; if its solve had started, the
    result is a timed-out row: no accuracy, the solve's time so far as ``seconds_at_least`` and
    its memory so far (the peak read from ``/proc/PID/status`` before stopping it) as lower
    bounds.
    """
    cmd = [sys.executable, str(script), "--child", json.dumps(spec)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        hwm_kb = proc_status_kb("VmHWM", proc.pid)
        stopped = time.time()
        proc.kill()
        stdout, stderr = proc.communicate()
        for line in stdout.splitlines():
            if line.startswith(BASELINE_PREFIX):
                base = json.loads(line[len(BASELINE_PREFIX) :])
                break
        else:
            raise RuntimeError(f"timed out after {timeout:g} s before the solve began") from None
        extra = None
        if base["hwm"] and hwm_kb is not None:
            extra = max(0, hwm_kb - base["baseline_kb"]) * 1024
        return {
            "timed_out": True,
            "expected_accuracy": None,
            "seconds": None,
            "seconds_at_least": stopped - base["time"],
            "message": f"stopped after {timeout:g} s (--timeout)",
            "peak_method": "VmHWM at the stop" if extra is not None else None,
            "baseline_rss_mb": base["baseline_kb"] / 1024,
            "extra_mb": None if extra is None else extra / 2**20,
            "bytes_per_pair": None if extra is None else extra / n_pairs,
            "engine": str(ROOT / "assignment"),
        }
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX) :])
    tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
    raise RuntimeError(f"child exited with {proc.returncode}: {tail}")


def code_version() -> str | None:
    """``git describe``-style commit of the checkout (``-dirty`` if it has local changes)."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def header(
    title: str,
    argv: list[str],
    load: tuple[float, float, float] | None,
    packages: tuple[str, ...] = ("numpy", "scipy", "numba"),
) -> list[str]:
    """The report's first lines: the command, the commit, versions and the machine."""
    command = shlex.join([Path(sys.executable).name, *argv])
    versions = ", ".join(f"{p} {version(p)}" for p in packages)
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cpus = f"{os.cpu_count()} CPUs"
    if hasattr(os, "sched_getaffinity"):
        cpus += f" ({len(os.sched_getaffinity(0))} usable)"
    load_text = "" if load is None else ", load average {:.2f} {:.2f} {:.2f} at start".format(*load)
    commit = code_version()
    return [
        f"# {title}",
        "",
        f"- command: `{command}`" + (f" (commit {commit})" if commit else ""),
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- python {platform.python_version()}, {versions}",
        f"- machine: {platform.platform()}, {cpu}, {cpus}{load_text}",
        "",
    ]
