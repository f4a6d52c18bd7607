"""Algorithms generic over the model's class, at the cost of one dictionary look-up per call.

A public algorithm is written for a plain :class:`~robot_dynamics.multibody.model.Model`; a layer
that knows another kind of model (the coupling layer, robot_dynamics/algorithm/coupled.py, for
mimic models) registers its version for that class, so the algorithm neither tests the model
nor imports that layer. Same interface as ``functools.singledispatch`` (``register(cls, impl)``
or ``@f.register(cls)``), without its per-call cost: the wrapper has the function's own
signature (no ``*args`` packing), and a class is resolved along its MRO once, then cached.
"""
from __future__ import annotations

import functools
import inspect


def by_model(fn):
    """Make ``fn(model, ...)`` dispatch on ``type(model)``; ``fn`` serves unregistered classes."""
    registry = {object: fn}
    cache = {}

    def resolve(cls):
        impl = next(registry[base] for base in cls.__mro__ if base in registry)
        cache[cls] = impl
        return impl

    params, args, defaults = [], [], {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            params.append(f"*{p.name}")
            args.append(f"*{p.name}")
            continue
        if p.kind is p.VAR_KEYWORD:
            params.append(f"**{p.name}")
            args.append(f"**{p.name}")
            continue
        if p.kind is p.KEYWORD_ONLY and not any(x.startswith("*") for x in params):
            params.append("*")
        text = p.name
        if p.default is not p.empty:
            defaults[f"_d_{p.name}"] = p.default
            text += f"=_d_{p.name}"
        params.append(text)
        args.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
    first = next(iter(inspect.signature(fn).parameters))
    source = (f"def call({', '.join(params)}):\n"
              f"    return (get({first}.__class__) or resolve({first}.__class__))"
              f"({', '.join(args)})\n")
    namespace = {"get": cache.get, "resolve": resolve, **defaults}
    exec(source, namespace)  # noqa: S102 (a wrapper with fn's own signature)
    call = functools.wraps(fn)(namespace["call"])

    def register(cls, impl=None):
        if impl is None:
            return lambda f: register(cls, f)
        registry[cls] = impl
        cache.clear()
        return impl

    call.register = register
    call.registry = registry
    return call
