"""A log written by MuJoCo, fitted with the classic law (issue 33, item 4): arm7's URDF in
MuJoCo (contacts off, 500 Hz, semi-implicit Euler with implicit damping), joint frictionloss
0.8 N·m and damping 0.3 N·m·s/rad on every joint, no armature; tracked by computed torque
(rd.inverse_dynamics + the known friction, PD 400/40) along a random Fourier excitation for
20 s; logged (t, q + 1e-5 rad noise, applied effort + 0.02 N·m noise), no velocities; then
``fit(model, q, None, tau, t=t, law="classic", min_velocity=...)`` — or, with ``--states``,
from MuJoCo's own states (velocities logged, q̈ = Δq̇/h, the effort against the state before
the step): ``fit(model, q[:-1], v[:-1], tau[1:], a=Δv/h, law="classic")``.

    PYTHONPATH=. python3 bench/bench_identification_mujoco.py --seeds 0,1,2 [--states]
        [--min-velocity 0.05] [--no-band]   # --no-band: fit(..., low_speed_band=False)

Prints per joint the coefficients ± SE (the total: noise and the states' reconstruction error,
``JointFit.reconstruction_errors``, shown after 'rec'), '*' where |estimate − MuJoCo's| > 3 SE or > 25 %, the
fitted effort delay (MuJoCo's step: the effort of a step acts at the state one step before the
logged one) and the residual RMS; also the RMS of MuJoCo's own frictionloss force minus the
Coulomb law ∓0.8 over the rows faster than each speed (MuJoCo's soft friction constraint is
below frictionloss up to |q̇| ≈ frictionloss·(1 − d)/d·invweight/b, d = 0.9, b = 2/(0.95·0.02 s):
≈ 0.94 rad/s on the light joint_a7), and the low-speed band the fit left out
(``JointFit.low_speed_band``, derived from the log).
"""
from __future__ import annotations

import argparse
import os
import re

import mujoco
import numpy as np

import robot_dynamics as rd
from robot_dynamics.control.trajectory import JointTrajectory
from robot_dynamics.identification import fit, fourier_excitation

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, "..", "urdf", "arm7.urdf")
COULOMB, VISCOUS, H = 0.8, 0.3, 2e-3
SIGMA_Q, SIGMA_TAU = 1e-5, 0.02


def mujoco_log(model, seed, duration=20.0):
    xml = open(URDF, encoding="utf-8").read()
    xml = re.sub(r"<(visual|collision)\b.*?</\1>", "", xml, flags=re.S)
    xml = re.sub(r"<robot([^>]*)>", r'<robot\1><mujoco><compiler discardvisual="true" '
                 r'fusestatic="false" balanceinertia="false"/></mujoco>', xml, count=1)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = H
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n) for n in model.joint_names]
    dofs, qadr = np.array([m.jnt_dofadr[i] for i in ids]), np.array([m.jnt_qposadr[i] for i in ids])
    m.dof_frictionloss[dofs], m.dof_damping[dofs], m.dof_armature[:] = COULOMB, VISCOUS, 0.0
    d = mujoco.MjData(m)
    t, Q, V, A = fourier_excitation(model, duration=duration + 0.5, rate=50.0, seed=seed)
    traj = JointTrajectory(t, Q, V, A)
    data = model.create_data()
    d.qpos[qadr], d.qvel[dofs] = Q[0], V[0]
    n = int(round(duration / H))
    log = {k: np.empty((n, model.nv)) for k in ("q", "v", "tau", "friction")}
    log["t"] = np.empty(n)
    for k in range(n):
        q, v = d.qpos[qadr].copy(), d.qvel[dofs].copy()
        qd, vd, ad = traj.sample(d.time)
        tau = (rd.inverse_dynamics(model, data, q, v, ad + 40 * (vd - v) + 400 * (qd - q))
               + COULOMB * np.sign(v) + VISCOUS * v)
        d.qfrc_applied[dofs] = tau
        mujoco.mj_step(m, d)
        log["t"][k], log["q"][k], log["v"][k] = d.time, d.qpos[qadr], d.qvel[dofs]
        log["tau"][k], log["friction"][k] = tau, d.qfrc_constraint[dofs]
    rng = np.random.default_rng(seed)
    log["q_noisy"] = log["q"] + rng.normal(scale=SIGMA_Q, size=log["q"].shape)
    log["tau_noisy"] = log["tau"] + rng.normal(scale=SIGMA_TAU, size=log["tau"].shape)
    return log


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--min-velocity", type=float, default=0.05)
    p.add_argument("--no-band", action="store_true")
    p.add_argument("--states", action="store_true")
    args = p.parse_args()
    model = rd.load_urdf(URDF)
    truth = {"coulomb_positive": COULOMB, "coulomb_negative": COULOMB, "viscous": VISCOUS}
    for seed in (int(s) for s in args.seeds.split(",")):
        log = mujoco_log(model, seed)
        for i, name in enumerate(model.joint_names):
            errs = []
            for lim in (0.05, 0.2, 0.5):
                mv = np.abs(log["v"][:, i]) > lim
                e = log["friction"][mv, i] + COULOMB * np.sign(log["v"][mv, i])
                errs.append(f"{np.sqrt(np.mean(e ** 2)):.3g}")
            print(f"seed {seed} {name}: MuJoCo friction − Coulomb RMS beyond |q̇| 0.05/0.2/0.5: "
                  + "/".join(errs))
        kw = dict(law="classic", min_velocity=args.min_velocity, low_speed_band=not args.no_band)
        if args.states:
            r = fit(model, log["q_noisy"][:-1], log["v"][:-1], log["tau_noisy"][1:],
                    a=np.diff(log["v"], axis=0) / H, **kw)
        else:
            r = fit(model, log["q_noisy"], None, log["tau_noisy"], t=log["t"], **kw)
        bad = 0
        for j in r.joints:
            row = []
            for k, x in j.coefficients.items():
                se = j.standard_errors[k]
                ok = abs(x - truth[k]) <= min(3 * se, 1e9) and abs(x - truth[k]) <= 0.25 * truth[k]
                bad += not ok
                rec = j.reconstruction_errors.get(k)
                row.append(f"{k} {x:.4f} ± {se:.4f}" + (f" (rec {rec:.4f})" if rec else "")
                           + ("" if ok else "*"))
            delay = f"delay {1e3 * j.effort_delay[0]:.2f} ms, " if j.effort_delay else ""
            band = (f"band |q̇| ≤ {j.low_speed_band[0]:.3g} left out, "
                    if j.low_speed_band else "")
            print(f"  {j.joint}: " + ", ".join(row) + f"; {delay}{band}residual "
                  f"{j.residual_rms:.3g} (noise {j.noise_rms:.3g}"
                  + (", MODEL MISMATCH)" if j.model_mismatch else ")"))
        print(f"seed {seed}: {bad} of {3 * model.nv} coefficients off (> 3 SE or > 25 %)")


if __name__ == "__main__":
    main()
