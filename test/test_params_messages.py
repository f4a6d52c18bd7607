"""Parameter messages: the hint for a list parameter shows numbers; values read as written."""
from array import array

import pytest

pytest.importorskip("rclpy")

from rclpy.exceptions import InvalidParameterTypeException  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from robot_dynamics.ros.common import parameter_error_text, per_joint  # noqa: E402


def _text(name, value, expected="DOUBLE_ARRAY"):
    return parameter_error_text(InvalidParameterTypeException(Parameter(name, value=value),
                                                              expected))


@pytest.mark.parametrize("value", [["abc"], "abc", True, [True]])
def test_words_for_a_gain_list_hint_numbers(value):
    """-p 'kp:=[abc]' / -p kp:=abc: the hint is the default as a list of numbers, not
    kp:=[['abc']] or kp:=[abc] (refused again)."""
    text = _text("kp", value)
    assert text.endswith(": the values must be numbers, e.g. kp:=[400.0]"), text
    assert "write a list" not in text, text


def test_number_hints_keep_numbers():
    assert _text("initial_velocities", 0.5).endswith(": write a list, initial_velocities:=[0.5]")
    assert _text("kd", [1, 2]).endswith(": write the numbers as floats, kd:=[1.0, 2.0]")
    assert _text("joint_names", 5, "STRING_ARRAY").endswith(": write a list, joint_names:=[5]")


def test_rejected_live_value_reads_as_a_plain_list():
    """rclpy hands a double array as array('d', ...): the message shows [nan, 0.0]."""
    with pytest.raises(ValueError) as info:
        per_joint("kp", array("d", [float("nan"), 0.0]), 7, nonnegative=True)
    assert str(info.value) == ("parameter kp: expected 1 or 7 non-negative numbers, "
                               "got [nan, 0.0]")
