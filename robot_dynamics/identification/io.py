"""Reading recorded runs: CSV / NumPy files and ROS 2 bags (sqlite3 and MCAP, via ``rosbags``).

CSV: a header with ``t`` and, per joint, ``q_<joint>``, ``v_<joint>``, ``tau_<joint>`` (optional
``a_<joint>``). NPZ: arrays ``t``, ``q``, ``v``, ``tau`` (optional ``a``) and ``joint_names``.
Bags: ``sensor_msgs/msg/JointState`` on ``topic`` with position, velocity and effort; joints are
matched to the model by name (extra joints ignored).
"""
from __future__ import annotations

import os

import numpy as np

from ..errors import InputError


def _order(model, names, source):
    index = {n: k for k, n in enumerate(names)}
    missing = [j for j in model.joint_names if j not in index]
    if missing:
        raise InputError(f"{source}: joint(s) {missing} of robot {model.name!r} are not in the "
                         f"log (it has {list(names)})")
    return [index[j] for j in model.joint_names]


def load_csv(path, model):
    """Return dict t, q, v, tau (and a when present), columns in model order."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    if str(path).endswith(".npz"):
        z = np.load(path, allow_pickle=False)
        names = [str(n) for n in z["joint_names"]]
        order = _order(model, names, path)
        out = {"t": z["t"]}
        for key in ("q", "v", "tau", "a"):
            if key in z:
                out[key] = z[key][:, order]
        return out
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().strip().split(",")
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    data = np.atleast_2d(data)
    cols = {name: k for k, name in enumerate(header)}
    if "t" not in cols:
        raise InputError(f"{path}: no 't' column (header: {header})")
    out = {"t": data[:, cols["t"]]}
    for key in ("q", "v", "tau", "a"):
        want = [f"{key}_{j}" for j in model.joint_names]
        have = [w in cols for w in want]
        if not any(have) and key == "a":
            continue
        if not all(have):
            raise InputError(f"{path}: missing column(s) "
                             f"{[w for w, h in zip(want, have) if not h]}")
        out[key] = data[:, [cols[w] for w in want]]
    return out


def load_bag(path, model, topic="/joint_states"):
    """JointState samples from a ROS 2 bag directory or file (sqlite3 or MCAP)."""
    from pathlib import Path

    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    if not os.path.exists(path):
        raise InputError(f"{path}: no such bag")
    with AnyReader([Path(path)], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        conns = [c for c in reader.connections if c.topic == topic]
        if not conns:
            raise InputError(f"{path}: no topic {topic!r}; topics: "
                             f"{sorted({c.topic for c in reader.connections})}")
        t, q, v, tau = [], [], [], []
        order = None
        for conn, _, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            if order is None:
                order = _order(model, list(msg.name), f"{path}:{topic}")
            if len(msg.effort) == 0 or len(msg.velocity) == 0:
                raise InputError(f"{path}:{topic}: JointState without velocity/effort; "
                                 "identification needs both")
            t.append(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)
            q.append(np.asarray(msg.position)[order])
            v.append(np.asarray(msg.velocity)[order])
            tau.append(np.asarray(msg.effort)[order])
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
