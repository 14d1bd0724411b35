"""Communicator's one-sided calls (include/hetccl/hetccl_rma.h): rma_init, registration, descriptors and
notifications; a mixin of Communicator (_comm.py). Memory and RemoteMemory live in _rma.py."""

from __future__ import annotations

import ctypes

from . import _lib
from ._errors import InvalidUsageError
from ._library import check
from ._rma import Memory, RemoteMemory, RmaState, require_rma
from ._types import _int32, _uint


class RmaCalls:
    """The one-sided calls of a Communicator (mixed into it)."""

    # -- one-sided (include/hetccl/hetccl_rma.h) --

    def rma_init(self):
        """hetcclRmaInit (collective, once): opens the RMA connections and starts the progress thread."""
        if self._rma is not None:
            raise InvalidUsageError("rma_init was already called on this communicator", 5)
        h = self._live()
        state = RmaState(self)
        check(_lib.fn.hetcclRmaInit(h), h)
        self._rma = state
        return self

    def register(self, obj, nbytes: int | None = None):
        """Registers the memory of `obj` (any DLPack object; the whole buffer, or its first `nbytes`) for
        remote access. Returns a Memory (its .descriptor() goes to the peers)."""
        return Memory(self, obj, nbytes)

    def import_descriptor(self, desc: bytes):
        """Imports a peer's Memory.descriptor(): a RemoteMemory to put to / get from."""
        return RemoteMemory(self, desc)

    def notify(self, peer: int, tag: int):
        """Queues notification `tag` to `peer`, delivered after every put this rank issued to it before."""
        peer, tag = _int32(peer, "peer"), _uint(tag, "tag")
        h = self._rma_live()
        check(_lib.fn.hetcclNotify(h, peer, tag), h)

    def poll_notification(self):
        """Never blocks: (peer, tag) of the oldest notification received, or None."""
        h = self._rma_live()
        p, t, got = ctypes.c_int(), ctypes.c_uint64(), ctypes.c_int()
        check(_lib.fn.hetcclNotifyPoll(h, ctypes.byref(p), ctypes.byref(t), ctypes.byref(got)), h)
        return (p.value, t.value) if got.value else None

    def wait_notification(self, peer: int, tag: int, timeout: float | None = None) -> bool:
        """Waits for notification `tag` from `peer` and takes it: True; False when `timeout` seconds passed
        (0: check once; None: up to HETCCL_TIMEOUT, then False). RemoteError when the peer failed."""
        peer, tag = _int32(peer, "peer"), _uint(tag, "tag")
        h = self._rma_live()
        ms = -1 if timeout is None else min(max(0, int(round(timeout * 1000))), (1 << 31) - 1)
        rc = _lib.fn.hetcclNotifyWait(h, peer, tag, ms)
        if rc == 7:  # hetcclInProgress: not there in time
            return False
        check(rc, h)
        return True

    def _rma_live(self):
        h = self._live()
        if self._rma is None:
            require_rma()
            raise InvalidUsageError("call comm.rma_init() first (collective)", 5)
        return h
