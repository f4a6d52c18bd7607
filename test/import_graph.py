"""The package's import graph, read from the source (imports inside functions included)."""
from __future__ import annotations

import ast
import os

PACKAGE = "robot_dynamics"
ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PACKAGE)


def modules() -> dict[str, str]:
    """Dotted module name → file, for every module of the package."""
    out = {}
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                out[".".join(rel)] = path
    return out


def imports(module: str, path: str, known) -> list[tuple[str, int]]:
    """(imported name, line) of every import in the file: a module of the package when the name
    is one, else the top-level name of the outside package."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    is_pkg = path.endswith("__init__.py")
    here = module.split(".") if is_pkg else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((_resolve(alias.name, known), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                found.append((sub if sub in known else _resolve(mod, known), node.lineno))
    return found


def _resolve(name: str, known) -> str:
    if name.split(".")[0] != PACKAGE:
        return name.split(".")[0]
    while name not in known:  # an attribute of a module
        name = name.rpartition(".")[0]
    return name


def graph() -> dict[str, list[tuple[str, int]]]:
    """module → [(imported module or outside package, line)]."""
    known = modules()
    return {m: imports(m, p, known) for m, p in sorted(known.items())}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layer(module: str) -> str:
    """The layer of a module: its first folder under the package (a top-level file is its own)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE
