"""Communicator's point-to-point calls (send/recv) and the byte helpers over them (descriptors, small
messages): a mixin of Communicator (_comm.py), whose _live/_view/_moving it uses."""

from __future__ import annotations

import ctypes

from . import _lib
from ._group import _keep, _tls, group
from ._library import _raise
from ._types import _rank


class PointToPoint:
    """send/recv and the byte helpers of a Communicator (mixed into it)."""

    # -- point-to-point --

    def send(self, buf, peer: int, *, stream=None):
        """Sends `buf` to rank `peer` (matched by its recv from this rank, in call order per pair). Use a
        group for exchanges so that neither side blocks the other."""
        peer = _rank(peer, "send", "peer")
        h = self._live()
        s = self._view(buf, stream, False, "send buffer")
        count, t = self._moving(s)
        rc = _lib.fn.hetcclSend(s[0], count, t, int(peer), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep(s, h)
        return buf

    def recv(self, buf, peer: int, *, stream=None):
        """Receives into `buf` from rank `peer`. Returns buf."""
        peer = _rank(peer, "recv", "peer")
        h = self._live()
        r = self._view(buf, stream, True, "recv buffer")
        count, t = self._moving(r)
        rc = _lib.fn.hetcclRecv(r[0], count, t, int(peer), h, r[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep(r, h)
        return buf

    # -- byte helpers (descriptors, small messages) --

    def send_bytes(self, data: bytes, peer: int):
        """Sends a bytes object: its length, then its content (recv_bytes on the peer)."""
        n = ctypes.c_uint64(len(data))
        with group():
            self.send(memoryview(n).cast("B"), peer)
            if len(data):
                self.send(bytes(data), peer)

    def recv_bytes(self, peer: int) -> bytes:
        n = ctypes.c_uint64()
        self.recv(memoryview(n).cast("B"), peer)
        buf = bytearray(n.value)
        if n.value:
            self.recv(buf, peer)
        return bytes(buf)

    def broadcast_bytes(self, data: bytes | None, root: int = 0) -> bytes:
        """Every rank gets the root's bytes (length first; `data` is read on the root only)."""
        root = _rank(root, "broadcast_bytes")
        n = ctypes.c_uint64(len(data) if self.rank == root else 0)
        self.broadcast(memoryview(n).cast("B"), root)
        buf = bytearray(data) if self.rank == root else bytearray(n.value)
        if n.value:
            self.broadcast(buf, root)
        return bytes(buf)
