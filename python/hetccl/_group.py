"""Groups (hetcclGroupStart/GroupEnd) and the per-thread list of buffers kept alive until a group ends."""

from __future__ import annotations

import threading

from . import _lib
from ._library import _raise, check

_tls = threading.local()


def _keep(v):
    """Inside a group the C calls only queue: keep their buffers (capsules) alive until the group ends."""
    k = getattr(_tls, "keep", None)
    if k is not None:
        k.append(v)


class group:
    """Context manager: the calls inside run together at the end (hetcclGroupStart/GroupEnd); nests.
    Buffers passed inside are kept alive until the outermost group ends."""

    def __enter__(self):
        f = _lib.load()
        check(f.hetcclGroupStart())
        depth = getattr(_tls, "depth", 0)
        if depth == 0:
            _tls.keep = []
        _tls.depth = depth + 1
        return self

    def __exit__(self, exc_type, exc, tb):
        _tls.depth -= 1
        try:
            rc = _lib.fn.hetcclGroupEnd()
        finally:
            if _tls.depth == 0:
                _tls.keep = None
        if rc and exc_type is None:
            _raise(rc, None)
        return False
