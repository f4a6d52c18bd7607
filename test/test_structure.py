"""The layering rule, checked on the source (docs/ARCHITECTURE.md): the import graph of the package,
imports inside functions included, has no cycle; each layer imports only layers below it; rclpy
and the ROS messages are imported by the ROS layer and the command line only; numba by kernels/
only; and every numba-compiled function is defined under kernels/."""
from __future__ import annotations

import ast
import os

import pytest

from import_graph import PACKAGE, ROOT, cycles, graph, layer

#: bottom to top; a layer may import the layers before it (docs/ARCHITECTURE.md)
LAYERS = ["errors", "spatial", "kernels", "multibody", "parsers", "friction", "algorithm",
          "reference", "control", "simulation", "formulations", "identification", "ros", "cli"]
#: outside packages that only the ROS layer and the command line may import
ROS_ONLY = {"rclpy", "rcl_interfaces", "builtin_interfaces", "sensor_msgs", "std_msgs", "std_srvs",
            "trajectory_msgs", "geometry_msgs", "rosgraph_msgs", "visualization_msgs",
            "diagnostic_msgs", "control_msgs", "action_msgs"}

GRAPH = graph()


def _rank(module: str) -> int:
    name = layer(module)
    return -1 if name == PACKAGE else LAYERS.index(name)


def test_every_module_belongs_to_a_layer():
    unknown = sorted(m for m in GRAPH if layer(m) not in LAYERS and m != PACKAGE)
    assert not unknown, f"modules outside the layers of docs/ARCHITECTURE.md: {unknown}"


def test_no_import_cycle():
    edges = {m: {t for t, _ in targets if t in GRAPH and t != m} for m, targets in GRAPH.items()}
    assert cycles(edges) == []


def test_layers_import_only_layers_below():
    upward = [f"{m}:{line} imports {t}" for m, targets in GRAPH.items() for t, line in targets
              if t in GRAPH and t != PACKAGE and m != PACKAGE and _rank(t) > _rank(m)]
    assert not upward, "\n".join(upward)


def test_the_package_root_is_not_imported_inside_the_package():
    """``robot_dynamics`` exports its names lazily; inside the package, import the module."""
    found = [f"{m}:{line}" for m, targets in GRAPH.items() for t, line in targets
             if t == PACKAGE and m != PACKAGE and layer(m) != "cli"]
    assert not found, found


@pytest.mark.parametrize("outside, allowed", [(ROS_ONLY, {"ros", "cli"}), ({"numba"}, {"kernels"})],
                         ids=["ros", "numba"])
def test_outside_packages_stay_in_their_layers(outside, allowed):
    found = [f"{m}:{line} imports {t}" for m, targets in GRAPH.items() for t, line in targets
             if t in outside and layer(m) not in allowed]
    assert not found, "\n".join(found)


def test_compiled_functions_live_in_kernels():
    """A function decorated with numba's njit/jit/vectorize (by any name) is defined in kernels/."""
    found = []
    for folder, _, files in os.walk(ROOT):
        if os.path.basename(folder) == "kernels":
            continue
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
                if isinstance(node, ast.FunctionDef):
                    for dec in node.decorator_list:
                        target = dec.func if isinstance(dec, ast.Call) else dec
                        text = ast.unparse(target)
                        if text.split(".")[-1] in ("njit", "jit", "vectorize", "guvectorize",
                                                    "cfunc", "generated_jit"):
                            found.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
    assert not found, found


def test_kernels_compile_with_the_one_setting():
    """Every kernel module takes njit from kernels/jit.py (one place states the compiler's
    floating-point flags): no other module there imports numba's njit/jit directly."""
    folder = os.path.join(ROOT, "kernels")
    found = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py") or name == "jit.py":
            continue
        tree = ast.parse(open(os.path.join(folder, name), encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "numba":
                found += [f"{name}:{node.lineno} {a.name}" for a in node.names
                          if a.name in ("njit", "jit")]
            if isinstance(node, ast.Attribute) and node.attr in ("njit", "jit") and \
                    ast.unparse(node.value) == "numba":
                found.append(f"{name}:{node.lineno} numba.{node.attr}")
    assert not found, found
