"""Communicator's collectives (all_reduce, broadcast, reduce, all_gather, reduce_scatter, all_to_all(v),
barrier): a mixin of Communicator (_comm.py), whose _live/_view/_same/_reducing_type/_moving it uses."""

from __future__ import annotations

import ctypes

from . import _lib
from ._dlpack import NO_TYPE
from ._errors import InvalidArgumentError
from ._group import _keep, _tls
from ._library import _raise
from ._types import SUM, _op, _rank, _uint


class Collectives:
    """The collectives of a Communicator (mixed into it)."""

    # -- collectives --

    def all_reduce(self, buf, op=SUM, *, out=None, stream=None):
        """out[i] = op over ranks of buf[i]; in place on `buf` unless `out` is given. Returns the output."""
        h = self._live()
        s = self._view(buf, stream, out is None, "all_reduce buffer")
        t = self._reducing_type(s, "all_reduce buffer")
        if out is None:
            r = s
        else:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "all_reduce out")
            self._same(s, r, "all_reduce")
            if r[1] != s[1]:
                raise InvalidArgumentError(f"all_reduce: out has {r[1]} elements, buf {s[1]}", 4)
        rc = _lib.fn.hetcclAllReduce(s[0], r[0], s[1], t, _op(op), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r), h)
        return buf if out is None else out

    def broadcast(self, buf, root: int = 0, *, out=None, stream=None):
        """Every rank gets the root's `buf`; in place unless `out` is given (then `buf` is read on the root
        only). Returns the output."""
        root = _rank(root, "broadcast")
        h = self._live()
        s = self._view(buf, stream, out is None, "broadcast buffer")
        r = s
        if out is not None:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "broadcast out")
            self._same(s, r, "broadcast")
            if r[1] != s[1]:
                raise InvalidArgumentError(f"broadcast: out has {r[1]} elements, buf {s[1]}", 4)
        count, t = self._moving(s)
        rc = _lib.fn.hetcclBroadcast(s[0], r[0], count, t, root, h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r), h)
        return buf if out is None else out

    def reduce(self, buf, root: int = 0, op=SUM, *, out=None, stream=None):
        """On the root, the op over ranks of `buf`: in place in the root's `buf`, or in `out` when given
        (not written on the other ranks). Returns `out` when given, else `buf`."""
        root = _rank(root, "reduce")
        h = self._live()
        s = self._view(buf, stream, out is None and self.rank == root, "reduce buffer")
        t = self._reducing_type(s, "reduce buffer")
        r = s
        if out is not None:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "reduce out")
            self._same(s, r, "reduce")
            if r[1] != s[1]:
                raise InvalidArgumentError(f"reduce: out has {r[1]} elements, buf {s[1]}", 4)
        rc = _lib.fn.hetcclReduce(s[0], r[0], s[1], t, _op(op), root, h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r), h)
        return buf if out is None else out

    def all_gather(self, send, out, *, stream=None):
        """out holds size * len(send) elements, rank r's `send` at offset r * len(send). send=None: in place
        (this rank's block of `out` is its input). Returns out."""
        h = self._live()
        r = self._view(out, stream, True, "all_gather out")
        if send is None:
            if r[1] % self.size:
                raise InvalidArgumentError(f"all_gather in place: out has {r[1]} elements, not a multiple of "
                                           f"{self.size} ranks", 4)
            count = r[1] // self.size
            sptr, s = r[0] + self.rank * count * r[3], r
        else:
            s = self._view(send, r[7] if r[7] is not None else stream, False, "all_gather send")
            self._same(s, r, "all_gather")
            count = s[1]
            if r[1] != count * self.size:
                raise InvalidArgumentError(f"all_gather: out has {r[1]} elements, expected {self.size} ranks x "
                                           f"{count} = {count * self.size}", 4)
            sptr = s[0]
        n, t = count, r[2]
        if t == NO_TYPE:
            n, t = count * r[3], 1
        rc = _lib.fn.hetcclAllGather(sptr, r[0], n, t, h, r[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r), h)
        return out

    def reduce_scatter(self, send, out=None, op=SUM, *, stream=None):
        """send holds size * n elements; this rank gets block `rank` reduced over ranks, in `out` (n
        elements) or, with out=None, in place in its own block of `send`. Returns the output (the block
        of send when in place, if send supports slicing)."""
        h = self._live()
        s = self._view(send, stream, out is None, "reduce_scatter send")
        t = self._reducing_type(s, "reduce_scatter send")
        if s[1] % self.size:
            raise InvalidArgumentError(f"reduce_scatter: send has {s[1]} elements, not a multiple of {self.size} "
                                       "ranks", 4)
        count = s[1] // self.size
        if out is None:
            r, rptr = s, s[0] + self.rank * count * s[3]
        else:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "reduce_scatter out")
            self._same(s, r, "reduce_scatter")
            if r[1] != count:
                raise InvalidArgumentError(f"reduce_scatter: out has {r[1]} elements, expected {s[1]} / {self.size} "
                                           f"ranks = {count}", 4)
            rptr = r[0]
        rc = _lib.fn.hetcclReduceScatter(s[0], rptr, count, t, _op(op), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r), h)
        if out is not None:
            return out
        try:
            return send.reshape(-1)[self.rank * count:(self.rank + 1) * count]
        except Exception:  # noqa: BLE001 - not sliceable: the caller knows where the block is
            return send

    def all_to_all(self, send, out, *, stream=None):
        """Block p of `send` (len(send) / size elements) goes to rank p; block p of `out` comes from rank p.
        Returns out."""
        h = self._live()
        s = self._view(send, stream, False, "all_to_all send")
        if s[1] % self.size:
            raise InvalidArgumentError(f"all_to_all: send has {s[1]} elements, not a multiple of {self.size} ranks", 4)
        r = self._view(out, s[7] if s[7] is not None else stream, True, "all_to_all out")
        self._same(s, r, "all_to_all")
        if r[1] != s[1]:
            raise InvalidArgumentError(f"all_to_all: out has {r[1]} elements, send {s[1]}", 4)
        count, t = s[1] // self.size, s[2]
        if t == NO_TYPE:
            count, t = count * s[3], 1
        rc = _lib.fn.hetcclAlltoAll(s[0], r[0], count, t, h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r), h)
        return out

    def _counts(self, values, name):
        vals = [_uint(x, f"all_to_allv: {name}[{i}]") for i, x in enumerate(values)]
        if len(vals) != self.size:
            raise InvalidArgumentError(f"all_to_allv: {name} has {len(vals)} entries, expected one per rank "
                                       f"({self.size})", 4)
        if any(x < 0 for x in vals):
            raise InvalidArgumentError(f"all_to_allv: {name} has a negative entry", 4)
        return vals

    def all_to_allv(self, send, send_counts, out, recv_counts, send_displs=None, recv_displs=None, *,
                    stream=None):
        """send_counts[p] elements at send_displs[p] of `send` go to rank p; recv_counts[p] elements from rank
        p land at recv_displs[p] of `out` (element units; displacements default to the packed prefix
        sums). send_counts[p] here must equal recv_counts[this rank] on rank p. Returns out."""
        h = self._live()
        s = self._view(send, stream, False, "all_to_allv send")
        r = self._view(out, s[7] if s[7] is not None else stream, True, "all_to_allv out")
        self._same(s, r, "all_to_allv")
        sc = self._counts(send_counts, "send_counts")
        rc_ = self._counts(recv_counts, "recv_counts")
        sd = self._counts(send_displs, "send_displs") if send_displs is not None else _prefix(sc)
        rd = self._counts(recv_displs, "recv_displs") if recv_displs is not None else _prefix(rc_)
        for p in range(self.size):
            if sd[p] + sc[p] > s[1]:
                raise InvalidArgumentError(f"all_to_allv: block for rank {p} (displacement {sd[p]} + count {sc[p]}) "
                                           f"runs past the end of send ({s[1]} elements)", 4)
            if rd[p] + rc_[p] > r[1]:
                raise InvalidArgumentError(f"all_to_allv: block from rank {p} (displacement {rd[p]} + count "
                                           f"{rc_[p]}) runs past the end of out ({r[1]} elements)", 4)
        t = s[2]
        if t == NO_TYPE:  # move as bytes
            k = s[3]
            sc, rc_, sd, rd = ([x * k for x in a] for a in (sc, rc_, sd, rd))
            t = 1
        arr = ctypes.c_size_t * self.size
        a_sc, a_sd, a_rc, a_rd = arr(*sc), arr(*sd), arr(*rc_), arr(*rd)
        rc = _lib.fn.hetcclAlltoAllv(s[0], a_sc, a_sd, r[0], a_rc, a_rd, t, h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r, a_sc, a_sd, a_rc, a_rd), h)
        return out

    def barrier(self):
        """Blocks until every rank has entered (host; device work already queued is not waited for)."""
        h = self._live()
        rc = _lib.fn.hetcclBarrier(h, None)
        if rc:
            _raise(rc, h)


def _prefix(counts):
    out, acc = [], 0
    for c in counts:
        out.append(acc)
        acc += c
    return out
