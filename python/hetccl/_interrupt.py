"""Ctrl-C during a blocking call (issue 27 item 8): a KeyboardInterrupt promptly, the communicator aborted.

A C call holds the main thread until it returns, and Python runs its SIGINT handler only between
bytecodes: without this, Ctrl-C in a collective that waits for a peer did nothing until HETCCL_TIMEOUT.
So, with the default SIGINT handler (signal.default_int_handler) in place:

- `install()` (at the first Communicator made on the main thread) sets a `signal.set_wakeup_fd` pipe --
  only when no other wakeup fd is set (asyncio's, trio's: theirs stays, and Ctrl-C then waits as before)
  -- and starts a daemon thread reading it. Nothing runs per call but _lib's record of the handle the
  main thread is blocked on (_lib.inside).
- On a SIGINT byte, if the main thread is inside a blocking call, the thread aborts that communicator
  (hetcclCommAbort from another thread is safe: tests/unit/api/abort_race_test.cc) and marks the Python
  object aborted. The blocked call returns hetcclRemoteError at once, and Python raises the
  KeyboardInterrupt that its own C handler left pending -- not a HetcclError. The call waits, in its
  `finally`, for the abort to end before the KeyboardInterrupt goes on (the process may exit next).
- The pipe is removed (the previous wakeup fd restored) when the last communicator is destroyed or
  aborted on the main thread; a forked child drops it (its signals must not abort the parent's calls).

Not interruptible: init (hetcclCommInitRank has no handle to abort until it returns), calls on other
threads, and calls made while another wakeup fd or a non-default SIGINT handler is installed."""

from __future__ import annotations

import atexit
import os
import signal
import threading
import weakref

from . import _lib

comms = weakref.WeakValueDictionary()  # handle -> Communicator, for marking the object aborted
aborted = {}     # handle -> message, for every communicator a signal aborted here
_pending = {}    # handle -> lock held while its abort runs (settle() waits for it)
_mu = threading.Lock()
_rfd = _wfd = None
_thread = None
_SIGINT = bytes([signal.SIGINT])


def register(comm, h):
    comms[h] = comm
    if _thread is None and _lib.is_main_thread():
        install()


def install():
    """Sets our wakeup fd and starts the reader thread: main thread only, and only when no wakeup fd is set."""
    global _rfd, _wfd, _thread
    if _thread is not None or not _lib.is_main_thread():
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(r)
        os.close(w)
        return
    if old != -1:  # someone else's (an event loop): leave it in place
        signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)
        return
    _rfd, _wfd = r, w
    _thread = threading.Thread(target=_watch, args=(r,), name="hetccl-sigint", daemon=True)
    _thread.start()


def uninstall():
    """Restores the wakeup fd as it was before install() (main thread, once no communicator is left)."""
    global _rfd, _wfd, _thread
    if _thread is None or not _lib.is_main_thread():
        return
    try:
        cur = signal.set_wakeup_fd(-1)
        if cur not in (-1, _wfd):  # someone replaced ours since: theirs stays
            signal.set_wakeup_fd(cur)
    except (ValueError, OSError):
        return
    w, _wfd, _rfd, _thread = _wfd, None, None, None
    os.close(w)  # the reader sees end of file, closes its end and ends


def maybe_uninstall():
    if _thread is not None and not comms:
        uninstall()


def _watch(r):
    try:
        while True:
            try:
                data = os.read(r, 512)
            except InterruptedError:
                continue
            if not data:
                break
            if _SIGINT in data:
                _on_sigint()
    except OSError:
        pass
    finally:
        try:
            os.close(r)
        except OSError:
            pass


def _on_sigint():
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return  # the program's own handler decides (it runs once the call returns)
    hs, name = _lib.inside, _lib.inside_call
    if hs is None:
        return  # not blocked in a call: Python raises KeyboardInterrupt by itself
    for h in (hs if isinstance(hs, tuple) else (hs,)):
        _abort(h, name)


def _abort(h, name):
    with _mu:
        if h in aborted:
            return
        comm = comms.get(h)
        who = f"rank {comm.rank} of {comm.size}" if comm is not None else "this rank"
        aborted[h] = (f"the communicator was aborted: SIGINT (KeyboardInterrupt) arrived while {who} was "
                      f"blocked in {name}; create a new communicator")
        done = threading.Lock()
        done.acquire()
        _pending[h] = done
        _lib.settling = True
    try:
        if comm is not None:
            comm._abort_on_signal(h, aborted[h])
        else:
            _lib.fn.hetcclCommAbort(h)
    except Exception:  # noqa: BLE001 - never let the reader thread die
        pass
    finally:
        with _mu:
            _pending.pop(h, None)
        done.release()


def settle(hs):
    """Called by a blocking call of the main thread as it leaves: waits (bounded) for a signal's abort of
    its communicator to end, so that the KeyboardInterrupt reaches the program only once it is done."""
    for h in (hs if isinstance(hs, tuple) else (hs,)):
        done = _pending.get(h)
        if done is not None and done.acquire(timeout=10):
            done.release()


def check_signals():
    """Runs Python's pending signal handlers now (a KeyboardInterrupt is raised from here)."""
    import ctypes

    ctypes.pythonapi.PyErr_CheckSignals()


def _settle_all():
    settle(tuple(_pending))  # no library teardown at exit while the reader thread is inside an abort


atexit.register(_settle_all)


def _after_fork_in_child():
    global _rfd, _wfd, _thread
    _lib._MAIN = threading.get_ident()
    _lib.inside = None
    if _thread is None:
        return
    try:  # the pipe is shared with the parent: a signal of this child must not wake the parent's reader
        cur = signal.set_wakeup_fd(-1)
        if cur not in (-1, _wfd):
            signal.set_wakeup_fd(cur)
    except (ValueError, OSError):
        pass
    for fd in (_rfd, _wfd):
        try:
            os.close(fd)
        except OSError:
            pass
    _rfd = _wfd = _thread = None


os.register_at_fork(after_in_child=_after_fork_in_child)
_lib._settle = settle  # _lib calls it once `settling` is set (only this module sets it)
