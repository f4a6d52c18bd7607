"""Reading recorded runs: CSV / NumPy files and ROS 2 bags (sqlite3 and MCAP, via ``rosbags``).

:data:`FORMATS` is the specification (also printed by ``robot-dynamics identify --help``).
Every format mistake is an :class:`~robot_dynamics.errors.InputError` with a one-line message.
"""
from __future__ import annotations

import os

import numpy as np

from robot_dynamics.errors import InputError

FORMATS = """\
log formats (SI units: s, rad or m, rad/s or m/s, N·m or N; one row per control period):
  CSV  comma-separated, first line a header naming the columns:
         t                    time stamp [s], strictly increasing
         q_<joint>            position of each movable URDF joint
         v_<joint>            (optional) velocity; without it the fit differentiates q
         tau_<joint>          motor effort applied over the period ending at t
         a_<joint>            (optional) acceleration; then no differentiation
       extra columns are ignored; every joint of the robot must be present.
  NPZ  numpy.savez arrays: t (N,), q, tau (N, n) (optional v, a), joint_names (n,) of str,
       the column order of q, v, tau; extra joints are ignored.
  bag  ROS 2 bag directory (sqlite3 .db3 or MCAP) with sensor_msgs/msg/JointState on --topic
       (default /joint_states): header.stamp, name, position, velocity and effort (the applied
       motor effort, as the simulator node publishes it) all filled; joints matched by name."""


def _order(model, names, source):
    index = {n: k for k, n in enumerate(names)}
    missing = [j for j in model.joint_names if j not in index]
    if missing:
        raise InputError(f"{source}: joint(s) {missing} of robot {model.name!r} are not in the "
                         f"log (it has {list(names)[:12]}{' …' if len(names) > 12 else ''})")
    return [index[j] for j in model.joint_names]


def load_csv(path, model):
    """Return dict t, q, v, tau (and a when present), columns in model order."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    if str(path).endswith(".npz"):
        return _load_npz(path, model)
    with open(path, encoding="utf-8") as fh:
        header = [h.strip() for h in fh.readline().strip().split(",")]
    if not any(header):
        raise InputError(f"{path}: empty file; expected a header line (t, q_<joint>, v_<joint>, "
                         "tau_<joint>) and one row per sample")
    if all(_is_number(h) for h in header):
        raise InputError(f"{path}: no header line (the first line is numbers); the first line must "
                         "name the columns: t, q_<joint>, v_<joint>, tau_<joint> per joint")
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    if data.size == 0:
        raise InputError(f"{path}: a header but no data rows")
    data = np.atleast_2d(data)
    if data.shape[1] != len(header):
        raise InputError(f"{path}: {data.shape[1]} values per row but {len(header)} header names")
    cols = {name: k for k, name in enumerate(header)}
    if "t" not in cols:
        raise InputError(f"{path}: no 't' column (header starts {header[:5]})")
    out = {"t": data[:, cols["t"]]}
    missing = []  # every missing column at once, not one per run
    for key in ("q", "v", "tau", "a"):
        want = [f"{key}_{j}" for j in model.joint_names]
        have = [w in cols for w in want]
        if not any(have) and key in ("a", "v"):  # no velocities: the fit differentiates q
            continue
        if not all(have):
            missing += [w for w, h in zip(want, have) if not h]
            continue
        out[key] = data[:, [cols[w] for w in want]]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing}")
    return out


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _load_npz(path, model):
    try:
        z = np.load(path, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is one line
        raise InputError(f"{path}: not a readable NPZ file ({exc})") from None
    need = [k for k in ("t", "q", "tau", "joint_names") if k not in z.files]
    if need:
        raise InputError(f"{path}: NPZ lacks array(s) {need} (has {sorted(z.files)}); expected "
                         "t, q, tau, joint_names (optional v, a)")
    names = [str(n) for n in np.atleast_1d(z["joint_names"])]
    order = _order(model, names, path)
    out = {"t": np.asarray(z["t"], float).reshape(-1)}
    for key in ("q", "v", "tau", "a"):
        if key in z.files:
            arr = np.asarray(z[key], float)
            if arr.ndim != 2 or arr.shape != (len(out["t"]), len(names)):
                raise InputError(f"{path}: array {key!r} has shape {arr.shape}; expected "
                                 f"({len(out['t'])}, {len(names)}) = (len(t), len(joint_names))")
            out[key] = arr[:, order]
    return out


def load_bag(path, model, topic="/joint_states"):
    """JointState samples from a ROS 2 bag directory or file (sqlite3 or MCAP)."""
    from pathlib import Path

    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    if not os.path.exists(path):
        raise InputError(f"{path}: no such bag (or .csv / .npz file)")
    if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "metadata.yaml")):
        raise InputError(f"{path}: a folder without metadata.yaml, not a ROS 2 bag; logs are bag "
                         "directories, .csv or .npz files")
    try:
        reader = AnyReader([Path(path)], default_typestore=get_typestore(Stores.ROS2_JAZZY))
        reader.open()
    except Exception as exc:  # noqa: BLE001 - rosbags raises several types
        raise InputError(f"{path}: not a readable ROS 2 bag ({str(exc).splitlines()[0]}); logs "
                         "are bag directories, .csv or .npz files") from None
    try:
        conns = [c for c in reader.connections if c.topic == topic]
        if conns and conns[0].msgtype != "sensor_msgs/msg/JointState":
            raise InputError(f"{path}: topic {topic!r} carries {conns[0].msgtype}, not "
                             "sensor_msgs/msg/JointState")
        if not conns:
            raise InputError(f"{path}: no topic {topic!r}; topics: "
                             f"{sorted({c.topic for c in reader.connections})}")
        t, q, v, tau = [], [], [], []
        order = None
        for conn, _, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            if order is None:
                order = _order(model, list(msg.name), f"{path}:{topic}")
            n = len(msg.name)
            if len(msg.effort) != n or len(msg.velocity) != n or len(msg.position) != n:
                raise InputError(f"{path}:{topic}: JointState at t={msg.header.stamp.sec}."
                                 f"{msg.header.stamp.nanosec:09d} has {len(msg.position)} "
                                 f"positions, {len(msg.velocity)} velocities, {len(msg.effort)} "
                                 f"efforts for {n} names; identification needs all three filled")
            t.append(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)
            q.append(np.asarray(msg.position)[order])
            v.append(np.asarray(msg.velocity)[order])
            tau.append(np.asarray(msg.effort)[order])
    finally:
        reader.close()
    if not t:
        raise InputError(f"{path}: topic {topic!r} has no messages")
    return {"t": np.array(t), "q": np.array(q), "v": np.array(v), "tau": np.array(tau)}


def save_bag(path, model, t, q, v, tau, topic="/joint_states"):
    """Write JointState samples to a ROS 2 bag (sqlite3), as the simulator node publishes them."""
    from pathlib import Path

    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    JointState = ts.types["sensor_msgs/msg/JointState"]
    Header = ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    with Writer(Path(path), version=8) as writer:
        conn = writer.add_connection(topic, JointState.__msgtype__, typestore=ts)
        for k in range(len(t)):
            ns = int(round(t[k] * 1e9))
            msg = JointState(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9),
                                           frame_id=""),
                             name=list(model.joint_names), position=np.asarray(q[k], float),
                             velocity=np.asarray(v[k], float), effort=np.asarray(tau[k], float))
            writer.write(conn, ns, ts.serialize_cdr(msg, JointState.__msgtype__))
