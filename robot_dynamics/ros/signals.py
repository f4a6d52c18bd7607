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
to its end. The node executables call it first thing (cli.main.node_main; importing cli.main
loads nothing heavy): when their first line still imported numpy before it, a Ctrl-C about a
second into ``ros2 launch`` killed every node with -2 and a traceback. Only a signal inside the
interpreter's own start-up (site-packages' .pth files, tens of milliseconds) comes before any
code of the package. :func:`finish`, once the clean-up is done, ignores them for the rest of
the process (the interpreter's finalization restores the default handlers of Python-level ones,
and a signal then killed the process: exit -2/-15 after a clean shutdown). rclpy's own
handlers, installed later by ``rclpy.init``, chain to these (they keep waking the executor by
shutting its context down).
"""
from __future__ import annotations

import signal
import sys
import threading

_state = {"installed": False, "received": None, "pending": False, "held": False,
          "unraisablehook": None, "stop": None, "up": False, "said": False}

#: Modules whose Python code runs inside ctypes callbacks of C/C++ code: llvmlite's object-cache
#: hooks, called by LLVM while numba loads or compiles a kernel (at every node start). A
#: KeyboardInterrupt raised there never reaches the node — ctypes prints "Exception ignored on
#: calling ctypes callback function" with a traceback and returns to LLVM with the callback's
#: work half done (the cached object's buffer pointer unset: LLVM then crashed, exit -11).
_CALLBACK_MODULES = ("llvmlite.",)
#: how soon a deferred KeyboardInterrupt is raised again [s]
_RETRY = 0.02


def _in_callback(frame) -> bool:
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith(_CALLBACK_MODULES):
            return True
        frame = frame.f_back
    return False


def _retry(signum):
    """Raise the KeyboardInterrupt again in a moment: a thread makes the main thread run the
    handler (``_thread.interrupt_main``) once the current callback has returned. A bare
    ``_thread`` one: threading.Thread.start takes a module lock that the interrupted main thread
    may hold."""
    import _thread
    import time

    def later():
        time.sleep(_RETRY)
        if _state["pending"]:
            _thread.interrupt_main(signum)

    _thread.start_new_thread(later, ())


def _handler(signum, frame):
    if _state["held"]:
        return
    if _state["received"] is not None and not _state["pending"]:
        return  # shutting down already: let the clean-up finish
    if _state["received"] is None:
        _state["received"] = signum
    if _state["stop"] is not None:  # spinning: end the spin, raise nothing (stop_by says why)
        _state["held"] = True
        import _thread

        _thread.start_new_thread(_state["stop"], ())
        return
    if _in_callback(frame):  # not here: it would be lost, and the callback's work with it
        _state["pending"] = True
        _retry(signum)
        return
    _state["pending"] = False
    raise KeyboardInterrupt


def _unraisable(info):
    """A KeyboardInterrupt of ours swallowed where Python cannot raise (a ``__del__``, a ctypes
    callback of a module not in _CALLBACK_MODULES): raised again a moment later, without the
    traceback Python prints for it; anything else goes to the previous hook."""
    if (issubclass(info.exc_type, KeyboardInterrupt) and _state["received"] is not None
            and not _state["held"]):
        _state["pending"] = True
        _retry(_state["received"])
        return
    (_state["unraisablehook"] or sys.__unraisablehook__)(info)


def install() -> bool:
    """Install the handlers (main thread only; idempotent). Returns whether they are in place."""
    if _state["installed"]:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _handler)
    _state["unraisablehook"], sys.unraisablehook = sys.unraisablehook, _unraisable
    _state["installed"] = True
    return True


def stop_by(stop):
    """From now on (the node built, its executor about to spin) a signal calls ``stop`` on a
    thread of its own (a context's ``try_shutdown``, which ends the spin) instead of raising
    KeyboardInterrupt. Raised at whatever bytecode the executor was at, the KeyboardInterrupt
    could land inside rclpy itself: inside a Future's ``__init__`` on Jazzy, whose half-made Task
    then printed an ``AttributeError`` traceback from its ``__del__`` as the node exited. rclpy's
    own handler shuts the contexts down too; ``stop`` makes the end not depend on it. ``None``:
    back to raising. The first ``stop`` marks the node up: its start-up is over (:func:`up`)."""
    _state["stop"] = stop
    if stop is not None:
        _state["up"] = True


def up() -> bool:
    """Whether the node got to spin (:func:`stop_by`): a signal before that interrupted its
    start-up."""
    return _state["up"]


def mark_said() -> bool:
    """Test-and-set: mark that the closing line is said (by the node, or by the command line's
    start-up line, cli.main.closing_line) and return whether it had been said before. The one
    who gets False says it; so only one line is said, whoever comes first."""
    before, _state["said"] = _state["said"], True
    return before


def hold():
    """The clean-up begins (whatever started it): after a signal, no KeyboardInterrupt any more,
    not even a deferred one. Nothing when no signal came."""
    if _state["received"] is not None:
        _state["held"] = True
        _state["pending"] = False


def received():
    """The first signal received (a signal number), or None."""
    return _state["received"]


def received_name():
    """The first signal received by name (``SIGINT``), or None."""
    if _state["received"] is None:
        return None
    try:
        return signal.Signals(_state["received"]).name
    except ValueError:
        return f"signal {_state['received']}"


def forget_keyboard_interrupt():
    """Clear CPython's "unhandled KeyboardInterrupt" flag. A KeyboardInterrupt that passed
    through an ``exec`` of a string on its way to our handler (namedtuple and dataclass
    definitions while the modules load: importlib.metadata, encodings) sets it, however it is
    caught afterwards; under ``python -m`` (Py_RunMain) the interpreter then ends by killing
    itself with SIGINT — exit -2 after a clean shutdown, whatever the handlers (a node's exit 0,
    ``sim``'s 130). Each evaluation of a string clears the flag first, and this one succeeds;
    a KeyboardInterrupt that does leave the program sets it again after this."""
    exec("pass")


def finish():
    """After a signal's clean-up: ignore SIGINT/SIGTERM while the process exits (SIG_IGN
    survives the interpreter's finalization), and :func:`forget_keyboard_interrupt` — for
    ``cli.main`` and :func:`~robot_dynamics.ros.common.run_node` alike (``python -m
    robot_dynamics.ros.<node>`` exited by SIGINT after a clean stop too). Nothing when no signal
    came (an in-process use, e.g. a test, keeps its handlers)."""
    if _state["received"] is None or threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    forget_keyboard_interrupt()  # the signal's KeyboardInterrupt was caught: not "unhandled"
