"""The crowdsourcing maths of tvcs-assign, in numpy: no Django.

Problem definition, exact expected accuracy of the Bayes vote, the assignment methods
(stochastic IHT with the exact TVCS projection and the baselines), quality estimation from gold
questions or, by EM, from the collected answers themselves, aggregation of collected answers
and the next round of a project given them.
"""

from assignment.engine.accuracy import (
    AccuracyEstimate,
    estimate_accuracy,
    expected_accuracy,
    task_accuracy,
)
from assignment.engine.aggregate import AggregateResult, aggregate
from assignment.engine.answer_quality import AnswerQuality, estimate_from_answers
from assignment.engine.method_output import MethodOutput
from assignment.engine.multiclass import (
    MulticlassAggregate,
    aggregate_multiclass,
    estimate_accuracy_multiclass,
    expected_accuracy_multiclass,
    task_accuracy_multiclass,
)
from assignment.engine.options import Option
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.quality import QualityEstimate, estimate_quality
from assignment.engine.rounds import NextRound, next_round, plan_layers
from assignment.engine.solve import (
    METHODS,
    MethodSpec,
    SolveResult,
    check_options,
    method_options,
    method_spec,
    solve,
)
from assignment.engine.upper_bound import UpperBound, accuracy_upper_bound, accuracy_upper_bounds

__all__ = [
    "METHODS",
    "AccuracyEstimate",
    "AggregateResult",
    "AnswerQuality",
    "AssignmentProblem",
    "MethodOutput",
    "MethodSpec",
    "MulticlassAggregate",
    "NextRound",
    "Option",
    "QualityByCategory",
    "QualityEstimate",
    "SolveResult",
    "UpperBound",
    "accuracy_upper_bound",
    "accuracy_upper_bounds",
    "aggregate",
    "aggregate_multiclass",
    "check_options",
    "estimate_accuracy",
    "estimate_accuracy_multiclass",
    "estimate_from_answers",
    "estimate_quality",
    "expected_accuracy",
    "expected_accuracy_multiclass",
    "method_options",
    "method_spec",
    "next_round",
    "plan_layers",
    "solve",
    "task_accuracy",
    "task_accuracy_multiclass",
]
