"""Model-build time: URDF parse + build_model for generated chains and for many fixed frames.

Run: ``PYTHONPATH=$PWD python3 bench/bench_build.py [--frames N]``. Prints wall and CPU seconds
(CPU time is the honest number on a shared machine). No timing is asserted anywhere: targets
(issue 11) are a 1000-joint chain well under a second and 100 000 fixed frames in seconds.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import robot_dynamics as rd  # noqa: E402
from bench_dynamics import chain_urdf  # noqa: E402


def frames_urdf(n: int) -> str:
    """A 2-joint arm carrying ``n`` fixed frames (sensor, marker, tool frames), half on the
    base and half on the last link."""
    link = ('<link name="l{i}"><inertial><origin xyz="0 0 0.05"/><mass value="1"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.005" ixy="0" ixz="0" iyz="0"/>'
            '</inertial></link>')
    body = '<link name="base"/>' + link.format(i=1) + link.format(i=2)
    body += ''.join(f'<joint name="j{i}" type="revolute"><parent link="{p}"/><child link="l{i}"/>'
                    '<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>'
                    '<limit effort="10" velocity="2" lower="-3" upper="3"/></joint>'
                    for i, p in ((1, "base"), (2, "l1")))
    body += "".join(f'<link name="f{k}"/><joint name="fj{k}" type="fixed">'
                    f'<parent link="{"l2" if k % 2 else "base"}"/><child link="f{k}"/>'
                    f'<origin xyz="0 0 {k * 1e-5:.5f}" rpy="0 0.1 0"/></joint>' for k in range(n))
    return f'<robot name="frames{n}">{body}</robot>'


def timed(text: str):
    w, c = time.perf_counter(), time.process_time()
    desc = rd.parse_urdf(text)
    w1, c1 = time.perf_counter(), time.process_time()
    model = rd.build_model(desc)
    w2, c2 = time.perf_counter(), time.process_time()
    return model, (w1 - w, c1 - c), (w2 - w1, c2 - c1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, nargs="*", default=[10, 100, 1000, 5000])
    ap.add_argument("--frames", type=int, nargs="*", default=[1000, 100_000])
    args = ap.parse_args(argv)
    timed(chain_urdf(3))  # imports and the first compiled-kernel load out of the timings
    print("model build (seconds; wall / CPU)")
    print(f"{'robot':<22}{'parse':>16}{'build_model':>16}{'total CPU':>11}")
    cases = [(f"chain {n} joints", chain_urdf(n)) for n in args.chains]
    cases += [(f"{n} fixed frames", frames_urdf(n)) for n in args.frames]
    for name, text in cases:
        model, (pw, pc), (bw, bc) = timed(text)
        print(f"{name:<22}{pw:8.3f} /{pc:6.3f}{bw:8.3f} /{bc:6.3f}{pc + bc:11.3f}"
              f"   (nv={model.nv}, frames={len(model.frames)})")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory {rss:.0f} MiB")


if __name__ == "__main__":
    main()
