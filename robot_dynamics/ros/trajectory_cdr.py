"""Read a serialized trajectory_msgs/JointTrajectory straight into arrays (no message objects).

rclpy turns a received JointTrajectory into one Python object per point and per field: for
100 000 points that takes seconds of interpreter time, which the controller's state thread then
has to share. The controller subscribes to the raw bytes instead and reads them here: the CDR
layout (classic little-endian CDR, what rmw_fastrtps and rmw_cyclonedds send) of a trajectory
whose points all have the same field sizes repeats every two points, so after walking the first
points field by field, every point's arrays are gathered at once with NumPy and every length
field is checked where the pattern puts it. Anything else — another encoding, points of varying
sizes, a length that is not where it should be — returns None and the caller deserializes the
usual way (``rclpy.serialization.deserialize_message``): never a wrong answer, only a slower one.

Layout (CDR, alignment relative to the payload after the 4-byte encapsulation header): Header
(int32 sec, uint32 nanosec, string frame_id), sequence<string> joint_names, sequence<point>;
a point is four sequence<float64> (positions, velocities, accelerations, effort: uint32 count
aligned to 4, doubles aligned to 8) and a Duration (int32 sec, uint32 nanosec).
"""
from __future__ import annotations

import numpy as np

_CDR_LE = b"\x00\x01"


def _align(p, a):
    return (p + a - 1) // a * a


def _u32(body, p):
    return int.from_bytes(body[p:p + 4], "little")


def _walk_point(body, p):
    """One point at ``p``: [(count, count offset, data offset)] × 4, duration offset, end."""
    fields = []
    for _ in range(4):
        p = _align(p, 4)
        count, at = _u32(body, p), p
        p += 4
        if count:
            p = _align(p, 8)
        fields.append((count, at, p))
        p += 8 * count
    p = _align(p, 4)
    return fields, p, p + 8


def parse_trajectory(raw: bytes):
    """(joint_names, times (K,), positions (K, n), velocities (K, n or 0), accelerations
    (K, n or 0), effort_given, stamp) from serialized bytes; None when the bytes are not in the
    one layout read here (the caller then deserializes normally)."""
    if len(raw) < 4 or bytes(raw[:2]) != _CDR_LE:
        return None
    body = memoryview(raw)[4:]
    size = len(body)
    try:
        sec = int.from_bytes(body[0:4], "little", signed=True)
        nsec = _u32(body, 4)
        p = 8
        p += 4 + _u32(body, p)  # frame_id
        p = _align(p, 4)
        count = _u32(body, p)
        p += 4
        names = []
        for _ in range(count):
            p = _align(p, 4)
            length = _u32(body, p)
            names.append(bytes(body[p + 4:p + 3 + length]).decode("utf-8"))
            p += 4 + length
        p = _align(p, 4)
        K = _u32(body, p)
        p += 4
        if K == 0 or p > size:
            return None
        walked, starts = [], [p]  # the first points, field by field
        for _ in range(min(K, 4)):
            fields, dur, end = _walk_point(body, starts[-1])
            if end > size:
                return None
            walked.append((fields, dur))
            starts.append(end)
    except (IndexError, ValueError, UnicodeDecodeError):
        return None
    n = len(names)
    counts = [c for c, _, _ in walked[0][0]]
    if counts[0] != n or any(c not in (0, n) for c in counts) or any(
            [c for c, _, _ in w[0]] != counts for w in walked):
        return None  # points of varying sizes: not this layout
    # a point's layout depends only on where it starts modulo 8 (0 or 4): offsets relative to
    # its start and its size, per class, from the walked points
    rel, sizes = np.zeros((2, 9), dtype=np.int64), [None, None]
    for j, (fields, dur) in enumerate(walked):
        c = (starts[j] % 8) // 4
        row = [x - starts[j] for _, at, off in fields for x in (at, off)] + [dur - starts[j]]
        if sizes[c] is not None and (sizes[c] != starts[j + 1] - starts[j] or
                                     list(rel[c]) != row):
            return None
        rel[c], sizes[c] = row, starts[j + 1] - starts[j]
    # from the second point on the classes repeat with period 1 or 2
    k = np.arange(K)
    cls = np.empty(K, dtype=np.int64)
    base = np.empty(K, dtype=np.int64)
    cls[0], base[0] = (starts[0] % 8) // 4, starts[0]
    if K > 1:
        c1 = (starts[1] % 8) // 4
        c2 = (c1 * 4 + sizes[c1]) % 8 // 4
        if sizes[c2] is None:
            return None
        period = 1 if c2 == c1 else 2
        stride = sizes[c1] if period == 1 else sizes[c1] + sizes[c2]
        m = k[1:] - 1
        cls[1:] = np.where(m % period == 0, c1, c2)
        base[1:] = starts[1] + (m // period) * stride + np.where(m % period == 0, 0, sizes[c1])
        if any(base[j] != starts[j] for j in range(1, len(walked))):
            return None
    parity = cls
    end = base[-1] + rel[cls[-1], 8] + 8
    if end > size:  # (a serialized buffer may carry padding after the message)
        return None
    u8 = np.frombuffer(body, dtype=np.uint8)

    def gather(offsets, nbytes):
        return u8[offsets[:, None] + np.arange(nbytes)]

    for f, c in enumerate(counts):  # every length field holds what the pattern says
        if np.any(gather(base + rel[parity, 2 * f], 4).view("<u4").ravel() != c):
            return None
    dur = gather(base + rel[parity, 8], 8)
    times = dur[:, :4].copy().view("<i4").ravel() + 1e-9 * dur[:, 4:].copy().view("<u4").ravel()
    arrays = []
    for f in range(3):
        if counts[f]:
            arrays.append(gather(base + rel[parity, 2 * f + 1], 8 * n).view("<f8").reshape(K, n))
        else:
            arrays.append(np.empty((K, 0)))
    return names, times, arrays[0], arrays[1], arrays[2], counts[3] > 0, sec + 1e-9 * nsec
