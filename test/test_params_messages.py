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


#: -p values and what this package tells of their type (None: cannot tell, the node checks)
_TEXTS = ["abc", "true", "Y", "off", "No", "3", "-3", "+3", "0x1F", "010", "08", "-0", "1e3",
          "1.5", ".5", "5.", "-.5", "+.5", "inf", "nan", ".inf", "-.inf", ".nan", "NaN",
          "Infinity", "99999999999999999999", "1e400", "'3'", '"abc"', "null", "/a/b.urdf",
          "[1.0]", "[1, 2]", "[a, b]", "[true]", "[1.0,2.0]", "[abc]", "1_000", "~", "12abc",
          "0b11", "1.5e", "0o7", "a:b", "-abc", "0x1p3"]


def test_override_types_are_rcl_s():
    """params.override_type (the command line's early type check, before rclpy is imported)
    against rcl's own reading of the same -p values: wherever it tells a type, it is the one
    the node would get; each kind of value is told."""
    import rclpy
    from rclpy.node import Node

    from robot_dynamics.ros.params import override_type

    args = ["probe", "--ros-args"]
    for i, text in enumerate(_TEXTS):
        args += ["-p", f"p{i}:={text}"]
    context = rclpy.Context()
    rclpy.init(args=args, context=context)
    try:
        node = Node("override_types", context=context,
                    automatically_declare_parameters_from_overrides=True)
        rcl = {text: node.get_parameter(f"p{i}").type_.name.lower()
               for i, text in enumerate(_TEXTS)}
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    told = {text: override_type(text) for text in _TEXTS}
    wrong = {t: (told[t], rcl[t]) for t in _TEXTS if told[t] is not None and told[t] != rcl[t]}
    assert not wrong, wrong
    assert {k for k in told.values() if k} == {"string", "bool", "integer", "double",
                                                 "double_array", "integer_array",
                                                 "string_array", "bool_array"}
    assert [t for t in _TEXTS if told[t] is None] == ["1_000", "~", "12abc", "0b11", "1.5e",
                                                      "0o7", "a:b", "-abc", "0x1p3"]


@pytest.mark.parametrize("declared, text, problem", [
    ("double", "500", None), ("double", "1e3", None), ("integer", "2", None),
    ("double", "abc", "expected type double, got 'abc' of type string"),
    ("integer", "2.0", "expected type integer, got '2.0' of type double"),
    ("bool", "1", "expected type bool, got '1' of type integer (true or false)"),
    ("string", "'123'", None), ("string", "a:b", None),  # quoted; not told: the node checks
    ("double_array", "[1, 2]", "write the numbers as floats, x:=[1.0, 2.0]")])
def test_override_problem_of_a_type(declared, text, problem):
    from robot_dynamics.ros.params import Param, override_problem

    found = override_problem(Param("x", declared, None, ""), text)
    assert (found is None) if problem is None else (found.endswith(problem)
                                                    and found.startswith("parameter x: ")), found


#: several -p of one name: what a node gets (measured with rclpy 9.1.2: rcl keeps one value per
#: type and scope; rclpy reads bool, integer, double, string, then the arrays)
REPEATED = [
    (["x:=1", "x:=a"], "1"), (["x:=a", "x:=1"], "1"), (["x:=1", "x:=2"], "2"),
    (["x:=a", "x:=b"], "b"), (["x:=2.5", "x:=1"], "1"), (["x:=a", "x:=true"], "true"),
    (["x:=2.5", "x:=a"], "2.5"), (["x:=a", "x:=[1]"], "a"), (["x:=[a,b]", "x:=[1,2]"], "[1,2]"),
    (["x:=1", "x:=a", "x:=3"], "3"), (["nc2probe:x:=1", "x:=2", "nc2probe:x:=3"], "2"),
    (["x:=1", "nc2probe:x:=2", "x:=3"], "2")]


def _scoped(rules):
    return [(r.split(":=")[0].rpartition(":")[0], r.split(":=", 1)[1]) for r in rules]


@pytest.mark.parametrize("rules, applied", REPEATED)
def test_applied_override_is_not_simply_the_last(rules, applied):
    from robot_dynamics.ros.params import applied_override

    assert applied_override(_scoped(rules)) == applied


def test_applied_override_agrees_with_rclpy():
    """The table above is what the installed rclpy gives a node (a newer rcl may differ)."""
    import rclpy
    from rclpy.node import Node

    from robot_dynamics.ros.params import applied_override, override_type

    for rules, _ in REPEATED:
        args = ["probe", "--ros-args"] + [w for r in rules for w in ("-p", r)]
        context = rclpy.Context()
        rclpy.init(args=args, context=context)
        try:
            node = Node("nc2probe", context=context)
            got = node._parameter_overrides["x"].value
            node.destroy_node()
        finally:
            rclpy.shutdown(context=context)
        text = applied_override(_scoped(rules))
        kind = override_type(text)
        expected = {"integer": int, "double": float, "bool": lambda t: t == "true"}.get(
            kind, lambda t: t)
        if kind and kind.endswith("_array"):
            expected = lambda t: [int(v) if v.strip().isdigit() else v.strip()  # noqa: E731
                                  for v in t[1:-1].split(",")]
        assert got == expected(text), (rules, got, text)
