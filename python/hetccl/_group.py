"""Groups (hetcclGroupStart/GroupEnd) and the per-thread list of buffers kept alive until a group ends."""

from __future__ import annotations

import threading

from . import _interrupt, _lib
from ._library import _raise, check

_tls = threading.local()


def _keep(v, h=None):
    """Inside a group the C calls only queue: keep their buffers (capsules) alive until the group ends, and
    note the communicator `h` (a Ctrl-C in the blocking group end aborts those: _interrupt.py)."""
    k = getattr(_tls, "keep", None)
    if k is not None:
        k.append(v)
        if h is not None and h not in _tls.comms:
            _tls.comms.append(h)


class group:
    """Context manager: the calls inside run together at the end (hetcclGroupStart/GroupEnd); nests.
    Buffers passed inside are kept alive until the outermost group ends."""

    def __enter__(self):
        f = _lib.load()
        check(f.hetcclGroupStart())
        depth = getattr(_tls, "depth", 0)
        if depth == 0:
            _tls.keep = []
            _tls.comms = []
        _tls.depth = depth + 1
        return self

    def __exit__(self, exc_type, exc, tb):
        _tls.depth -= 1
        comms = tuple(_tls.comms) if _tls.depth == 0 else ()
        try:
            if comms:
                rc = _lib.run_blocking(comms, "hetcclGroupEnd", _lib.fn.hetcclGroupEnd)
            else:
                rc = _lib.fn.hetcclGroupEnd()
        finally:
            if _tls.depth == 0:
                _tls.keep = _tls.comms = None
        if rc and exc_type is None:
            _raise(rc, next((h for h in comms if h in _interrupt.aborted), None) if _interrupt.aborted else None)
        return False
