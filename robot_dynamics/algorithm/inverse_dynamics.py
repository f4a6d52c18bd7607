"""Inverse dynamics with reaction-dependent joint friction — seed 004 §2.7 (control).

Closed form, one Newton–Euler pass plus the friction map:

1. ``fn(q, q̇, q̈)`` by RNEA (forward and backward passes) — every joint's whole wrench;
2. split each into its axial part ``fn∥`` (J∥) and its reaction ``fn⊥`` (J⊥);
3. the friction map gives the friction magnitude from the reaction (and q_i, q̇_i);
4. the motor effort is ``fn_mot = fn∥ + armature ∘ q̈ − fn∥_vin  (+ d ∘ q̇)``  (eq. 2.7.5)

where ``fn∥_vin = τf`` is the *signed* friction effort, opposite to the joint velocity, and
``armature ∘ q̈`` accelerates the actuators' rotors (``model.armature``, as Pinocchio's; zero by
default). The rotors sit on the motor side of the joint: they are not in the joint wrenches fn,
so the friction laws read the link-side loads alone. (The seed's step-by-step summary prints a
plus sign in step 4; eq. 2.7.5 and the sign convention say minus: the motor supplies more
effort in the direction of motion. See docs/method.md §2.7.)

``d ∘ q̇`` is the URDF joint damping (``<dynamics damping>``, ``model.damping``), a passive
effort of the plant that the motor works against, like friction: **one definition of a joint
effort** (issue 33, docs/identification.md "What a joint effort contains") — what
:class:`~robot_dynamics.simulation.simulator.Simulator` applies (its ``damping=True``), what a
torque sensor or a MuJoCo/Drake log holds. ``damping=True`` (the default, with or without a
friction model) includes it, ``damping=False`` leaves it out (the numbers of the package before
issue 33, to the bit). Plain :func:`~robot_dynamics.algorithm.rnea.rnea` stays Pinocchio's
rnea: no damping, no friction. :func:`~robot_dynamics.algorithm.forward_dynamics.
forward_dynamics` takes the same keyword with the same default and inverts this function
(``damping=True``: its joints feel −d∘q̇ at the given q̇; ``damping=False``: none, as Pinocchio's
aba).

At ``q̇_i = 0`` friction has no direction of its own. Here it takes the direction of the
commanded acceleration ``q̈_i`` — the motion the controller asks for — with the breakaway
(static) magnitude; with ``q̈_i = 0`` too, the joint is meant to stay at rest and friction
(stiction) holds whatever it needs, so τf_i = 0 and the motor supplies fn∥. ``velocity_tolerance``
says what counts as rest. With ``smoothing_velocity = ε > 0`` the direction is instead
``tanh(q̇_i / ε)`` (continuous; a common choice against chattering in control).

External efforts (``fext``, (nv, 6), Pinocchio's convention: see
:mod:`robot_dynamics.algorithm.rnea`) enter step 1: the joint wrenches carry them, so the
friction laws see the reactions that carry the load (seed 004 §1.3.4–1.3.6, §2.7).
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.errors import F64, InputError, check_data, check_friction, run_converted
from robot_dynamics.kernels.friction import id_entry, id_fext_entry
from robot_dynamics.algorithm.rnea import _rnea_fext, check_fext, rnea


def damping_effort(model, v) -> np.ndarray:
    """``d ∘ q̇``: the URDF joint damping's share of the motor effort (``model.damping``) — the
    NumPy statement of :func:`robot_dynamics.kernels.dynamics.add_joint_damping`, for the paths
    that do not run it compiled (Python laws, smoothing, the reference twin)."""
    return model.damping * v


def friction_directions(v, a, velocity_tolerance=1e-6, smoothing_velocity=0.0) -> np.ndarray:
    """The direction (−1, 0, 1, or in between when smoothed) friction opposes, per joint."""
    if smoothing_velocity > 0:
        return np.tanh(v / smoothing_velocity)
    return np.where(np.abs(v) > velocity_tolerance, np.sign(v), np.sign(a))


@by_model
def inverse_dynamics(model, data, q, v, a, friction=None, *, velocity_tolerance=1e-6,
                     smoothing_velocity=0.0, fext=None, damping=True) -> np.ndarray:
    """Motor efforts (nv,) that produce the motion (q, q̇, q̈) against gravity, friction and the
    URDF joint damping: ``τ = fn∥ + armature∘q̈ − τf + d∘q̇`` (module docstring).

    Fills ``data.f`` (joint wrenches fn) and ``data.tau_friction`` (signed τf, q̇_i τf_i ≤ 0).
    Inputs too large for a finite result raise :class:`~robot_dynamics.errors.InputError`
    (``overflow: …``, naming them).

    ``fext`` (nv, 6), optional: the external wrench on each body, body frame, about its origin
    (Pinocchio's ``fext``); the friction laws read the joint wrenches that carry it.
    ``damping``: True (default) includes the URDF damping d∘q̇ (``model.damping``, as
    ``Simulator(damping=True)`` applies it), False leaves it out (only the rigid body, rotors
    and friction; with ``friction=None`` that is :func:`~robot_dynamics.algorithm.rnea.rnea`).
    """
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "inverse_dynamics")
    if damping is not True and damping is not False:
        damping = check_damping(damping)
    if friction is None:
        if not damping:
            if fext is not None:
                tau = _rnea_fext(model, data, q, v, a, fext, "inverse_dynamics")
            else:
                tau = rnea(model, data, q, v, a)
            data.tau_friction[:] = 0.0
            return tau
        packed = model._no_friction  # the compiled path with "no laws": RNEA + d∘q̇
    else:
        if getattr(friction, "_model", None) is not model:
            check_friction(model, friction, "inverse_dynamics")
        packed = friction._packed if smoothing_velocity == 0 else None
    if packed is not None:
        fr, mb, work = packed[2], model._mb, data._work
        try:  # one compiled call: RNEA + friction map (it checks length and finiteness)
            if (q.dtype is F64 and v.dtype is F64 and a.dtype is F64 and q.flags.carray
                    and v.flags.carray and a.flags.carray):
                if fext is None:
                    if id_entry(mb, fr, q, v, a, velocity_tolerance, damping, work):
                        return data._id_out.copy()
                elif (fext.dtype is F64
                      and id_fext_entry(mb, fr, q, v, a, fext, velocity_tolerance, damping,
                                        work)):
                    return data._id_out.copy()
        except (AttributeError, TypeError):  # lists, tuples, 2-D arrays, an int tolerance
            pass
    if fext is not None:
        return _inverse_dynamics_fext(model, data, q, v, a, friction, velocity_tolerance,
                                      smoothing_velocity, fext, packed, damping)
    if packed is not None:
        tol = float(velocity_tolerance)
        run_converted("inverse_dynamics", (("q", q, model.nq), ("v", v, model.nv),
                                           ("a", a, model.nv)),
                      lambda q, v, a: id_entry(mb, fr, q, v, a, tol, damping, work))
        return data._id_out.copy()
    out = np.empty(model.nv)

    def run(q, v, a):  # steps 1–4 with the law objects (Python laws, or smoothing)
        try:
            fn_axial = rnea(model, data, q, v, a)  # step 1; Sᵀ fn + armature ∘ q̈ per joint
        except InputError:  # overflow (the inputs are converted and finite here)
            return False
        d = friction_directions(v, a, velocity_tolerance, smoothing_velocity)
        magnitude = friction.magnitudes(model, data.f, q, v, np.sign(d))  # steps 2–3
        data.tau_friction[:] = -magnitude * d
        out[:] = fn_axial - data.tau_friction  # step 4, eq. 2.7.5 (rotor effort included)
        if damping:
            out[:] += damping_effort(model, v)  # the URDF damping (id_entry's statement)
        return bool(np.isfinite(out).all() and np.isfinite(data.tau_friction).all())

    run_converted("inverse_dynamics", (("q", q, model.nq), ("v", v, model.nv),
                                       ("a", a, model.nv)), run)
    return out


def check_damping(damping, where="inverse_dynamics",
                  meaning="the effort includes the URDF joint damping d∘q̇, as inverse_dynamics "
                          "returns it and Simulator(damping=True) applies it") -> bool:
    """``damping`` as a bool (True, False or a NumPy bool), else a one-line InputError naming
    ``where`` — every function that takes ``damping`` (issue 33's one statement of an effort)."""
    if damping is True or damping is False:
        return damping
    if isinstance(damping, np.bool_):
        return bool(damping)
    raise InputError(f"{where}: damping must be True ({meaning}) or False, got {damping!r}")


def _inverse_dynamics_fext(model, data, q, v, a, friction, velocity_tolerance,
                           smoothing_velocity, fext, packed, damping) -> np.ndarray:
    """:func:`inverse_dynamics` with external wrenches (the same steps, RNEA with ``fext``)."""
    where = "inverse_dynamics"
    F = check_fext(model, fext, where)
    specs = (("q", q, model.nq), ("v", v, model.nv), ("a", a, model.nv))
    if packed is not None:
        fr, mb, work, tol = packed[2], model._mb, data._work, float(velocity_tolerance)
        run_converted(where, specs,
                      lambda q, v, a: id_fext_entry(mb, fr, q, v, a, F, tol, damping, work))
        return data._id_out.copy()
    out = np.empty(model.nv)

    def run(q, v, a):
        try:
            fn_axial = rnea(model, data, q, v, a, F)
        except InputError:
            return False
        d = friction_directions(v, a, velocity_tolerance, smoothing_velocity)
        magnitude = friction.magnitudes(model, data.f, q, v, np.sign(d))
        data.tau_friction[:] = -magnitude * d
        out[:] = fn_axial - data.tau_friction
        if damping:
            out[:] += damping_effort(model, v)
        return bool(np.isfinite(out).all() and np.isfinite(data.tau_friction).all())

    run_converted(where, specs, run)
    return out
