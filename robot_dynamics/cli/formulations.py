"""``robot-dynamics derive <robot> --method ... [--latex FILE]``: equations of motion, symbolic.

Prints τ = M(q) q̈ + V(q, q̇) + G(q) for a small serial robot, derived by the chosen method on the
redundant coordinates of seeds 000/001 (:mod:`robot_dynamics.formulations.redundant`):

* ``gibbs-appell`` — ∂S/∂ṗ# of the acceleration energy;
* ``lagrange-euler`` — Lagrange's equations d/dt ∂T/∂q̇ − ∂T/∂q;
* ``kane`` — partial velocities times the inertia forces;
* ``newton-euler`` — seed 004's pairing of the velocity basis vω_α with the body efforts FN of
  seed 002's equations (τ_α = Σ_i vω_αi · FN_i): algebraically Kane's form.

All four give the same M, V, G (tested numerically against the core's RNEA).
"""
from __future__ import annotations

import sys

from robot_dynamics.errors import ModelError, OneLineParser

METHODS = ("newton-euler", "lagrange-euler", "gibbs-appell", "kane")


#: a term of an equation whose coefficient is below this fraction of the equation's largest is
#: floating-point roundoff of the URDF's numbers (e.g. 8e-28·q̇₁² beside 3e-3·q̇₁² from
#: cos(π/2) ≠ 0 in a frame's rpy), dropped; a term of real data is far above it
ROUNDOFF = 1e-13


def chop(expr, rel=ROUNDOFF):
    """``expr`` expanded, without the terms whose numeric coefficient is at most ``rel`` times
    the largest one's (:data:`ROUNDOFF`)."""
    import sympy as sp

    terms = sp.Add.make_args(sp.expand(expr))
    size = [abs(complex(t.as_coeff_Mul()[0])) for t in terms]
    big = max(size, default=0.0)
    return sp.Add(*(t for t, c in zip(terms, size) if c > rel * big))


def derive(model, method):
    """(M, V, G, system) as simplified SymPy matrices in the joint symbols, without the terms
    that are roundoff (:func:`chop`)."""
    import sympy as sp

    from robot_dynamics.formulations.redundant import from_model

    system = from_model(model)
    if method == "gibbs-appell":
        tau = system.gibbs_appell_equations()[1]
    elif method == "lagrange-euler":
        tau = system.lagrange_equations()
    else:
        tau = system.kane_equations()
    tau = tau.applyfunc(chop)
    M = sp.simplify(tau.jacobian(system.qdd))
    no_acc = {s: 0 for s in system.qdd}  # τ is affine in q̈: split it by substitution
    no_vel = {s: 0 for s in system.qd}
    G = sp.simplify(tau.subs(no_acc).subs(no_vel))
    V = sp.simplify(tau.subs(no_acc) - G)
    return M, V, G, system


def main(argv=None) -> int:
    parser = OneLineParser(
        prog="robot-dynamics derive",
        description="Equations of motion τ = M(q) q̈ + V(q, q̇) + G(q) of a small serial robot, "
                    "symbolic (SymPy), on the redundant coordinates of seeds 000/001.")
    parser.add_argument("robot", help="bundled robot name or URDF path (serial, ≤ 4 joints)")
    parser.add_argument("--method", choices=METHODS, default="gibbs-appell",
                        help="gibbs-appell: ∂S/∂ṗ# of the acceleration energy; lagrange-euler: "
                             "d/dt ∂T/∂q̇ − ∂T/∂q; kane: partial velocities times inertia "
                             "forces; newton-euler: seed 004's vω_α · FN pairing (Kane's form); "
                             "all give the same M, V, G (default: gibbs-appell)")
    parser.add_argument("--latex", default=None, help="also write the equations as LaTeX here")
    args = parser.parse_args(argv)
    from robot_dynamics.parsers.urdf import load_urdf
    from robot_dynamics.parsers.resources import robot_path  # after --help: these load numba
    import sympy as sp  # after --help: SymPy takes seconds to import

    from robot_dynamics.errors import InputError, check_writable

    try:
        if args.latex:
            check_writable(args.latex, "--latex")
        model = load_urdf(robot_path(args.robot))
        M, V, G, system = derive(model, args.method)
    except (ModelError, InputError) as exc:
        print(f"robot-dynamics derive: {exc}", file=sys.stderr)
        return 2
    q = ", ".join(str(s) for s in system.q)
    print(f"{model.name}: τ = M(q) q̈ + V(q, q̇) + G(q), q = ({q}), method {args.method}")
    for name, mat in (("M", M), ("V", V), ("G", G)):
        print(f"\n{name} =")
        sp.pprint(mat, use_unicode=True, wrap_line=False)
    if args.latex:
        with open(args.latex, "w", encoding="utf-8") as fh:
            fh.write(f"% {model.name}, method {args.method}\n")
            for name, mat in (("M", M), ("V", V), ("G", G)):
                fh.write(f"{name} = {sp.latex(mat)}\n\n")
        print(f"\nLaTeX written to {args.latex}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
