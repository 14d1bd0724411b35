"""Agents (include/hetccl/hetccl_agent.h): transfers between independent processes, without a communicator.

    with hetccl.Agent("decode-0", secret=key) as agent:      # bytes (>= 16), or hex as in HETCCL_SECRET
        mem = agent.register(kv)                             # any buffer / NumPy / DLPack / CUDA array
        peer = agent.load_remote(blob_of_prefill)            # the peer's agent.metadata(), any channel
        with agent.prep_xfer("read", peer, [(mem.id, remote_id, 0, remote_off, nbytes)], notif=b"done") as x:
            x.post()
            x.wait()                                         # RemoteError naming the peer when it failed
        for peer, msg in agent.get_notifs(): ...

Bound at the first use when the loaded library exports every function of hetccl_agent.h (agent_available());
`import hetccl` works with a library that predates them (AgentUnavailableError at Agent()).

Lifetimes. A registration keeps its buffer alive, and the Agent keeps its registrations, until deregister()
or close(): peers may read or write a registered buffer at any time, dropping the AgentMemory object does
not end the registration. An Xfer dropped while its post still runs is released once it ended. close()
(or leaving the with block) destroys the agent: its registrations and transfers become unusable.
"""

from __future__ import annotations

import ctypes
import threading
import time

from . import _agent_api as _api
from ._agent_api import NAME_MAX, READ, WRITE, AgentOp, AgentOptions, _NOTIF_FIRST_CAPACITY, _bytes, _cstr, _f, _op, _secret
from ._agent_memory import AgentMemory
from ._agent_ranges import _ranges, strided_ranges
from ._errors import IN_PROGRESS, INVALID_ARGUMENT, INVALID_USAGE, InvalidArgumentError, InvalidUsageError
from ._library import _error, check
from ._types import _int32


class Xfer:
    """A prepared transfer (hetcclAgentPrepXfer): post() starts it (any number of times, one post at a
    time), check() -> True done / False running (raises its error), wait(), cancel(), release(). As a context
    manager: on leaving, a running post is waited for (cancelled when leaving on an exception), then released."""

    __slots__ = ("_x", "_agent", "_keep", "op", "peer", "nranges", "__weakref__")

    def __init__(self, agent, handle, op, peer, nranges, keep):
        self._x = handle
        self._agent = agent
        self._keep = keep
        self.op = op
        self.peer = peer
        self.nranges = nranges

    def __repr__(self):
        return (f"<hetccl.Xfer {self.op.name.lower()} of {self.nranges} range(s) with {self.peer!r}"
                f"{'' if self._x else ', released'}>")

    def _live(self):
        self._agent._live()
        if not self._x:
            raise InvalidArgumentError("this Xfer was released", 4)
        return self._x

    def post(self):
        """Starts the transfer (connecting to the peer first if needed); returns at once. InvalidUsageError
        while an earlier post of it still runs."""
        x = self._live()
        self._agent._reap()
        check(_f().hetcclAgentPostXfer(x))
        return self

    def check(self) -> bool:
        """Never blocks: True when the last post completed, False while it runs; raises the error that ended it
        (RemoteError naming the peer, ...), InvalidUsageError when never posted or cancelled."""
        rc = _f().hetcclAgentCheckXfer(self._live())
        if rc == 0:
            return True
        if rc == IN_PROGRESS:
            return False
        raise _error(rc, None)

    def wait(self):
        """Blocks until the last post ended (at most the agent's timeout after the post); raises its error.
        On the main thread it polls, so that Ctrl-C is seen."""
        x = self._live()
        f = _f()
        if threading.current_thread() is not threading.main_thread():
            check(f.hetcclAgentWaitXfer(x))
            return self
        chk = f.hetcclAgentCheckXfer
        spins, pause = 0, 20e-6
        while True:
            rc = chk(x)
            if rc != IN_PROGRESS:
                check(rc)
                return self
            spins += 1
            if spins > 64:
                time.sleep(pause)
                pause = min(pause * 2, 1e-3)

    def cancel(self):
        """Cancels the last post without blocking: a queued one never starts, one on the wire is cut off.
        check() then reports False until it no longer touches the local memory, then raises InvalidUsageError."""
        check(_f().hetcclAgentCancelXfer(self._live()))

    def release(self):
        """Releases the transfer (InvalidUsageError while a post runs: cancel or wait first). Idempotent."""
        x = self._x
        if not x or self._agent._h is None:
            self._x = self._keep = None
            return
        rc = _f().hetcclAgentReleaseXfer(x)
        if rc == 0:
            self._x = self._keep = None
        check(rc)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if self._x and self._agent._h is not None:
            f = _f()
            if exc_type is not None:
                f.hetcclAgentCancelXfer(self._x)
            while f.hetcclAgentCheckXfer(self._x) == IN_PROGRESS:
                time.sleep(1e-4)
            self.release()
        return False

    def __del__(self):
        x = self._x
        if not x or _api._fns is None:
            return
        try:
            agent = self._agent
            if agent._h is None:
                return
            if _api._fns.hetcclAgentReleaseXfer(x) == INVALID_USAGE:  # still running: released once it ended
                agent._orphans.append((x, self._keep))
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class Agent:
    """This process's end of transfers with independent processes (hetcclAgentCreate).

    name: 1..63 characters of [A-Za-z0-9._:-], unique among the agents that load each other's metadata.
    secret: the deployment's shared secret: bytes (>= 16), or a str of >= 32 hex digits decoded to bytes as
        HETCCL_SECRET is (an agent given secret=s and one started with HETCCL_SECRET=s trust each other); None:
        HETCCL_SECRET.
    listen: "ip:port" (port 0: any); "": the interface HETCCL_SOCKET_IFNAME selects, any port.
    device: the GPU whose memory it registers (-1: host memory only). timeout: seconds (None: HETCCL_TIMEOUT).
    """

    READ = READ
    WRITE = WRITE

    def __init__(self, name, secret=None, listen="", device=-1, timeout=None):
        f = _f()
        self._h = None
        self._mems = {}      # registration handle -> AgentMemory (kept until deregister / close)
        self._orphans = []   # (xfer handle, keep) of dropped transfers still running
        self._zombies = []   # buffers of failed deregistrations, kept until close
        cname = _cstr(name, "name")
        device = _int32(device, "device")
        if timeout is not None:
            timeout = float(timeout)
            if not timeout > 0:
                raise InvalidArgumentError(f"timeout={timeout}: a positive number of seconds (None: HETCCL_TIMEOUT)", 4)
        opts = AgentOptions()
        rc = f.hetcclAgentOptionsInit(ctypes.byref(opts))
        if rc and secret is None:
            check(rc)
        key = None
        if secret is not None:
            raw = _secret(secret)
            key = ctypes.create_string_buffer(raw, max(1, len(raw)))
            opts.secret, opts.secretBytes = ctypes.addressof(key), len(raw)
        elif rc:
            opts.secret, opts.secretBytes = None, 0
        addr = _cstr(listen, "listen") if listen else None
        opts.listenAddress = addr
        opts.device = device
        opts.timeoutSeconds = 0.0 if timeout is None else timeout
        out = ctypes.c_void_p()
        try:
            rc = f.hetcclAgentCreate(cname, ctypes.byref(opts), ctypes.byref(out))
        finally:
            if key is not None:
                ctypes.memset(key, 0, len(key))
        check(rc)
        self._h = out.value
        self.name = cname.decode()
        self.device = device
        self.timeout = timeout

    def __repr__(self):
        return f"<hetccl.Agent {self.name!r}{'' if self._h else ', closed'}>"

    def _live(self):
        h = self._h
        if h is None:
            raise InvalidUsageError("this Agent was closed", 5)
        return h

    def _reap(self):
        """Releases the dropped transfers that have ended."""
        if not self._orphans:
            return
        f = _api._fns
        still, self._orphans = self._orphans, []
        for x, keep in still:
            if f.hetcclAgentCheckXfer(x) == IN_PROGRESS:
                self._orphans.append((x, keep))
            else:
                f.hetcclAgentReleaseXfer(x)

    # -- metadata and peers --

    def metadata(self) -> bytes:
        """The agent's metadata blob (how to reach it, what it registered, authenticated with the secret):
        give it to the peers. Lists the registrations live now: export it again after registering more."""
        f, h = _f(), self._live()
        n = ctypes.c_size_t(0)
        check(f.hetcclAgentGetMetadata(h, None, ctypes.byref(n)))
        for _ in range(16):  # a registration of another thread may grow it between the two calls
            cap = n.value
            buf = ctypes.create_string_buffer(max(1, cap))
            rc = f.hetcclAgentGetMetadata(h, buf, ctypes.byref(n))
            if rc == INVALID_ARGUMENT and n.value > cap:
                continue
            check(rc)
            return buf.raw[:n.value]
        raise InvalidUsageError("metadata: the blob kept growing (registrations of other threads)", 5)

    def load_remote(self, blob) -> str:
        """Loads a peer's metadata blob; returns the peer's name. InvalidArgumentError (saying which check
        failed) for anything but a genuine blob of this deployment's agents (another secret, altered, this
        agent's own, older than the one loaded). A restarted peer's new blob replaces the old one."""
        f, h = _f(), self._live()
        b = _bytes(blob, "blob")
        name = ctypes.create_string_buffer(NAME_MAX + 1)
        check(f.hetcclAgentLoadRemote(h, b, len(b), name))
        return name.value.decode("ascii", errors="replace")

    def forget_remote(self, name: str):
        """Forgets peer `name` (its connection is closed, transfers running to it fail)."""
        check(_f().hetcclAgentForgetRemote(self._live(), _cstr(name, "name")))

    # -- registrations --

    def register(self, buffer, nbytes: int | None = None) -> AgentMemory:
        """Registers the memory of `buffer` (the whole of it, or its first `nbytes`): any object with the
        buffer protocol or __array_interface__ (NumPy), or with __dlpack__ / __cuda_array_interface__ (device
        memory of this agent's device). It must be writable (peers may write into it). The registration keeps
        the buffer alive until deregister() or close(). Export metadata() again for the peers to see it."""
        return AgentMemory(self, buffer, nbytes)

    # -- transfers --

    strided_ranges = staticmethod(strided_ranges)

    def prep_xfer(self, op, peer: str, ranges, notif=b"") -> Xfer:
        """Prepares a read ("read", READ: peer -> local) or write ("write", WRITE: local -> peer) of `ranges`
        with peer `peer` (loaded), followed by notification `notif` (bytes, <= 4096; b"": none). ranges:
        5-tuples (local_region, remote_region, local_offset, remote_offset, bytes), an (n, 5) integer array,
        a 1-D array of range_dtype() (given to C without a copy) or strided_ranges()'s result. Every range
        is checked against the local registration and the peer's blob. Moves nothing: post() does."""
        f, h = _f(), self._live()
        code = _op(op)
        cpeer = _cstr(peer, "peer")
        ptr, n, keep = _ranges(ranges)
        msg = _bytes(notif, "notif") if notif is not None else b""
        out = ctypes.c_void_p()
        self._reap()
        check(f.hetcclAgentPrepXfer(h, int(code), cpeer, ptr, n, msg if msg else None, len(msg), ctypes.byref(out)))
        del keep  # the library copied the ranges
        return Xfer(self, out.value, code, cpeer.decode(), n, msg)

    # -- notifications --

    def gen_notif(self, peer: str, msg=b""):
        """Sends notification `msg` (bytes, <= 4096) to `peer`, after the transfers posted to it before;
        returns once the peer received it (RemoteError when it did not within the timeout)."""
        f, h = _f(), self._live()
        m = _bytes(msg, "msg")
        check(f.hetcclAgentGenNotif(h, _cstr(peer, "peer"), m if m else None, len(m)))

    def prep_notif(self, peer: str, msg=b"") -> Xfer:
        """gen_notif without blocking: a prepared notification-only transfer of `msg` (bytes, <= 4096) to
        `peer`; post() sends it after the transfers posted to that peer before, check()/wait() say when the
        peer received it, as for any Xfer."""
        f, h = _f(), self._live()
        m = _bytes(msg, "msg")
        cpeer = _cstr(peer, "peer")
        out = ctypes.c_void_p()
        self._reap()
        check(f.hetcclAgentPrepNotif(h, cpeer, m if m else None, len(m), ctypes.byref(out)))
        return Xfer(self, out.value, AgentOp.NOTIFY, cpeer.decode(), 0, m)

    def get_notif(self):
        """Never blocks: (peer name, message bytes) of the oldest notification received, or None."""
        f, h = _f(), self._live()
        peer = ctypes.create_string_buffer(NAME_MAX + 1)
        n, got = ctypes.c_size_t(), ctypes.c_int()
        cap = _NOTIF_FIRST_CAPACITY
        for _ in range(8):
            buf = ctypes.create_string_buffer(cap)
            n.value, got.value = 0, 0
            rc = f.hetcclAgentGetNotif(h, peer, buf, cap, ctypes.byref(n), ctypes.byref(got))
            if rc == INVALID_ARGUMENT and n.value > cap:  # larger than the buffer: still queued, its size in n
                cap = n.value
                continue
            check(rc)
            if not got.value:
                return None
            return peer.value.decode("ascii", errors="replace"), buf.raw[:n.value]
        raise InvalidUsageError("get_notif: the notification's size kept changing", 5)

    def get_notifs(self):
        """Drains the notifications received: a list of (peer name, message bytes), oldest first."""
        out = []
        while True:
            m = self.get_notif()
            if m is None:
                return out
            out.append(m)

    # -- end --

    def close(self):
        """hetcclAgentDestroy: says goodbye to the peers, fails transfers still running, joins the agent's
        threads. Its registrations, transfers and buffers are released. Idempotent."""
        h, self._h = self._h, None
        if h is None:
            return
        rc = _f().hetcclAgentDestroy(h)
        for mem in list(self._mems.values()):
            mem._m = None
            mem._keep = mem.obj = None
        self._mems.clear()
        self._orphans = []
        self._zombies = []
        check(rc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and _api._fns is not None:
            self._h = None
            try:
                _api._fns.hetcclAgentDestroy(h)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass
