"""The child side of test_agent.py's agents, and the test side's handle on a child; not a test file (pytest
collects nothing here, and it imports no pytest: a child starts without pytest's import, ~0.1 s of each of ~45
processes).

Run as a script (`python3 agent_child.py --agent-child`), this file is a small server holding one agent: it
executes the commands a test sends it (JSON lines {"fn": ..., "args": {...}} on stdin: create an agent,
register, load a blob, transfer, snapshot a buffer to a file, ...; the c_* functions below) and answers each
with one JSON line on stdout ({"ok": result} or {"err": ...}); whatever else writes to stdout (the library's
messages) goes to stderr, the child's log.

Imported by the tests:
  - the byte patterns both sides compute from seeds (pattern, seq_records, first_diff, b64/unb64);
  - ChildProcess / child_env: spawning a Python child of the tests (the hetccl package and library of this
    process, HETCCL_SECRET removed) and talking JSON lines to it over a pipe, with deadlines and the child's
    log in every failure; shared by test_vllm_connector.py's engine processes;
  - Peer: a ChildProcess running this file (one agent), as test_agent.py's `spawn` fixture starts them.
"""

import base64
import functools
import itertools
import json
import os
import select
import signal
import struct
import subprocess
import sys
import time
import traceback

import numpy as np

import hetccl
from hetccl._errors import make_error

AGENT_TIMEOUT = 10.0  # seconds, every agent's transfer/connection deadline (hetcclAgentOptions_t.timeoutSeconds)
RPC_TIMEOUT = 40.0    # seconds the test waits for one command of a child


# ---- patterns (computed alike by the children and the test) -------------------------------------------

_PERIOD = 1_000_003  # a prime: a pattern repeats only after ~1 MB, so misplaced bytes differ
_M64 = (1 << 64) - 1


@functools.lru_cache(maxsize=16)
def _base(seed):
    i = np.arange(_PERIOD, dtype=np.uint64)
    s = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _M64
    x = (i ^ np.uint64(s)) * np.uint64(0xD1B54A32D192ED03)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(29)
    return (x % np.uint64(255) + np.uint64(1)).astype(np.uint8)  # never 0: a byte not written stays visible


def pattern(seed, n, start=0):
    """n bytes (none zero) that depend on `seed` and on their position start..start+n."""
    k = start % _PERIOD
    return np.tile(_base(seed), (k + n) // _PERIOD + 1)[k:k + n].copy()


def seq_records(seed, offs, sizes, total):
    """The source of the sequence test: record i at offs[i] (sizes[i] bytes) starts with (i, i ^ 0x5a5a5a5a)."""
    buf = pattern(seed, total)
    for i, o in enumerate(offs):
        buf[o:o + 8] = np.frombuffer(struct.pack("<II", i, i ^ 0x5A5A5A5A), np.uint8)
    return buf


def b64(b):
    return base64.b64encode(bytes(b)).decode()


def unb64(s):
    return base64.b64decode(s)


def first_diff(got, exp):
    d = np.flatnonzero(got != exp)
    if not d.size:
        return None
    i = int(d[0])
    return f"{d.size} byte(s) differ, first at {i}: got {int(got[i])}, expected {int(exp[i])}"



# ---- the child: an agent serving the test's commands --------------------------------------------------

class _Child:
    def __init__(self):
        self.agent = None
        self.bufs, self.mems, self.xfers = {}, {}, {}


def _ranges_as(ranges, fmt):
    if fmt == "tuples":
        return [tuple(r) for r in ranges]
    if fmt == "u64":
        return np.array(ranges, np.uint64).reshape(-1, 5)
    if fmt == "struct":
        a = np.zeros(len(ranges), hetccl.range_dtype())
        for k, f in enumerate(a.dtype.names):
            a[f] = [r[k] for r in ranges]
        return a
    raise ValueError(fmt)


def c_create(st, name, secret, listen="127.0.0.1:0", timeout=AGENT_TIMEOUT, secret_as="hex"):
    """secret_as: "hex" (secret= the hex str) or "raw" (secret= the 32 bytes it encodes)."""
    if secret is not None and secret_as == "raw":
        secret = bytes.fromhex(secret)
    st.agent = hetccl.Agent(name, secret=secret, listen=listen, timeout=timeout)
    return st.agent.name


def c_metadata(st):
    return b64(st.agent.metadata())


def c_load(st, blob):
    return st.agent.load_remote(unb64(blob))


def c_try_load(st, blobs):
    """Loads each blob; [error class name or None, message] for each."""
    out = []
    for b in blobs:
        try:
            out.append([None, st.agent.load_remote(unb64(b))])
        except hetccl.HetcclError as e:
            out.append([type(e).__name__, str(e)])
    return out


def c_register(st, key, n, seed=None, records=None):
    if records is not None:
        buf = seq_records(seed, records[0], records[1], n)
    else:
        buf = pattern(seed, n) if seed is not None else np.zeros(n, np.uint8)
    st.bufs[key] = buf
    m = st.agent.register(buf)
    st.mems[key] = m
    return {"id": m.id, "kind": m.kind, "nbytes": m.nbytes}


def c_forget(st, name):
    st.agent.forget_remote(name)


def c_deregister(st, key):
    st.mems.pop(key).deregister()


def c_prep(st, key, op, peer, ranges=None, notif="", fmt="tuples", strided=None):
    r = hetccl.Agent.strided_ranges(**strided) if strided is not None else _ranges_as(ranges, fmt)
    st.xfers[key] = st.agent.prep_xfer(op, peer, r, notif=unb64(notif))


def c_try_prep(st, cases):
    """prep_xfer of each (op, peer, ranges, notif); [error class name or None, message] for each."""
    out = []
    for op, peer, ranges, notif in cases:
        try:
            st.agent.prep_xfer(op, peer, [tuple(r) for r in ranges], notif=unb64(notif)).release()
            out.append([None, ""])
        except hetccl.HetcclError as e:
            out.append([type(e).__name__, str(e)])
    return out


def c_post(st, key):
    st.xfers[key].post()


def c_post_wait(st, key):
    st.xfers[key].post().wait()


def c_xfer(st, op, peer, ranges, notif="", fmt="tuples"):
    """prep, post, wait, release: raises the transfer's error."""
    with st.agent.prep_xfer(op, peer, _ranges_as(ranges, fmt), notif=unb64(notif)) as x:
        x.post()
        x.wait()


def c_xfers(st, jobs):
    """Posts every (op, peer, ranges, notif) at once, then waits for each: [error class or None, message]."""
    xs = [st.agent.prep_xfer(op, peer, [tuple(r) for r in ranges], notif=unb64(notif)) for op, peer, ranges, notif
          in jobs]
    for x in xs:
        x.post()
    out = []
    for x in xs:
        try:
            x.wait()
            out.append([None, ""])
        except hetccl.HetcclError as e:
            out.append([type(e).__name__, str(e)])
        x.release()
    return out


def c_gen_notif(st, peer, msg):
    st.agent.gen_notif(peer, unb64(msg))


def c_notifs(st):
    return [[p, b64(m)] for p, m in st.agent.get_notifs()]


def c_shared_maps(st):
    """This process's shared mappings of shared memory (the windows of the same-host path)."""
    with open("/proc/self/maps") as f:
        return [ln.split(None, 5)[-1].strip() for ln in f
                if len(ln.split()) >= 6 and ln.split()[1][3] == "s" and ("/dev/shm/" in ln or "memfd:" in ln)]


def c_snapshot(st, key, path):
    st.bufs[key].tofile(path)


def c_wait_notif(st, msg, timeout, snaps=None):
    """Polls until notification `msg` arrives, then at once copies the buffers `snaps` ({key: path}) to files.
    Returns every notification received until then (it included), oldest first."""
    want = unb64(msg)
    got = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p, m in st.agent.get_notifs():
            got.append([p, b64(m)])
            if m == want:
                for key, path in (snaps or {}).items():
                    st.bufs[key].tofile(path)
                return got
        time.sleep(2e-4)
    raise TimeoutError(f"notification {want[:40]!r} did not arrive within {timeout} s; received {got[:5]}")


def c_wait_count(st, n, timeout):
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        got += [[p, b64(m)] for p, m in st.agent.get_notifs()]
        time.sleep(2e-4)
    return got


def c_seq_write(st, peer, src_key, dst_region, offs, sizes, fmt):
    """One write per record (record i -> the same offset at the peer) with notification b"seq <i>": all
    prepared, posted in order, then waited for."""
    src = st.mems[src_key].id
    xs = [st.agent.prep_xfer("write", peer, _ranges_as([(src, dst_region, o, o, s)], fmt), notif=b"seq %d" % i)
          for i, (o, s) in enumerate(zip(offs, sizes))]
    t0 = time.perf_counter()
    for x in xs:
        x.post()
    for x in xs:
        x.wait()
    dt = time.perf_counter() - t0
    for x in xs:
        x.release()
    return dt


def c_seq_check(st, key, seed, offs, sizes, total, peer, timeout):
    """Takes the notifications b"seq <i>" as they come; on each, checks at once that record i is in place."""
    exp = seq_records(seed, offs, sizes, total)
    buf = st.bufs[key]
    seen, bad = [], []
    deadline = time.monotonic() + timeout
    while len(seen) < len(offs) and time.monotonic() < deadline:
        notes = st.agent.get_notifs()
        for p, m in notes:
            i = int(m.split()[1])
            o, s = offs[i], sizes[i]
            why = first_diff(buf[o:o + s], exp[o:o + s])  # right now: the notification came after the data
            if why is not None or p != peer:
                bad.append(f"record {i} from {p!r}: {why or 'wrong sender'}")
            seen.append(i)
        if not notes:
            time.sleep(5e-5)
    return {"seen": seen, "bad": bad[:10], "nbad": len(bad)}


def c_cancel_queued(st, peer, big, small, big_bytes):
    """x1: a large strided write (notif b"x1"); x2: a small write (notif b"x2") queued behind it and cancelled.
    Returns what the calls answered; x1 is waited for, then b"after" is sent."""
    a = st.agent
    chunk = 1 << 20
    x1 = a.prep_xfer("write", peer, a.strided_ranges(big_bytes // chunk, st.mems[big[0]].id, 0, chunk, big[1], 0,
                                                     chunk, chunk), notif=b"x1")
    x2 = a.prep_xfer(hetccl.WRITE, peer, [(st.mems[small[0]].id, small[1], 0, 0, small[2])], notif=b"x2")
    st.xfers["x2"] = x2
    res = {}

    def err(f):
        try:
            r = f()
            return ["ok", r if r is None or isinstance(r, bool) else None]
        except hetccl.HetcclError as e:
            return [type(e).__name__, str(e)]

    res["check_unposted"] = err(x2.check)
    x1.post()
    x2.post()
    x2.cancel()
    res["x1_running_after_cancel"] = not x1.check()
    res["repost_running"] = err(x1.post)
    res["release_running"] = err(x1.release)
    states = []
    deadline = time.monotonic() + AGENT_TIMEOUT
    while time.monotonic() < deadline:
        s = err(x2.check)
        if not states or states[-1] != s:
            states.append(s)
        if s != ["ok", False]:
            break
        time.sleep(1e-4)
    res["x2_states"] = states
    res["x1_wait"] = err(x1.wait)
    a.gen_notif(peer, b"after")
    x1.release()
    return res


def c_exit(st):
    if st.agent is not None:
        st.agent.close()
    return "bye"


def _child_main():
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever else writes to stdout (the library's messages) goes to the log, not the protocol
    st = _Child()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            res = {"ok": globals()["c_" + req["fn"]](st, **req["args"])}
        except hetccl.HetcclError as e:
            res = {"err": type(e).__name__, "result": e.result, "msg": str(e)}
        except Exception as e:  # noqa: BLE001 - reported to the test
            res = {"err": type(e).__name__, "msg": traceback.format_exc()}
        proto.write(json.dumps(res) + "\n")
        if req["fn"] == "exit":
            break


# ---- the test side: a child process and the JSON lines to it ----------------------------------------------

class ChildError(AssertionError):
    pass


def child_env(path="window", env_extra=None):
    """The environment of a child: this process's, without HETCCL_SECRET, with the hetccl package and library this
    process loaded; HETCCL_AGENT_WINDOW=off for path "tcp", else unset (the shared-memory windows of one host);
    then env_extra."""
    env = dict(os.environ)
    env.pop("HETCCL_SECRET", None)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(hetccl.__file__)))
    env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["HETCCL_LIBRARY"] = hetccl.library_path()
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if path == "tcp":
        env["HETCCL_AGENT_WINDOW"] = "off"
    else:
        env.pop("HETCCL_AGENT_WINDOW", None)
    env.update(env_extra or {})
    return env


class ChildProcess:
    """`python3 SCRIPT FLAG` in directory `tmp` with environment `env`, its stderr to the file tmp/LOG_NAME: the
    test sends it commands as JSON lines ({"fn": ..., "args": {...}}) and reads one JSON line back for each
    (recv_json). Subclasses decode the answers (recv) and set how failures read: `failure` (the exception
    raised when no answer comes or the child exits), `log_sep` (between the message and the child's log),
    `exited` (the message of an exit, formatted with its status) and `rpc_timeout` (seconds, the default wait
    for one answer)."""

    failure = ChildError
    log_sep = "\n--- its log:\n"
    exited = "exited (status {})"
    rpc_timeout = RPC_TIMEOUT

    def __init__(self, script, flag, tmp, label, log_name, env):
        self.label = label
        self.log = os.path.join(tmp, log_name)
        with open(self.log, "wb") as log:
            self.p = subprocess.Popen([sys.executable, os.path.abspath(script), flag],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, cwd=tmp)
        self._buf = b""
        self.pending = 0  # commands sent whose answers were not read yet

    def log_tail(self, n=3000):
        try:
            with open(self.log, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def send(self, fn, **args):
        self.p.stdin.write((json.dumps({"fn": fn, "args": args}) + "\n").encode())
        self.p.stdin.flush()
        self.pending += 1

    def recv_json(self, timeout=None):
        """The next answer, decoded (the subclass's recv looks into it); `failure` when none comes within
        `timeout` seconds (default rpc_timeout) or the child exits."""
        if timeout is None:
            timeout = self.rpc_timeout
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self.failure(f"{self.label}: no answer within {timeout} s{self.log_sep}{self.log_tail()}")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise self.failure(f"{self.label}: {self.exited.format(self.p.wait())}{self.log_sep}"
                                       f"{self.log_tail()}")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        self.pending -= 1
        return json.loads(line)

    def recv(self, timeout=None):
        raise NotImplementedError

    def call(self, fn, rpc_timeout=None, **args):
        self.send(fn, **args)
        return self.recv(rpc_timeout)

    def kill(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
        self.p.wait()


_serial = itertools.count()


class Peer(ChildProcess):
    """A child process running one agent (this file as a script, the commands above)."""

    def __init__(self, tmp, label, path, env_extra=None):
        super().__init__(__file__, "--agent-child", tmp, label, f"{label}-{next(_serial)}.log",
                         child_env(path, env_extra))

    def recv(self, timeout=None):
        res = self.recv_json(timeout)
        if "err" in res:
            if "result" in res:
                raise make_error(res["result"], res["msg"])
            raise ChildError(f"{self.label}: {res['err']}: {res['msg']}\n--- its log:\n{self.log_tail()}")
        return res["ok"]

    def begin_close(self):
        """Asks the child to close its agent and exit (after answering what it still owes)."""
        self.closing = None
        if self.p.poll() is not None:
            return
        try:
            while self.pending:
                self.recv(5)
            self.send("exit")
        except (ChildError, hetccl.HetcclError, OSError) as e:
            self.closing = f"{self.label}: closing failed: {e}"
            self.kill()

    def end_close(self):
        """Waits for begin_close's exit: None, or what went wrong (a hang or a crash closing is an error)."""
        if self.closing is not None or self.p.poll() is not None and not self.pending:
            return self.closing
        try:
            self.recv(15)
            self.p.wait(15)
        except (ChildError, hetccl.HetcclError, subprocess.TimeoutExpired) as e:
            self.kill()
            return f"{self.label}: closing failed: {e}"
        if self.p.returncode:
            return f"{self.label}: exited with status {self.p.returncode}\n{self.log_tail()}"
        return None


if __name__ == "__main__" and sys.argv[1:2] == ["--agent-child"]:
    _child_main()
