"""Request and response shapes of the API.

Input serializers only check types and ranges; the services check the rest (and say so with a
domain error). Output serializers render models and the selectors' dataclasses.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

from assignment.data_files import FORMATS
from assignment.engine import METHODS, Option, method_spec
from assignment.engine.answer_quality import MODELS
from assignment.exporters import LABEL_AGGREGATIONS
from assignment.models import (
    MAX_COUNT,
    MAX_ID,
    MAX_ROUNDS_LEFT,
    MAX_SEED,
    MAX_SHARDS,
    AssignmentRun,
    EstimateSource,
    Method,
    Project,
    RunStatus,
    WorkerModel,
)
from assignment.priors import label_prior_mapping
from assignment.selectors import RUN_STATUS_FIELDS
from assignment.services.comparisons import MAX_COMPARISON_RUNS
from assignment.services.quality import EM_MAX_ITERATIONS
from assignment.services.rounds import target_posterior_refusal


# For a ModelSerializer: its fields are built from the model once per class, not for every
# instance (introspecting the model's 23 fields took a quarter of a run poll's CPU); each
# instance still gets copies of them to bind, as every DRF serializer gets copies of its
# declared fields. The fields of an output serializer (all read-only: nothing validates with
# them, nothing changes their inner state) are copied shallowly, a tenth of the cost of DRF's
# copies, which build each field again. Only for serializers whose fields depend on nothing but
# the class. (No docstring: the schema would take it as the description of the serializers.)
class FieldsBuiltOnceMixin:
    def get_fields(self):
        built = type(self).__dict__.get("_fields_built")
        if built is None:  # two threads may both build them: either result is the same
            built = super().get_fields()
            type(self)._fields_built = built
        if not all(field.read_only for field in built.values()):
            return copy.deepcopy(built)
        return {name: _shallow_copy(field) for name, field in built.items()}


# A request body that refuses the keys its endpoint does not take, by name: without it DRF
# drops them without a word, so a misspelt option or a field that cannot change (a project's
# labels) looks accepted. ``refused`` says why for keys a client may expect to work. (No
# docstring, as above.)
class KnownFieldsOnlyMixin:
    refused: dict[str, str] = {}
    closed_schema = True  # additionalProperties: false in the schema (assignment.api.schema)

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                takes = ", ".join(sorted(self.fields))
                raise serializers.ValidationError(
                    {
                        name: [
                            self.refused.get(name, f"Unknown field; this request takes {takes}.")
                        ]
                        for name in unknown
                    }
                )
        return super().to_internal_value(data)


class SignInSerializer(KnownFieldsOnlyMixin, AuthTokenSerializer):
    """Username and password for ``POST /api/token/``; any other field is a 400."""


def _shallow_copy(field: serializers.Field) -> serializers.Field:
    """``copy.copy(field)`` without its generic machinery: a new instance of the class with
    the same attributes (which :meth:`Field.bind` then sets on the copy alone)."""
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    return clone


# --------------------------------------------------------------------------------------------
# Projects


#: A probability strictly between 0 and 1, as the services require.
_OPEN_PROBABILITY_SCHEMA = {
    "type": "number",
    "format": "double",
    "minimum": 0,
    "exclusiveMinimum": True,
    "maximum": 1,
    "exclusiveMaximum": True,
}

_LABEL_PRIOR_SCHEMA = {
    "type": "object",
    "nullable": True,
    "additionalProperties": _OPEN_PROBABILITY_SCHEMA,
    "description": "More than two labels: each label's prior probability (every label, summing "
    "to 1), for tasks without one of their own; null = uniform. Binary projects use "
    "default_prior.",
}


@extend_schema_field(_LABEL_PRIOR_SCHEMA)
class LabelPriorField(serializers.Field):
    """A distribution over a project's labels: a JSON object label -> probability, or null.
    Read from the stored list in label order; checked by the services
    (:func:`assignment.priors.label_prior_from_mapping`)."""

    default_error_messages = {
        "not_object": "Must be an object giving each label its probability, got {kind}."
    }

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.fail("not_object", kind=type(data).__name__)
        return data

    def get_attribute(self, instance):
        return label_prior_mapping(instance.default_label_prior, list(instance.labels))

    def to_representation(self, value):
        return value


class ProjectSerializer(FieldsBuiltOnceMixin, serializers.ModelSerializer):
    default_prior = serializers.FloatField(
        read_only=True,
        allow_null=True,
        help_text="Two labels: P(label = the second label) for tasks without a prior of their "
        "own; null for a project of more labels, whose prior is default_label_prior.",
    )
    default_label_prior = LabelPriorField(read_only=True)
    worker_count = serializers.IntegerField(read_only=True)
    task_count = serializers.IntegerField(read_only=True)
    gold_item_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Project
        fields = [
            "id",
            "name",
            "description",
            "labels",
            "default_prior",
            "default_label_prior",
            "default_max_workers_per_task",
            "default_max_tasks_per_worker",
            "default_budget",
            "worker_count",
            "task_count",
            "gold_item_count",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if len(instance.labels) > 2:
            data["default_prior"] = None  # P(second label) means nothing there
        return data

    #: What the representation holds besides the settings: sent back in a PATCH (read, modify,
    #: write) these are ignored (:class:`ProjectUpdateSerializer`).
    STATE_FIELDS = (
        "id",
        "worker_count",
        "task_count",
        "gold_item_count",
        "created_at",
        "updated_at",
    )


@extend_schema_field(_OPEN_PROBABILITY_SCHEMA)
class OpenProbabilityField(serializers.FloatField):
    """A probability strictly between 0 and 1, as the schema says (the services refuse the
    ends too, with their own message)."""


@extend_schema_field({**_OPEN_PROBABILITY_SCHEMA, "exclusiveMaximum": False})
class PositiveFractionField(serializers.FloatField):
    """A number in (0, 1], as the schema says: a target accuracy, or a target posterior (whose
    bound for the project's K labels, (1/K, 1], the service checks with its own message)."""

    default_error_messages = {"not_positive": "Ensure this value is greater than 0."}

    def __init__(self, **kwargs) -> None:
        super().__init__(max_value=1.0, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value <= 0:
            self.fail("not_positive")
        return value


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false, and only those: DRF's BooleanField would take "yes", "on", "1" or 1
    too, which the schema (type boolean) refuses."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class TextField(serializers.CharField):
    """A string, and only a string: DRF's CharField would take 5 or true as "5" and "True",
    which the schema (type string) refuses."""

    default_error_messages = {"not_text": "Must be a string, got {kind}."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_text", kind=type(data).__name__)
        return super().to_internal_value(data)


class _ProjectDefaultsSerializer(serializers.Serializer):
    default_prior = OpenProbabilityField(
        required=False, help_text="P(label = the second label), strictly between 0 and 1."
    )
    default_label_prior = LabelPriorField(required=False)
    default_max_workers_per_task = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_COUNT
    )
    default_max_tasks_per_worker = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_COUNT
    )
    default_budget = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_COUNT,
        help_text="Total assignments; null = as many as the caps allow.",
    )


class ProjectCreateSerializer(KnownFieldsOnlyMixin, _ProjectDefaultsSerializer):
    name = TextField(max_length=200)
    description = TextField(required=False, allow_blank=True, default="")
    labels = serializers.ListField(
        child=TextField(max_length=100),
        required=False,
        min_length=2,
        help_text='The label set, fixed once the project exists; default ["0", "1"].',
    )


class ProjectUpdateSerializer(KnownFieldsOnlyMixin, _ProjectDefaultsSerializer):
    """The fields of a project to change. The project as GET returns it may be sent back
    changed: its id, counts and times are ignored, and its labels, or a null prior, with the
    values they have are no change; any other field is refused by name."""

    refused = {"labels": "The label set is fixed once the project exists."}
    closed_schema = False  # it takes the fields of the project's representation too

    def to_internal_value(self, data):
        current = self.context.get("current", {})  # the project as GET returns it
        if isinstance(data, Mapping):
            data = {
                name: value
                for name, value in data.items()
                if name not in ProjectSerializer.STATE_FIELDS
                and not (
                    name in current
                    and value == current[name]
                    and (name not in self.fields or value is None)
                )
            }
        return super().to_internal_value(data)

    name = TextField(required=False, max_length=200)
    description = TextField(required=False, allow_blank=True)


# --------------------------------------------------------------------------------------------
# Data files


class UploadSerializer(KnownFieldsOnlyMixin, serializers.Serializer):
    file = serializers.FileField(
        allow_empty_file=True, help_text="A CSV or JSON data file (README, Data files)."
    )
    format = serializers.ChoiceField(
        choices=FORMATS,
        required=False,
        help_text="Default: from the file name's suffix, else JSON if it starts with '['.",
    )

    def validate_file(self, value):
        given = getattr(self.initial_data, "getlist", lambda name: [value])("file")
        if len(given) > 1:
            raise serializers.ValidationError(
                f"Give one file per upload; got {len(given)} parts named file."
            )
        return value


class ImportResultSerializer(serializers.Serializer):
    kind = serializers.CharField()
    file = serializers.CharField()
    rows = serializers.IntegerField(help_text="Rows written (added or updated).")
    added = serializers.IntegerField(
        allow_null=True, help_text="Of those, rows that were new; null for a quality file."
    )


class DownloadSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS, default="csv")


class LabelsDownloadSerializer(DownloadSerializer):
    aggregation = serializers.ChoiceField(
        choices=list(LABEL_AGGREGATIONS),
        default="bayes",
        help_text="bayes: the Bayes vote under the latest quality matrix (two labels); "
        "dawid-skene: Dawid\u2013Skene's labels (any number of labels): under the latest quality "
        "matrix's confusion matrices when it was estimated with that model, else EM over the "
        "answers alone.",
    )


class ImportErrorSerializer(serializers.Serializer):
    """A rejected file says where; a request without a file says which field."""

    file = serializers.CharField(required=False, help_text="The rejected file's name.")
    line = serializers.IntegerField(
        required=False, allow_null=True, help_text="Where the problem's row starts."
    )
    object = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="The row's object in a JSON file (1-based), null for CSV: several objects "
        "may share a line.",
    )
    column = serializers.CharField(required=False, allow_null=True)
    detail = serializers.CharField()
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()), required=False
    )


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as `Authorization: Token <token>`.")


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What is wrong, in words.")
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="For an invalid request: the problems by field (``budgets.1`` is the second "
        "budget).",
    )


# --------------------------------------------------------------------------------------------
# Quality


@extend_schema_field(
    {"oneOf": [{"type": "number", "minimum": 0, "exclusiveMinimum": True}, {"enum": ["auto"]}]}
)
class StrengthField(serializers.Field):
    """A shrinkage strength: a positive number (pseudo-counts) or "auto" (fitted)."""

    default_error_messages = {"invalid": 'Must be a positive finite number or "auto".'}

    def to_internal_value(self, data):
        if data == "auto":
            return data
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if not math.isfinite(data) or data <= 0:
            self.fail("invalid")
        return float(data)

    def to_representation(self, value):
        return value


class QualityEstimateSerializer(KnownFieldsOnlyMixin, serializers.Serializer):
    source = serializers.ChoiceField(
        choices=EstimateSource.choices,
        default=EstimateSource.GOLD.value,
        help_text="What to learn from: the gold answers, counted (gold); the collected answers "
        "by EM (answers); or both by EM, gold items as known truths (both).",
    )
    model = serializers.ChoiceField(
        choices=MODELS,
        required=False,
        help_text=f"The EM's worker model, for source answers or both (default {MODELS[0]}): "
        "one accuracy per worker and category (one-coin) or a confusion matrix per worker "
        "(dawid-skene).",
    )
    worker_strength = StrengthField(
        required=False, help_text="Prior pseudo-answers pulling a worker to the population."
    )
    category_strength = StrengthField(
        required=False, help_text="Prior pseudo-answers pulling a category to the worker."
    )
    max_iterations = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_COUNT,
        help_text=f"For source answers or both: at most this many EM iterations (default "
        f"{EM_MAX_ITERATIONS}); an estimate that has not converged by then is stored all the "
        "same, with converged false in its details.",
    )


class QualityMatrixSummarySerializer(serializers.Serializer):
    matrix_id = serializers.IntegerField()
    source = serializers.CharField()
    created_at = serializers.DateTimeField()
    n_workers = serializers.IntegerField()
    n_tasks = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)
    std = serializers.FloatField(allow_null=True)
    min = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)
    workers_without_gold = serializers.IntegerField(
        allow_null=True,
        help_text="Rows without gold answers; null for a matrix made without gold (uploaded, "
        "or estimated from the collected answers alone).",
    )
    details = serializers.DictField(
        help_text="How the matrix was made: for an estimate the strengths, population accuracy "
        "and counts; by EM also model, iterations, converged and log_likelihood."
    )


# --------------------------------------------------------------------------------------------
# Runs and comparisons


class _CapsSerializer(serializers.Serializer):
    max_workers_per_task = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_COUNT, help_text="Default: the project's."
    )
    max_tasks_per_worker = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_COUNT, help_text="Default: the project's."
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED)


def _option_schema(option: Option) -> dict:
    """The JSON schema of one method option, from the engine's registry."""
    kinds = {int: "integer", float: "number", bool: "boolean"}
    schema: dict = {"type": kinds[option.kind], "description": f"{option.help}"}
    if option.minimum is not None:
        schema["minimum"] = option.minimum
        schema["exclusiveMinimum"] = option.exclusive_minimum
    if option.maximum is not None:
        schema["maximum"] = option.maximum
        schema["exclusiveMaximum"] = option.exclusive_maximum
    if option.nullable:
        schema["nullable"] = True
    schema["default"] = option.default
    return schema


def _options_schema() -> dict:
    """Every method's options as the properties of one object (no others are taken)."""
    properties = {}
    for method in METHODS:
        for option in method_spec(method).options:
            described = _option_schema(option)
            described["description"] = f"{method}: {described['description']}"
            properties[option.name] = described
    return {"type": "object", "properties": properties, "additionalProperties": False}


@extend_schema_field(_options_schema())
class OptionsField(serializers.DictField):
    """A run's method options; the engine checks them against the chosen method."""

    child = serializers.JSONField(allow_null=True)  # a nullable option (the engine checks)


class _RoundSerializer(serializers.Serializer):
    round = StrictBooleanField(
        required=False,
        default=False,
        source="next_round",
        help_text="A next round: condition on the answers collected so far (each task's "
        "posterior as its prior, answered pairs not again, caps counting the answers); budget "
        "is then this round's, by default what remains of the project's budget.",
    )
    target_posterior = PositiveFractionField(
        required=False,
        help_text="Rounds only: tasks whose likeliest label has at least this posterior get "
        "nobody. In (1/K, 1] for K labels: above 0.5 for two, above 1/3 for three.",
    )
    target_accuracy = PositiveFractionField(
        required=False,
        help_text="Rounds only: refuse the round (400) once the answers' expected accuracy "
        "reaches this. In (0, 1].",
    )

    rounds_left = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ROUNDS_LEFT,
        help_text="Rounds only: rounds to go, this one included. Above 1 the round plans all "
        "of them with its budget and takes its share in layers (a first or a check answer for "
        "each open task before any task's next one); default 1, the last round.",
    )


class _ShardsSerializer(serializers.Serializer):
    shards = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_SHARDS,
        help_text=f"Solve the tasks of the run (of each run of a comparison) in this many "
        f"shards on separate workers, coordinated by prices (any number of labels; a next "
        f"round too, its round's problem split as one worker would solve it); default 1. "
        f"At most {MAX_SHARDS}. On Dawid\u2013Skene quality the shards are chosen and priced "
        f"under the confusion matrices; a 400 if the method could give a task more workers "
        f"than their exact limit (7 for 3 labels; greedy stops there).",
    )


class RunCreateSerializer(
    KnownFieldsOnlyMixin, _RoundSerializer, _CapsSerializer, _ShardsSerializer
):
    method = serializers.ChoiceField(choices=Method.choices)
    budget = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_COUNT,
        help_text="Default: the project's, else as many pairs as the caps allow.",
    )
    options = OptionsField(
        required=False,
        help_text='The method\'s options, e.g. {"max_iter": 30}; each method takes its own '
        "(the engine's registry: defaults, bounds and meanings are in each property).",
    )


_VOTE_ACCURACY_SCHEMA = {
    "type": "object",
    "properties": {
        "expected_accuracy": {"type": "number", "format": "double"},
        "standard_error": {"type": "number", "format": "double"},
    },
    "required": ["expected_accuracy", "standard_error"],
}


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "properties": {
            "dawid_skene_vote": _VOTE_ACCURACY_SCHEMA,
            "bayes_vote": _VOTE_ACCURACY_SCHEMA,
        },
        "required": ["dawid_skene_vote", "bayes_vote"],
        "description": "Only for a run whose quality was estimated by Dawid\u2013Skene EM: the "
        "assignment's expected accuracy if the workers answer as their fitted confusion "
        "matrices say, for the Dawid\u2013Skene vote (the best vote under that model) and for the "
        "Bayes vote of the symmetric model. The run was chosen under those matrices and its "
        "expected_accuracy is the Dawid\u2013Skene vote's, a sharded run's too (each shard chosen "
        "and its workers priced under the matrices; sharded runs stored before that were "
        "chosen and scored under the symmetric model). For a next round (round: "
        "true, round_start.dawid_skene true) both are of the final labels, the vote over all "
        "the answers, given the answers in hand, and the round was chosen from the "
        "Dawid\u2013Skene posteriors of those. Standard error 0 where the sum over answer "
        "patterns was exact.",
    }
)
class DawidSkeneAccuracyField(serializers.JSONField):
    pass


class RunSerializer(FieldsBuiltOnceMixin, serializers.ModelSerializer):
    round = serializers.BooleanField(source="next_round", read_only=True)
    dawid_skene_accuracy = DawidSkeneAccuracyField(read_only=True, allow_null=True)
    chosen_under = serializers.ChoiceField(
        choices=WorkerModel.choices,
        read_only=True,
        allow_null=True,
        help_text="The worker model the assignment was chosen under (null until the run has "
        "succeeded): dawid_skene, the quality's Dawid\u2013Skene confusion matrices (a greedy or "
        "tvcs-iht run on Dawid\u2013Skene quality; a sharded one planned under them, shard_state's "
        "dawid_skene; a next round with round_start.dawid_skene true), else symmetric, the "
        "symmetric model of the quality (quality without confusion matrices; q-lp and random, "
        "which are only scored under the matrices; a sharded run planned before shards were "
        "chosen under them, or a next round from before rounds were). The rule the run's "
        "page follows (AssignmentRun.chosen_under).",
    )

    class Meta:
        model = AssignmentRun
        # the columns the status selector reads, with next_round shown as "round", and the
        # worker model the assignment was chosen under (from columns that selector reads too)
        fields = [
            *(name if name != "next_round" else "round" for name in RUN_STATUS_FIELDS),
            "chosen_under",
        ]
        read_only_fields = fields


class RunFilterSerializer(serializers.Serializer):
    project = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    status = serializers.ChoiceField(choices=RunStatus.choices, required=False)


class ComparisonCreateSerializer(
    KnownFieldsOnlyMixin, _RoundSerializer, _CapsSerializer, _ShardsSerializer
):
    methods = serializers.ListField(
        child=serializers.ChoiceField(choices=Method.choices), min_length=1
    )
    budgets = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_COUNT),
        required=False,
        max_length=MAX_COMPARISON_RUNS,
        help_text="One run per method and budget; default: one run per method, default budget.",
    )


class ComparisonRowSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    method = serializers.ChoiceField(choices=Method.choices)
    budget = serializers.IntegerField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    progress = serializers.IntegerField()
    n_assigned = serializers.IntegerField(allow_null=True)
    expected_accuracy = serializers.FloatField(allow_null=True)
    accuracy_standard_error = serializers.FloatField(allow_null=True)
    seconds = serializers.FloatField(allow_null=True)
    handed_out_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When the run was handed out to the workers (POST /api/runs/{id}/hand-out/): "
        "it then counts as a round. Null if it never was.",
    )
    withdrawn_at = serializers.DateTimeField(
        allow_null=True, help_text="When the run, handed out, was withdrawn; null if not."
    )


class CurvePointSerializer(serializers.Serializer):
    budget = serializers.IntegerField()
    expected_accuracy = serializers.FloatField()


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "budget": {"type": "integer"},
                    "expected_accuracy": {"type": "number", "format": "double"},
                },
                "required": ["budget", "expected_accuracy"],
            },
        },
        "description": "Per method, its succeeded runs' expected accuracy by budget (ascending).",
    }
)
class CurvesField(serializers.Field):
    def to_representation(self, value):
        return {
            method: CurvePointSerializer(points, many=True).data for method, points in value.items()
        }


class UpperBoundSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["", "pending", "done", "not applicable", "failed"],
        help_text="pending while a worker computes it; empty for comparisons made before "
        "bounds were computed.",
    )
    points = CurvePointSerializer(
        many=True, help_text="The bound's expected accuracy at each budget of the comparison."
    )
    message = serializers.CharField(help_text="Why the bound is not applicable, or failed.")


class ComparisonSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="comparison_id")
    project = serializers.IntegerField(source="project_id")
    methods = serializers.ListField(child=serializers.CharField())
    budgets = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The budgets of its runs, ascending (the project's default when none was given).",
    )
    created_at = serializers.DateTimeField()
    finished = serializers.BooleanField(
        help_text="Every run has ended; the upper bound, computed after them, may still be "
        "pending (upper_bound.status)."
    )
    rows = ComparisonRowSerializer(many=True)
    curves = CurvesField()
    upper_bound = UpperBoundSerializer(
        help_text="The accuracy any assignment can reach at each budget without per-worker caps."
    )


# --------------------------------------------------------------------------------------------
# Health


#: What /healthz says of each component: the reason of a failure goes to the server's log.
HEALTH_STATES = ["ok", "failing"]


class HealthSerializer(serializers.Serializer):
    database = serializers.ChoiceField(choices=HEALTH_STATES)
    broker = serializers.ChoiceField(choices=HEALTH_STATES)
    cache = serializers.ChoiceField(choices=HEALTH_STATES)


class RoundPreviewQuerySerializer(KnownFieldsOnlyMixin, serializers.Serializer):
    """The preview's query; ``context["project"]`` the project previewed."""

    refused = dict.fromkeys(
        ("max_workers_per_task", "max_tasks_per_worker", "method", "shards"),
        "Not taken: the preview plans with greedy under the project's defaults (change them in "
        "its settings); it takes budget, rounds_left and target_posterior.",
    )

    target_posterior = PositiveFractionField(
        required=False,
        help_text="As a round's: tasks whose likeliest label has at least this posterior get "
        "nobody. In (1/K, 1] for K labels; default none.",
    )
    budget = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_COUNT,
        help_text="The round's budget; default what remains of the project's budget.",
    )
    rounds_left = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ROUNDS_LEFT,
        help_text="As a round's: rounds to go, this one included. Above 1 the preview is this "
        "round's layers of greedy's plan for all of them; default 1, the last round.",
    )

    def validate_target_posterior(self, value: float) -> float:
        labels = len(self.context["project"].labels)
        refusal = target_posterior_refusal(value, n_labels=labels)
        if refusal:
            raise serializers.ValidationError(refusal)
        return value


class RoundPreviewSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["ok", "no-matrix", "stale", "done", "skipped", "error"],
        help_text="ok: gain is set; no-matrix or stale: runs cannot start (message says what "
        "to do); done: the round would have nothing to do; skipped: the round is too large to "
        "preview; error: it could not be computed (message).",
    )
    message = serializers.CharField(allow_blank=True)
    method = serializers.CharField(help_text="The method whose plan is previewed: greedy.")
    answers = serializers.IntegerField(
        allow_null=True,
        help_text="Answers in hand (this and the counts below: null when the "
        "round could not be read: status no-matrix, stale, error, or skipped for the matrix).",
    )
    tasks = serializers.IntegerField(allow_null=True)
    open_tasks = serializers.IntegerField(
        allow_null=True,
        help_text="Tasks the round may assign (below the target, room under their cap).",
    )
    budget = serializers.IntegerField(allow_null=True, help_text="Pairs the round may assign.")
    rounds_left = serializers.IntegerField(
        help_text="Rounds to go the round was previewed for (1: the last round)."
    )
    pending = serializers.IntegerField(
        allow_null=True,
        help_text="Pairs of earlier rounds awaiting their answers: counted as spent (budget, "
        "caps, not assigned again) and left out of the expected accuracy (conservative).",
    )
    n_assigned = serializers.IntegerField(allow_null=True, help_text="Pairs greedy's plan assigns.")
    accuracy_now = serializers.FloatField(
        allow_null=True, help_text="Expected accuracy of the labels from the answers in hand."
    )
    expected_accuracy = serializers.FloatField(
        allow_null=True, help_text="Expected accuracy of the final labels after greedy's round."
    )
    gain = serializers.FloatField(
        allow_null=True,
        help_text="expected_accuracy - accuracy_now; tvcs-iht, which starts from greedy's plan, "
        "gains at least as much.",
    )
    seconds = serializers.FloatField(allow_null=True, help_text="Greedy's time.")
    dawid_skene = serializers.BooleanField(
        help_text="Computed under the quality's Dawid\u2013Skene matrices."
    )
    target_posterior = serializers.FloatField(allow_null=True)

    #: The counts of the round, unknown (null) when it could not be read.
    COUNTS = ("answers", "tasks", "open_tasks", "budget", "pending", "n_assigned")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not instance.counted:
            data.update(dict.fromkeys(self.COUNTS))
        return data
