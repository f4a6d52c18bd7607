"""One clean shutdown per process, whatever SIGINT/SIGTERM come and whenever.

A terminal's Ctrl-C reaches every process of its group, and ``ros2 launch`` forwards its own
SIGINT to each node as well: a node gets two or more signals, often a few milliseconds apart.
Python's default handler raises KeyboardInterrupt for each; the second one landed inside the
clean-up of the first (destroying the node, ``rclpy.shutdown``), left rclpy half shut down — its
signal-handler thread still running when the interpreter exited, hence C++'s ``terminate called
without an active exception`` (exit -6) — or escaped as exit -2 / 130. A signal before
``rclpy.init`` (while the modules load or the kernels compile) printed a KeyboardInterrupt
traceback.

:func:`install` (light: no rclpy, no numpy) makes the first SIGINT or SIGTERM raise
KeyboardInterrupt once, in the main thread, and every later one a no-op, so the clean-up runs
to its end; :func:`finish`, once it is done, ignores them for the rest of the process (the
interpreter's finalization restores the default handlers of Python-level ones, and a signal
then killed the process: exit -2/-15 after a clean shutdown). rclpy's own handlers, installed later by ``rclpy.init``, chain to these (they keep
waking the executor by shutting its context down).
"""
from __future__ import annotations

import signal
import threading

_state = {"installed": False, "received": None}


def _handler(signum, _frame):
    if _state["received"] is not None:  # shutting down already: let the clean-up finish
        return
    _state["received"] = signum
    raise KeyboardInterrupt


def install() -> bool:
    """Install the handlers (main thread only; idempotent). Returns whether they are in place."""
    if _state["installed"]:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _handler)
    _state["installed"] = True
    return True


def received():
    """The first signal received (a signal number), or None."""
    return _state["received"]


def finish():
    """After a signal's clean-up: ignore SIGINT/SIGTERM while the process exits (SIG_IGN
    survives the interpreter's finalization). Nothing when no signal came (an in-process use,
    e.g. a test, keeps its handlers)."""
    if _state["received"] is None or threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
