"""python manage.py assign --project NAME (--method M | --compare | --withdraw RUN | --hand-out RUN)
[--budget B] [--round] ...

Computes runs synchronously in this process (no Celery worker needed), stores them like any
other run, and prints the result; ``--compare`` runs every method as one comparison (the one
the pages and the API show) and prints a table.
``--round`` makes it the project's next round: it conditions on the answers collected so far
(``--target-posterior`` and ``--target-accuracy`` are its stopping rules). ``--hand-out RUN``
hands a comparison's run out (the project then counts it as a round) and ``--withdraw RUN``
withdraws a round that was not handed out after all (``services.run_hand_out``,
``services.run_withdraw``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import time

from django.core.management.base import BaseCommand, CommandError

from assignment import services
from assignment.engine import method_spec
from assignment.errors import RunStateError
from assignment.lookups import project_get_by_name
from assignment.management.commands._arguments import non_negative, positive
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.models import AssignmentRun, Comparison, Method, RunStatus


def _number(text: str) -> float:
    """A finite number; its range is the service's to check (it names the bound)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


#: Seconds between two progress lines of a long computation.
PROGRESS_EVERY = 5.0

#: The options of a run to compute, which --hand-out and --withdraw do not take.
_RUN_OPTIONS = (
    "budget",
    "max_workers_per_task",
    "max_tasks_per_worker",
    "round",
    "target_posterior",
    "rounds_left",
    "target_accuracy",
    "option",
    "seed",
)


def _method_options(method: str, given: list[str]) -> dict:
    """``method``'s options from ``--option NAME=VALUE`` texts, each parsed by the engine's
    registry (:meth:`~assignment.engine.options.Option.parse`); the services check them again
    with the rest of the run."""
    known = {option.name: option for option in method_spec(method).options}
    parsed = {}
    for text in given:
        name, equals, value = text.partition("=")
        name = name.strip()
        if not equals:
            raise CommandError(f"--option {text!r}: write NAME=VALUE, e.g. max_iter=20")
        if name not in known:
            valid = ", ".join(known) or "none"
            raise CommandError(
                f"--option {name}: {method} has no such option (its options: {valid})"
            )
        try:
            parsed[name] = known[name].parse(value)
        except ValueError as exc:
            raise CommandError(f"--option {name}: {exc}") from exc
    return parsed


def _caps_seed_and_round(options: dict) -> dict:
    """The keyword arguments ``services.run_create`` and ``comparison_create`` share, from the
    command's flags: caps, seed and the round's, computed here (not queued)."""
    return {
        "max_workers_per_task": options["max_workers_per_task"],
        "max_tasks_per_worker": options["max_tasks_per_worker"],
        "seed": 0 if options["seed"] is None else options["seed"],
        "next_round": options["round"],
        "target_posterior": options["target_posterior"],
        "target_accuracy": options["target_accuracy"],
        "rounds_left": options["rounds_left"],
        "enqueue": False,
    }


def _options_help() -> str:
    """Each method's options with their defaults and bounds, from the engine's registry."""
    methods = []
    for method in Method.values:
        options = method_spec(method).options
        listed = "; ".join(f"{o.name} ({json.dumps(o.default)}: {o.describe()})" for o in options)
        methods.append(f"{method}: {listed or 'none'}")
    return "Options (default: what it takes): " + ". ".join(methods).replace("%", "%%")


@contextlib.contextmanager
def _terminate_interrupts():
    """SIGTERM (``kill``, a stopped container or job) interrupts the computation as Ctrl-C
    does: the run is cancelled, not left running for the stale-run sweep to hand to a worker."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C or SIGTERM (:func:`_terminate_interrupts`), also when it
    reached us wrapped: raised inside a numba kernel it comes out as a ``SystemError`` whose
    cause is the ``KeyboardInterrupt``."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _cancel_unfinished(runs: list[AssignmentRun]) -> list[int]:
    """Cancel those of ``runs`` still queued or running (the command computes them here, so
    nobody else will): their ids."""
    cancelled = []
    for run in runs:
        try:
            services.run_cancel(run=run)
        except RunStateError:
            continue
        cancelled.append(run.pk)
    return cancelled


class Command(BaseCommand):
    help = (
        "Compute an assignment of the project now, in this process and in one piece (runs in "
        "shards are the API's and the pages'), and print it: one method, or --compare for all "
        "of them side by side; or hand out a comparison's run (--hand-out) or withdraw a round "
        "(--withdraw). Ctrl-C cancels the run it is computing; a long one prints its progress "
        "every few seconds."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="NAME")
        parser.add_argument(
            "--owner", metavar="USERNAME", help="the project's owner, if several have that name"
        )
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--method", choices=Method.values)
        which.add_argument(
            "--compare",
            action="store_true",
            help="run every method as one comparison (shown on its page), with the upper bound; "
            "none of its runs counts as handed out until --hand-out",
        )
        which.add_argument(
            "--hand-out",
            type=positive,
            metavar="RUN_ID",
            help="hand out the project's comparison run RUN_ID: the project counts it as a "
            "round from now on (its unanswered pairs pending: budget, caps, never assigned "
            "again); refused if the project changed since in a way that makes it infeasible",
        )
        which.add_argument(
            "--withdraw",
            type=positive,
            metavar="RUN_ID",
            help="withdraw the project's round RUN_ID (or comparison run handed out) whose pairs "
            "were not handed out after all: later rounds stop counting them as pending",
        )
        parser.add_argument("--budget", type=non_negative)
        parser.add_argument("--max-workers-per-task", type=non_negative)
        parser.add_argument("--max-tasks-per-worker", type=non_negative)
        parser.add_argument("--seed", type=non_negative, help="default 0")
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="with --method: one of the method's options (repeat for more), e.g. "
            "--option max_iter=20 --option time_limit=60; true/false for a switch, null for "
            f"none. {_options_help()}",
        )
        parser.add_argument(
            "--round",
            action="store_true",
            help="the next round: condition on the answers collected so far; --budget is then "
            "this round's (default: what remains of the project's budget)",
        )
        parser.add_argument(
            "--target-posterior",
            type=_number,
            metavar="P",
            help="with --round: tasks whose likeliest label has a posterior of at least P "
            "(in (1/K, 1] for K labels: above 0.5 for two) get nobody",
        )
        parser.add_argument(
            "--rounds-left",
            type=positive,
            metavar="R",
            help="with --round: rounds to go, this one included; above 1 the round plans them "
            "all with --budget and takes its share in layers (default 1: the last round)",
        )
        parser.add_argument(
            "--target-accuracy",
            type=_number,
            metavar="A",
            help="with --round: refuse the round once the answers' expected accuracy is A",
        )

    def handle(self, *args, **options):
        self._runs: list[AssignmentRun] = []  # the runs this command created, to cancel
        try:
            with _terminate_interrupts():
                self._handle(**options)
        except BaseException as exc:  # Ctrl-C or SIGTERM anywhere: no run left for a worker
            if not _interrupted(exc):
                raise
            cancelled = _cancel_unfinished(self._runs)
            said = ", ".join(str(pk) for pk in cancelled)
            raise CommandError(
                "interrupted"
                + (f": run {said} is cancelled" if len(cancelled) == 1 else "")
                + (f": runs {said} are cancelled" if len(cancelled) > 1 else "")
            ) from None

    def _handle(self, *, project, owner, method, compare, hand_out, withdraw, **options):
        with domain_errors_as_command_errors():
            target = project_get_by_name(name=project, owner_username=owner)
            if hand_out is not None or withdraw is not None:
                self._hand_out_or_withdraw(target, hand_out, withdraw, options)
                return
            if compare and options["option"]:
                raise CommandError("--option is for one --method: methods take different options")
            if compare:
                comparison, runs = self._compare(target, options)
            else:
                method_options = _method_options(method, options["option"])
                run = self._computed(self._create(target, method, options, method_options))
        if compare:
            self._print_comparison(comparison, runs)
            return
        self._print_round_start(run)
        self.stdout.write(
            f"Run {run.pk} ({run.method}): expected accuracy {run.expected_accuracy:.4f}, "
            f"{run.n_assigned:,} assignments of budget {run.budget:,}, {run.seconds:.2f} s. "
            f"Download: python manage.py export_assignment --run {run.pk}"
        )
        if run.n_assigned < run.budget:  # why fewer, in the method's words (as the API's)
            self.stdout.write(f"Fewer pairs than the budget: {run.progress_message}")

    def _hand_out_or_withdraw(self, project, hand_out, withdraw, options) -> None:
        given = [name for name in _RUN_OPTIONS if options[name] not in (None, False, [])]
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise CommandError(f"--hand-out and --withdraw take no run options: {flags}")
        run_id = withdraw if hand_out is None else hand_out
        run = AssignmentRun.objects.filter(project=project, pk=run_id).first()
        if run is None:
            raise CommandError(f"project {project.name!r} has no run {run_id}")
        if hand_out is not None:
            run = services.run_hand_out(run=run)
            self.stdout.write(
                f"Run {run.pk} ({run.method}, comparison #{run.comparison_id}) handed out: the "
                f"project counts it as a round from now on, its {run.n_assigned:,} pairs pending "
                "(budget, caps, never assigned again) until their answers come in. Undo with "
                f"--withdraw {run.pk} if its workers did not get it."
            )
            return
        run = services.run_withdraw(run=run)
        self.stdout.write(
            f"Run {run.pk} ({run.method}) withdrawn: later rounds no longer count its unanswered "
            "pairs as pending and may assign them; answers already in for them still count."
        )

    def _create(self, project, method, options, method_options) -> AssignmentRun:
        run = services.run_create(
            project=project,
            method=method,
            options=method_options,
            budget=options["budget"],
            **_caps_seed_and_round(options),
        )
        self._runs.append(run)
        return run

    def _compare(self, project, options) -> tuple[Comparison, list[AssignmentRun]]:
        """Every method side by side as one comparison (the pages' and the API's): with
        ``--round``, every run from the same answers in hand, none counted until one is
        handed out (``--hand-out``); then the upper bound at its budget."""
        comparison = services.comparison_create(
            project=project,
            methods=list(Method.values),
            budgets=[] if options["budget"] is None else [options["budget"]],
            **_caps_seed_and_round(options),
        )
        runs = list(comparison.runs.order_by("pk"))
        self._runs.extend(runs)
        try:
            runs = [self._computed(run) for run in runs]
        except CommandError:
            left = _cancel_unfinished(runs)
            if left:
                ids = ", ".join(str(pk) for pk in left)
                self.stderr.write(f"cancelled the comparison's runs not computed: {ids}")
            raise
        self.stderr.write("computing the upper bound ...")
        services.comparison_upper_bound_compute(comparison_id=comparison.pk)
        comparison.refresh_from_db()
        return comparison, runs

    def _computed(self, run: AssignmentRun) -> AssignmentRun:
        """``run`` claimed and computed in this process; a CommandError unless it succeeds."""
        if not services.run_claim(run_id=run.pk):
            raise CommandError(f"run {run.pk} was taken by another process")
        self.stderr.write(f"computing {run.method} ...")
        done = services.run_execute(  # Ctrl-C: handle() cancels the run
            run_id=run.pk, on_progress=self._progress_printer()
        )
        if done is None or done.status != RunStatus.SUCCEEDED:
            reason = "deleted" if done is None else f"{done.status}: {done.error}"
            raise CommandError(f"the {run.method} run did not succeed ({reason})")
        return done

    def _progress_printer(self):
        """A progress hook that prints the run's progress to stderr at most every
        :data:`PROGRESS_EVERY` seconds: long runs say how far they are, short ones stay quiet."""
        last = [time.monotonic()]

        def printed(percent: int, message: str) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY:
                last[0] = now
                self.stderr.write(f"  {percent:>2}% {message}")

        return printed

    def _print_round_start(self, run: AssignmentRun) -> None:
        """What a next round started from (nothing for a whole-project run)."""
        if not run.next_round:
            return
        start = run.round_start
        self.stdout.write(
            f"Next round from {start['answers']:,} answers: expected accuracy "
            f"{start['accuracy_now']:.4f} now, {start['open_tasks']:,} of "
            f"{start['tasks']:,} tasks open."
        )
        if start.get("pending"):
            self.stdout.write(
                f"{start['pending']:,} pairs of earlier rounds await their answers: counted "
                "as spent (budget, caps, not assigned again); the expected accuracy leaves "
                "their answers out, so it is conservative."
            )

    def _print_comparison(self, comparison: Comparison, runs: list[AssignmentRun]) -> None:
        self._print_round_start(runs[0])  # every run of a comparison starts from the same
        self.stdout.write(
            f"{'method':<10} {'accuracy':>10} {'assigned':>9} {'budget':>9} {'seconds':>8}  run"
        )
        for run in runs:
            self.stdout.write(
                f"{run.method:<10} {run.expected_accuracy:>10.4f} {run.n_assigned:>9,} "
                f"{run.budget:>9,} {run.seconds:>8.2f}  {run.pk}"
            )
        bound = comparison.upper_bound
        if bound.get("status") == "done":
            self.stdout.write(f"{'bound':<10} {bound['points'][0][1]:>10.4f}")
        for run in runs:
            if run.n_assigned < run.budget:
                self.stdout.write(
                    f"{run.method}: fewer pairs than the budget: {run.progress_message}"
                )
        self.stdout.write(
            f"Comparison {comparison.pk}: none of its runs is handed out; give one to the "
            "workers with --hand-out RUN_ID (the project then counts it as a round)."
        )
