"""Method options as data: every default is valid, bounds are enforced, words match checks."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from assignment.engine import METHODS, Option, check_options, method_spec
from assignment.engine.tvcs_iht import tvcs_iht


@pytest.mark.parametrize("method", METHODS)
def test_every_method_default_passes_its_own_check(method):
    spec = method_spec(method)
    assert spec.title
    assert spec.description
    check_options(method, {option.name: option.default for option in spec.options})


def test_the_defaults_come_from_the_method_signatures():
    options = {option.name: option.default for option in method_spec("tvcs-iht").options}
    signature = inspect.signature(tvcs_iht).parameters
    assert options == {name: signature[name].default for name in options}
    assert options["refine"] is True
    assert options["time_limit"] is None
    assert method_spec("q-lp").options[0].default == 0.05
    assert method_spec("greedy").options == ()


@pytest.mark.parametrize(
    ("option", "good", "bad"),
    [
        (Option("n", int, "", minimum=1, maximum=5), [1, 5, np.int64(3)], [0, 6, 2.0, True, "2"]),
        (Option("x", float, "", minimum=0, exclusive_minimum=True), [1e-9, 3], [0, -1, np.nan]),
        (Option("b", bool, ""), [True, np.bool_(False)], [1, "true", None]),
        (Option("t", float, "", minimum=0, exclusive_minimum=True, nullable=True), [None], [0]),
    ],
)
def test_an_option_accepts_its_kind_within_bounds_and_refuses_the_rest(option, good, bad):
    for value in good:
        option.check(value)
    for value in bad:
        with pytest.raises(ValueError, match=f"^{option.name} must be "):
            option.check(value)


def test_an_option_describes_its_bounds_in_words():
    assert Option("n", int, "", minimum=1).describe() == "an integer >= 1"
    assert Option("n", int, "", minimum=0, maximum=9).describe() == "an integer in [0, 9]"
    assert Option("x", float, "", minimum=0, exclusive_minimum=True).describe() == (
        "a positive number"
    )
    interval = Option(
        "e", float, "", minimum=0, maximum=1, exclusive_minimum=True, exclusive_maximum=True
    )
    assert interval.describe() == "a number in (0, 1)"


def test_an_unknown_option_names_the_valid_ones():
    with pytest.raises(ValueError, match="valid: target_error"):
        check_options("q-lp", {"speed": 2})


@pytest.mark.parametrize("method", METHODS)
def test_every_default_spelt_as_text_parses_back_to_itself(method):
    for option in method_spec(method).options:
        text = "null" if option.default is None else str(option.default).lower()
        assert option.parse(text) == option.default
        assert type(option.parse(text)) is type(option.default)


@pytest.mark.parametrize(
    ("text", "value"),
    [("20", 20), (" 3 ", 3), ("True", True), ("false", False), ("NULL", None)],
)
def test_text_parses_to_the_options_kind(text, value):
    options = {o.name: o for o in method_spec("tvcs-iht").options}
    option = {int: options["max_iter"], bool: options["refine"], type(None): options["time_limit"]}
    parsed = option[type(value)].parse(text)
    assert parsed == value
    assert type(parsed) is type(value)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("max_iter", "2.5"),
        ("max_iter", "ten"),
        ("max_iter", "-1"),
        ("max_iter", "null"),
        ("refine", "maybe"),
        ("refine", "yes"),  # JSON's true and false only, as the API takes them
        ("refine", "0"),
        ("step", "nan"),
        ("step", "0"),
    ],
)
def test_text_that_spells_no_valid_value_is_refused_naming_the_option(name, text):
    option = {o.name: o for o in method_spec("tvcs-iht").options}[name]
    with pytest.raises(ValueError, match=f"^{name} must be "):
        option.parse(text)
