"""Forms of the pages: they check types and shapes, and hand the values to the services.

The rules (a prior strictly between 0 and 1, a method's option bounds, the most runs a
comparison may queue) live in the services and the engine; a form only turns text into the
arguments those take. Method options come from the engine's registry
(:func:`assignment.engine.method_spec`), so a new option appears here by itself.
"""

from __future__ import annotations

import csv

import numpy as np
from django import forms
from django.contrib.auth.forms import AuthenticationForm

from assignment.data_files import FORMATS
from assignment.engine import METHODS, Option, method_spec
from assignment.engine.answer_quality import MODELS
from assignment.engine.quality import DEFAULT_CATEGORY_STRENGTH, DEFAULT_WORKER_STRENGTH
from assignment.models import (
    MAX_COUNT,
    MAX_ROUNDS_LEFT,
    MAX_SEED,
    MAX_SHARDS,
    EstimateSource,
    Project,
)
from assignment.services.quality import EM_MAX_ITERATIONS
from assignment.services.rounds import target_posterior_refusal
from assignment.sign_in import LockoutFormMixin


def _count(label: str, help_text: str = "", *, required: bool = False) -> forms.IntegerField:
    return forms.IntegerField(
        label=label, required=required, min_value=0, max_value=MAX_COUNT, help_text=help_text
    )


def add_service_error(form: forms.Form, error: Exception) -> None:
    """A service's refusal on ``form``: beside the field it names first (``default_prior is
    ...``, ``default_label_prior: ...``), in the field's label, else above the form."""
    message = str(error)
    for name in form.fields:
        text = _in_words(form, name, message)
        if text:
            form.add_error(name, text)
            return
    form.add_error(None, message)


def _in_words(form: forms.Form, name: str, message: str) -> str:
    """A service's ``message`` about field ``name`` (``name is ...``, ``name: ...``) said in
    the field's label; "" when it is not about that field."""
    for separator in (": ", " "):
        if message.startswith(name + separator):
            rest = message[len(name) + len(separator) :]
            if separator == ": ":
                return rest[:1].upper() + rest[1:]
            return f"{form.fields[name].label} {rest}"
    return ""


class SignInForm(LockoutFormMixin, AuthenticationForm):
    """Django's sign-in form that says so when the account or address is locked."""


def _comma_split(text: str) -> list[str]:
    """``a, "b, c", d`` -> ``["a", "b, c", "d"]``: items separated by commas, an item with a
    comma (or a quote) in double quotes, as in a CSV row."""
    try:
        return [item.strip() for item in next(csv.reader([text], skipinitialspace=True), [])]
    except csv.Error as exc:
        raise forms.ValidationError(f"write the items on one line ({exc})") from None


def _comma_join(items) -> str:
    """The text :func:`_comma_split` reads back as ``items``."""
    return ", ".join(
        '"' + item.replace('"', '""') + '"' if "," in item or '"' in item else item
        for item in items
    )


class LabelPriorField(forms.CharField):
    """A distribution over the labels, written ``cat=0.5, dog=0.3, bird=0.2``: a mapping label
    -> probability for the services to check (:mod:`assignment.priors`), None when empty."""

    def prepare_value(self, value):
        if isinstance(value, dict):
            return _comma_join(f"{label}={p:g}" for label, p in value.items())
        return value

    def to_python(self, value):
        text = super().to_python(value)
        if not text:
            return None
        mapping = {}
        for part in _comma_split(text):
            label, equals, number = part.rpartition("=")
            label = label.strip()
            try:
                probability = float(number)
            except ValueError:
                probability = None
            if not equals or not label or probability is None:
                raise forms.ValidationError(
                    f"write each label and its probability as label=probability, separated by "
                    f"commas (e.g. cat=0.5, dog=0.3, bird=0.2; a label with a comma in double "
                    f'quotes: "a, b"=0.2); {part!r} is not that'
                )
            if label in mapping:
                raise forms.ValidationError(f"the label {label!r} is given twice")
            mapping[label] = probability
        return mapping


class ProjectDefaultsForm(forms.Form):
    default_prior = forms.FloatField(
        label="Default prior",
        help_text="Two labels: P(label = the second label) for tasks without a prior of their "
        "own, strictly between 0 and 1.",
    )
    default_label_prior = LabelPriorField(
        label="Default prior over the labels",
        required=False,
        max_length=4000,
        help_text="More than two labels: each label's probability for tasks without a prior of "
        "their own, e.g. cat=0.5, dog=0.3, bird=0.2 (summing to 1); empty = uniform.",
    )
    default_max_workers_per_task = _count(
        "Workers per task (default cap)",
        "Tasks can have their own cap in the tasks file.",
        required=True,
    )
    default_max_tasks_per_worker = _count(
        "Tasks per worker (default cap)",
        "Workers can have their own cap in the workers file.",
        required=True,
    )
    default_budget = _count(
        "Default budget", "Total (worker, task) pairs; empty = as many as the caps allow."
    )


def _model_default(name: str):
    """The default of a :class:`~assignment.models.Project` field (the model holds them)."""
    return Project._meta.get_field(name).get_default()


class ProjectCreateForm(ProjectDefaultsForm):
    name = forms.CharField(label="Name", max_length=200)
    description = forms.CharField(
        label="Description", required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    labels = forms.CharField(
        label="Label set",
        max_length=2000,
        help_text="Comma-separated, at least two (a label with a comma in double quotes). The "
        "second is the one a prior gives the probability of. Fixed once the project exists.",
    )

    field_order = ["name", "description", "labels"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in (
            "default_prior",
            "default_max_workers_per_task",
            "default_max_tasks_per_worker",
        ):
            self.fields[name].initial = _model_default(name)
        self.fields["labels"].initial = _comma_join(_model_default("labels"))
        self.fields["default_prior"].required = False  # required for two labels only: clean

    def clean_labels(self) -> list[str]:
        return _comma_split(self.cleaned_data["labels"])

    def clean(self) -> dict:
        """The prior of the project's label set: ``default_prior`` for two labels (required),
        ``default_label_prior`` for more. For more, the two-label box is not passed on: left
        as it was or emptied it is ignored, and another value typed into it is refused rather
        than dropped."""
        data = super().clean()
        labels = data.get("labels")
        if labels is None:
            return data
        if len(labels) == 2 and data.get("default_prior") is None:
            self.add_error("default_prior", "Required for a project of two labels.")
        elif len(labels) > 2:
            typed = data.get("default_prior")
            if typed is not None and typed != self.get_initial_for_field(
                self.fields["default_prior"], "default_prior"
            ):
                self.add_error(
                    "default_prior",
                    f"For two labels only; this project has {len(labels)}: give the default "
                    "prior over the labels instead.",
                )
            data["default_prior"] = None
        return data


class ProjectSettingsForm(ProjectDefaultsForm):
    """A project's settings: of the two priors, the one its label set takes."""

    name = forms.CharField(label="Name", max_length=200)
    description = forms.CharField(
        label="Description", required=False, widget=forms.Textarea(attrs={"rows": 3})
    )

    field_order = ["name", "description"]

    def __init__(self, *args, labels: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        del self.fields["default_label_prior" if len(labels) == 2 else "default_prior"]
        # Each value as the page showed it goes back with the form, so that changed_data is
        # what this page changed: a save does not undo another tab's change of another field.
        for field in self.fields.values():
            field.show_hidden_initial = True


class UploadForm(forms.Form):
    file = forms.FileField(label="File", allow_empty_file=True)
    format = forms.ChoiceField(
        label="Format",
        choices=[("", "from the file name"), *((f, f.upper()) for f in FORMATS)],
        required=False,
    )


class StrengthField(forms.CharField):
    """A shrinkage strength: a positive number, or ``auto`` to fit it."""

    def to_python(self, value):
        text = super().to_python(value).strip().lower()
        if text == "auto":
            return text
        try:
            number = float(text)
        except ValueError:
            raise forms.ValidationError('Enter a positive number or "auto".') from None
        if not np.isfinite(number) or number <= 0:
            raise forms.ValidationError('Enter a positive number or "auto".')
        return number


_MODEL_TITLES = {
    "one-coin": "one-coin: one accuracy per worker and category",
    "dawid-skene": "Dawid\u2013Skene: a confusion matrix per worker",
}


class QualityEstimateForm(forms.Form):
    source = forms.ChoiceField(
        label="Learn from",
        widget=forms.RadioSelect,
        choices=EstimateSource.choices,
        initial=EstimateSource.GOLD.value,
        required=False,
        help_text="Gold answers are counted. Collected answers are fitted by EM, each task's true "
        "label unknown; with both, gold items enter the EM as tasks whose truth is known.",
    )
    model = forms.ChoiceField(
        label="Worker model (EM)",
        widget=forms.RadioSelect,
        # The engine's MODELS are the choices; a model it adds shows by its name.
        choices=[(m, _MODEL_TITLES.get(m, m)) for m in MODELS],
        initial=MODELS[0],
        required=False,
        help_text="Used when learning from collected answers (or both); an estimate from gold "
        "answers alone counts them, with no model.",
    )
    worker_strength = StrengthField(
        label="Worker strength",
        initial=f"{DEFAULT_WORKER_STRENGTH:g}",
        help_text="Prior pseudo-answers pulling a worker's accuracy towards the population's: "
        'larger trusts a worker\'s few answers less. "auto" fits it to the gold answers '
        "(when learning from gold only).",
    )
    category_strength = StrengthField(
        label="Category strength",
        initial=f"{DEFAULT_CATEGORY_STRENGTH:g}",
        help_text="Prior pseudo-answers pulling a worker's accuracy on one category towards "
        'that worker\'s overall accuracy. "auto" fits it (gold only).',
    )
    max_iterations = forms.IntegerField(
        label="EM iterations at most",
        required=False,
        min_value=1,
        max_value=100_000,
        help_text=f"When learning from collected answers (or both); empty = "
        f"{EM_MAX_ITERATIONS}. An estimate that has not converged by then is stored all the "
        "same, and the page says so: raise this to let it converge.",
    )

    def clean(self) -> dict:
        """A worker model other than the default chosen for an estimate from gold answers is
        refused, as the API refuses any: counting gold answers has no model."""
        data = super().clean()
        gold = (data.get("source") or EstimateSource.GOLD.value) == EstimateSource.GOLD
        if gold and "model" in self.changed_data and data.get("model"):
            self.add_error(
                "model",
                "An estimate from gold answers counts them, with no worker model: learn from "
                "collected answers (or both) to use this model.",
            )
        if gold and data.get("max_iterations") is not None:
            self.add_error(
                "max_iterations",
                "An estimate from gold answers counts them, with no EM to bound: learn from "
                "collected answers (or both), or leave this empty.",
            )
        return data

    def estimate_arguments(self) -> dict:
        """The keyword arguments of ``services.quality_estimate``: the source (gold when not
        given), the model and the bound on iterations only for an estimate by EM, and the
        strengths."""
        data = self.cleaned_data
        source = data.get("source") or EstimateSource.GOLD.value
        arguments = {
            "source": source,
            "worker_strength": data["worker_strength"],
            "category_strength": data["category_strength"],
        }
        if source != EstimateSource.GOLD:
            arguments["model"] = data.get("model") or MODELS[0]
            arguments["max_iterations"] = data.get("max_iterations")
        return arguments


def _shown(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "none" if value is None else f"{value:g}"


def _option_field(option: Option) -> forms.Field:
    """A form field for one method option, its default as the initial value."""
    label = option.name.replace("_", " ").capitalize()
    help_text = f"{option.help} {option.describe().capitalize()}; default {_shown(option.default)}."
    if option.kind is bool:
        return forms.TypedChoiceField(
            label=label,
            choices=[("true", "yes"), ("false", "no")],
            coerce=lambda value: value == "true",
            initial="true" if option.default else "false",
            help_text=help_text,
        )
    field = forms.IntegerField if option.kind is int else forms.FloatField
    return field(
        label=label,
        required=not option.nullable,
        initial=option.default,
        help_text=help_text,
    )


def option_field_name(method: str, option: str) -> str:
    """The form field of ``option`` of ``method`` (every method's options are on the form)."""
    return f"{method}__{option}"


class _CapsForm(forms.Form):
    max_workers_per_task = _count("Workers per task", "Empty = the project's default.")
    max_tasks_per_worker = _count("Tasks per worker", "Empty = the project's default.")
    seed = forms.IntegerField(
        label="Seed",
        required=False,
        min_value=0,
        max_value=MAX_SEED,
        help_text="The same seed gives the same assignment; empty = a random one.",
    )
    shards = forms.IntegerField(
        label="Shards",
        required=False,
        min_value=1,
        max_value=MAX_SHARDS,
        help_text=f"Solve the tasks in this many shards on separate workers, coordinated by "
        f"prices: for projects too large for one machine (at most {MAX_SHARDS}; empty or 1 = "
        f"one worker).",
    )


class _RoundForm(forms.Form):
    """The next-round fields of the run and comparison forms, for a project of ``n_labels``
    labels (the bound of a target posterior depends on it)."""

    next_round = forms.BooleanField(
        label="Next round",
        required=False,
        help_text="Condition on the answers collected so far: each task's current posterior is "
        "its prior, answered pairs are not assigned again and the caps count the answers.",
    )
    target_posterior = forms.FloatField(
        label="Target posterior",
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Next round only: tasks whose likeliest label is at least this likely get "
        "nobody (above 1/K for K labels: 0.5 for two, 1/3 for three; at most 1; empty = none).",
    )
    target_accuracy = forms.FloatField(
        label="Target accuracy",
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Next round only: refuse the round once the answers' expected accuracy "
        "reaches this (empty = none).",
    )

    rounds_left = forms.IntegerField(
        label="Rounds to go",
        required=False,
        min_value=1,
        max_value=MAX_ROUNDS_LEFT,
        help_text="Next round only: how many rounds remain, this one included. Above 1 the "
        "round plans them all and takes its share in layers; empty or 1 = the last round.",
    )

    def __init__(self, *args, n_labels: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.n_labels = n_labels

    def clean_target_posterior(self) -> float | None:
        """The services' one rule of a target posterior (above 1/K for K labels)."""
        value = self.cleaned_data.get("target_posterior")
        refusal = target_posterior_refusal(value, n_labels=self.n_labels)
        if refusal:
            raise forms.ValidationError(_in_words(self, "target_posterior", refusal) or refusal)
        return value

    def clean_target_accuracy(self) -> float | None:
        value = self.cleaned_data.get("target_accuracy")
        if value is not None and value <= 0.0:
            raise forms.ValidationError("Must be above 0.")
        return value

    def round_arguments(self) -> dict:
        """The round's keyword arguments of ``services.run_create`` / ``comparison_create``."""
        data = self.cleaned_data
        given = {
            name: data[name]
            for name in ("target_posterior", "target_accuracy", "rounds_left")
            if data.get(name) is not None
        }
        return {"next_round": data.get("next_round", False), **given}


class RunForm(_RoundForm, _CapsForm):
    method = forms.ChoiceField(label="Method", widget=forms.RadioSelect)
    budget = _count(
        "Budget",
        "Total (worker, task) pairs; empty = the project's default (for a next round: what "
        "remains of it after the answers collected).",
    )
    field_order = ["method", "budget"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["method"].choices = [(m, method_spec(m).title) for m in METHODS]
        self.fields["method"].initial = METHODS[0]
        for method in METHODS:
            for option in method_spec(method).options:
                self.fields[option_field_name(method, option.name)] = _option_field(option)

    def option_fields(self, method: str) -> list[forms.BoundField]:
        """The bound fields of ``method``'s options, for the template."""
        return [self[option_field_name(method, o.name)] for o in method_spec(method).options]

    def full_clean(self) -> None:
        # Only the chosen method's options are read; the others may be left empty.
        chosen = self.data.get("method") if self.is_bound else None
        for method in METHODS:
            for option in method_spec(method).options:
                if method != chosen:
                    self.fields[option_field_name(method, option.name)].required = False
        super().full_clean()

    def run_arguments(self) -> dict:
        """The keyword arguments of ``services.run_create``: options that differ from their
        defaults, and the caps, budget and seed that were given."""
        data = self.cleaned_data
        method = data["method"]
        options = {}
        for option in method_spec(method).options:
            value = data.get(option_field_name(method, option.name))
            if option.kind is float and value is not None:
                value = float(value)
            if value != option.default:
                options[option.name] = value
        given = {
            name: data[name]
            for name in ("budget", "max_workers_per_task", "max_tasks_per_worker", "seed", "shards")
            if data.get(name) is not None
        }
        return {"method": method, "options": options, **given, **self.round_arguments()}


class ComparisonForm(_RoundForm, _CapsForm):
    methods = forms.MultipleChoiceField(
        label="Methods", widget=forms.CheckboxSelectMultiple, initial=list(METHODS)
    )
    budget_mode = forms.ChoiceField(
        label="Budgets",
        widget=forms.RadioSelect,
        choices=[("list", "a list"), ("range", "from A to B in N steps")],
        initial="range",
    )
    budgets = forms.CharField(
        label="Budget list",
        required=False,
        help_text="Comma-separated positive integers, e.g. 500, 1000, 2000.",
    )
    budget_from = _count("From (A)", "All three empty = the project's default budget.")
    budget_to = _count("To (B)")
    budget_steps = forms.IntegerField(label="Steps (N)", required=False, min_value=1, max_value=60)

    field_order = ["methods", "budget_mode", "budgets", "budget_from", "budget_to", "budget_steps"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["methods"].choices = [(m, f"{m}: {method_spec(m).title}") for m in METHODS]
        self.note = ""  # what the page should say of the budgets it made (fewer than asked)

    def clean(self) -> dict:
        data = super().clean()
        if data.get("budget_mode") == "list":
            data["budget_values"] = self._listed(data.get("budgets") or "")
        elif data.get("budget_mode") == "range":
            data["budget_values"] = self._range(
                data.get("budget_from"), data.get("budget_to"), data.get("budget_steps")
            )
        return data

    def _listed(self, text: str) -> list[int]:
        budgets = []
        for part in filter(None, (p.strip() for p in text.split(","))):
            if not part.isdigit() or not 1 <= int(part) <= MAX_COUNT:
                self.add_error("budgets", f"{part!r} is not an integer from 1 to {MAX_COUNT:,}.")
                return []
            budgets.append(int(part))
        if not budgets:
            self.add_error("budgets", "Give at least one budget.")
        return budgets

    def _range(self, low: int | None, high: int | None, steps: int | None) -> list[int]:
        """The budgets from ``low`` to ``high`` in ``steps``; none (the project's default
        budget, for the services) when the three are left empty."""
        names = ("budget_from", "budget_to", "budget_steps")
        if any(self.has_error(name) for name in names):  # a value out of bounds: said already
            return []
        given = [value is not None for value in (low, high, steps)]
        if not any(given):
            return []
        if not all(given):
            missing = [self.fields[n].label for n, g in zip(names, given, strict=True) if not g]
            self.add_error(
                names[given.index(False)],
                f"Give {' and '.join(missing)} too, or leave A, B and N all empty for one run "
                "per method at the project's default budget.",
            )
            return []
        if low > high:
            self.add_error("budget_to", "B must be at least A.")
            return []
        if steps == 1 and low != high:
            self.add_error(
                "budget_steps", f"One budget cannot run from {low} to {high}: give 2 or more."
            )
            return []
        budgets = sorted(set(np.linspace(low, high, steps).round().astype(np.int64).tolist()))
        if len(budgets) < steps:
            self.note = (
                f"{steps} steps from {low} to {high} give {len(budgets)} distinct whole "
                f"budget{'s' * (len(budgets) != 1)}: {', '.join(map(str, budgets))}."
            )
        return budgets

    def comparison_arguments(self) -> dict:
        """The keyword arguments of ``services.comparison_create``."""
        data = self.cleaned_data
        given = {
            name: data[name]
            for name in ("max_workers_per_task", "max_tasks_per_worker", "seed", "shards")
            if data.get(name) is not None
        }
        return {
            "methods": data["methods"],
            "budgets": data["budget_values"],
            **given,
            **self.round_arguments(),
        }
