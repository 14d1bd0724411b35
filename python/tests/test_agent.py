"""Agents (include/hetccl/hetccl_agent.h, hetccl.Agent) between separate processes over 127.0.0.1.

Every agent of a data test lives in a child process of its own: agent_child.py run as a script
(`python3 agent_child.py --agent-child`) is a small server that executes the commands the test sends it
(JSON lines over a pipe: create an agent, register, load a blob, transfer, snapshot a buffer to a file, ...).
Metadata blobs travel through the test process; the secret is given to each agent's constructor
(HETCCL_SECRET is removed from the children's environment). The data tests run twice: through the shared-
memory windows of one host (the default) and over tcp (HETCCL_AGENT_WINDOW=off). The agent API within one
process (arguments, registrations, the forms of `ranges`; no peer) is test_agent_local.py's.

Every check compares bytes with patterns computed from seeds (agent_child.py: a pattern only the agent given
its seed can write; untouched bytes must stay zero), never with the library's own verdict. Cost: a few seconds
on a 2-core machine (each test starts 2-3 Python processes of ~0.2 s).
"""

import os
import socket
import time

import numpy as np
import pytest

import hetccl
from agent_child import AGENT_TIMEOUT, Peer, b64, first_diff, pattern, seq_records, unb64

pytestmark = pytest.mark.skipif(not hetccl.agent_available(),
                                reason="the loaded libhetccl does not export the agent API of hetccl_agent.h")


def assert_bytes(got, exp, what):
    assert got.shape == exp.shape, f"{what}: {got.shape} bytes, expected {exp.shape}"
    why = first_diff(got, exp)
    assert why is None, f"{what}: {why}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the children (agent_child.py) --------------------------------------------------------------------

@pytest.fixture(params=["window", "tcp"])
def path(request):
    return request.param


@pytest.fixture
def spawn(tmp_path):
    peers = []
    path_of = {}

    def start(label, path="window", env=None):
        p = Peer(str(tmp_path), label, path, env)
        peers.append(p)
        path_of[label] = path
        return p

    yield start
    for p in peers:  # all at once: each closes its agent while the others do
        p.begin_close()
    problems = [why for why in (p.end_close() for p in peers) if why]
    for p in peers:
        tail = p.log_tail(1500).strip()
        if tail:
            print(f"--- {p.label} ({path_of[p.label]}) log:\n{tail}")
    assert not problems, "\n".join(problems)


def secret():
    return os.urandom(32).hex()


def start_agents(spawn, path, key, *names, **kw):
    """One child per name, each with an agent of that name and secret `key`."""
    peers = [spawn(n, path) for n in names]
    for p, n in zip(peers, names):
        p.send("create", name=n, secret=key, **kw)
    for p, n in zip(peers, names):
        assert p.recv() == n
    return peers


def connect(a, b):
    """a and b load each other's current blob."""
    assert a.call("load", blob=b.call("metadata")) == b.label
    assert b.call("load", blob=a.call("metadata")) == a.label


def snap(tmp_path, name):
    return str(tmp_path / f"{name}.bin")


def read_snap(path):
    return np.fromfile(path, np.uint8)


# ---- tests --------------------------------------------------------------------------------------------

def test_write_then_notification(spawn, path, tmp_path):
    """A write of four ranges (1 byte .. 9 MiB, odd offsets, one at the region's end) with a notification: at
    the moment the target takes the notification, every written byte is the writer's and no other changed."""
    key, seed = secret(), int.from_bytes(os.urandom(4), "little")
    w, t = start_agents(spawn, path, key, "writer", "target")
    D = 12 << 20
    dst = t.call("register", key="dst", n=D)
    assert dst["kind"] == "host" and dst["nbytes"] == D
    src = w.call("register", key="src", n=D, seed=seed)["id"]
    connect(w, t)
    ranges = [(src, dst["id"], 3, 0, 1), (src, dst["id"], 4097, 65, 4000),
              (src, dst["id"], 8192, (1 << 20) + 13, (9 << 20) + 11), (src, dst["id"], 100, D - 64, 64)]
    note = b"written " + os.urandom(8).hex().encode()
    t.send("wait_notif", msg=b64(note), timeout=30, snaps={"dst": snap(tmp_path, "dst")})
    w.call("xfer", op="write", peer="target", ranges=ranges, notif=b64(note), fmt="u64")
    got = t.recv()
    assert got == [["writer", b64(note)]]
    exp = np.zeros(D, np.uint8)
    whole = pattern(seed, D)
    for _, _, lo, ro, n in ranges:
        exp[ro:ro + n] = whole[lo:lo + n]
    assert_bytes(read_snap(snap(tmp_path, "dst")), exp, "target buffer when the notification arrived")
    for p in (w, t):  # the path asked for is the one taken: windows of shared memory on one host, else none
        maps = p.call("shared_maps")
        assert bool(maps) == (path == "window"), f"{p.label} ({path}): shared-memory mappings {maps[:3]}"

    # notifications alone: the largest (4096 bytes, more than get_notifs' first buffer), an empty one, 300 bytes
    msgs = [os.urandom(4096), b"", os.urandom(300)]
    for m in msgs:
        w.call("gen_notif", peer="target", msg=b64(m))
    assert t.call("wait_count", n=3, timeout=20) == [["writer", b64(m)] for m in msgs]
    with pytest.raises(hetccl.InvalidArgumentError):
        w.call("gen_notif", peer="target", msg=b64(os.urandom(4097)))
    assert t.call("notifs") == []

    # a forgotten peer is unknown until its blob is loaded again
    w.call("forget", name="target")
    with pytest.raises(hetccl.InvalidArgumentError):
        w.call("xfer", op="write", peer="target", ranges=ranges[:1])
    with pytest.raises(hetccl.InvalidArgumentError):
        w.call("forget", name="target")
    assert w.call("load", blob=t.call("metadata")) == "target"
    t.send("wait_notif", msg=b64(b"again"), timeout=20, snaps={"dst": snap(tmp_path, "again")})
    w.call("xfer", op="write", peer="target", ranges=[(src, dst["id"], 0, 0, D)], notif=b64(b"again"))
    assert t.recv() == [["writer", b64(b"again")]]
    assert_bytes(read_snap(snap(tmp_path, "again")), whole, "target buffer after the whole-region write")


def test_read_many_ranges_two_registrations(spawn, path, tmp_path):
    """One read of 300 ranges from two remote registrations into two local ones (a zero-copy range_dtype array),
    then the notification to the target: the reader's bytes are the target's, and the notification was taken
    by the target when the read completed."""
    key, s1, s2 = secret(), 11, 22
    r, t = start_agents(spawn, path, key, "reader", "target", secret_as="raw")
    n1, n2 = (1 << 20) + 5, 300 * 1024 + 3
    R1 = t.call("register", key="r1", n=n1, seed=s1)["id"]
    R2 = t.call("register", key="r2", n=n2, seed=s2)["id"]
    rng = np.random.default_rng(1234)
    plan, fill = [], [0, 0]
    for k in range(300):
        which = int(rng.integers(0, 2))
        size = 200 * 1024 + k if k % 50 == 7 else int(rng.integers(1, 4097))
        nr = (n1, n2)[which]
        ro = int(rng.integers(0, nr - size + 1))
        local = k % 2
        plan.append((local, which, fill[local], ro, size))
        fill[local] += size + 1  # a gap byte between ranges: must stay zero
    L = [r.call("register", key=f"l{i}", n=fill[i])["id"] for i in (0, 1)]
    connect(r, t)
    ranges = [(L[lc], (R1, R2)[rw], lo, ro, n) for lc, rw, lo, ro, n in plan]
    note = b"read done " + os.urandom(6).hex().encode()
    r.call("xfer", op="read", peer="target", ranges=ranges, notif=b64(note), fmt="struct")
    first_poll = t.call("notifs")  # a completed read's notification was delivered (hetcclAgentCheckXfer)
    assert first_poll == [["reader", b64(note)]], "the read completed but its notification was not at the target"
    src = (pattern(s1, n1), pattern(s2, n2))
    for i in (0, 1):
        r.call("snapshot", key=f"l{i}", path=snap(tmp_path, f"l{i}"))
        exp = np.zeros(fill[i], np.uint8)
        for lc, rw, lo, ro, n in plan:
            if lc == i:
                exp[lo:lo + n] = src[rw][ro:ro + n]
        assert_bytes(read_snap(snap(tmp_path, f"l{i}")), exp, f"reader's region {i}")
    for i, (k, s, n) in enumerate((("r1", s1, n1), ("r2", s2, n2))):
        t.call("snapshot", key=k, path=snap(tmp_path, k))
        assert_bytes(read_snap(snap(tmp_path, k)), pattern(s, n), f"target's region {k} (a read changed it)")


def test_notification_after_data_1000_writes(spawn, path, tmp_path):
    """1000 writes posted back to back, each with a notification naming its sequence number; on every
    notification the target checks at once that the record of that write is in place (and they come in order)."""
    key, seed = secret(), int.from_bytes(os.urandom(4), "little")
    w, t = start_agents(spawn, path, key, "writer", "target", secret_as="raw")
    N = 1000
    sizes = [(128 << 10) + i if i % 97 == 13 else 48 + i % 17 for i in range(N)]
    offs, o = [], 0
    for s in sizes:
        offs.append(o)
        o += s + 3
    total = o
    dst = t.call("register", key="dst", n=total)["id"]
    w.call("register", key="src", n=total, seed=seed, records=[offs, sizes])
    connect(w, t)
    t.send("seq_check", key="dst", seed=seed, offs=offs, sizes=sizes, total=total, peer="writer", timeout=30)
    w.call("seq_write", peer="target", src_key="src", dst_region=dst, offs=offs, sizes=sizes, fmt="tuples")
    res = t.recv()
    assert res["nbad"] == 0, f"{res['nbad']} notification(s) before their data: {res['bad']}"
    assert res["seen"] == list(range(N)), f"notifications out of order or missing: {len(res['seen'])} received"
    exp = np.zeros(total, np.uint8)
    rec = seq_records(seed, offs, sizes, total)
    for o, s in zip(offs, sizes):
        exp[o:o + s] = rec[o:o + s]
    t.call("snapshot", key="dst", path=snap(tmp_path, "dst"))
    assert_bytes(read_snap(snap(tmp_path, "dst")), exp, "target after 1000 writes")


def test_blob_authentication(spawn, tmp_path):
    """Refused at load (InvalidArgumentError): a blob with one byte flipped (at many places), cut or extended,
    another deployment's blob, the agent's own, an older blob of the loaded incarnation. The genuine blob
    loads afterwards and a transfer with it works."""
    key = secret()
    a, b = start_agents(spawn, "window", key, "alice", "bob")
    (c,) = start_agents(spawn, "window", secret(), "carol")
    seed = 5
    a.call("register", key="first", n=4096)
    blob1 = unb64(a.call("metadata"))
    rng = np.random.default_rng(7)
    where = sorted({0, 1, len(blob1) // 2, len(blob1) - 1, *rng.integers(0, len(blob1), 12).tolist()})
    forged = []
    for i in where:
        for x in (0xFF, 0x01):
            f = bytearray(blob1)
            f[i] ^= x
            forged.append(bytes(f))
    forged += [blob1[:-1], blob1 + b"\0", blob1[:len(blob1) // 2], b"", os.urandom(len(blob1))]
    res = b.call("try_load", blobs=[b64(f) for f in forged])
    wrong = [(i, r) for i, r in enumerate(res) if r[0] != "InvalidArgumentError"]
    assert not wrong, f"forged blobs not refused as InvalidArgumentError: {wrong[:4]}"
    carol = unb64(c.call("metadata"))
    (other,) = b.call("try_load", blobs=[b64(carol)])
    assert other[0] == "InvalidArgumentError", f"a blob of another secret was not refused: {other}"
    (back,) = c.call("try_load", blobs=[b64(blob1)])
    assert back[0] == "InvalidArgumentError", f"another deployment loaded our blob: {back}"
    (own,) = a.call("try_load", blobs=[b64(blob1)])
    assert own[0] == "InvalidArgumentError", f"an agent loaded its own blob: {own}"
    # a newer blob (one more registration) replaces the older; the older is then refused
    second = a.call("register", key="second", n=4096)["id"]
    blob2 = unb64(a.call("metadata"))
    assert b.call("load", blob=b64(blob2)) == "alice"
    (old,) = b.call("try_load", blobs=[b64(blob1)])
    assert old[0] == "InvalidArgumentError", f"an older blob of the loaded incarnation was accepted: {old}"
    # nothing of the refusals stuck: a write into the second registration works
    src = b.call("register", key="src", n=4096, seed=seed)["id"]
    note = b"ok"
    a.send("wait_notif", msg=b64(note), timeout=20, snaps={"second": snap(tmp_path, "second")})
    b.call("xfer", op="write", peer="alice", ranges=[(src, second, 0, 0, 4096)], notif=b64(note))
    assert a.recv() == [["bob", b64(note)]]
    assert_bytes(read_snap(snap(tmp_path, "second")), pattern(seed, 4096), "alice's second registration")


def test_out_of_bounds_and_bad_arguments(spawn, tmp_path):
    """prep_xfer refuses (InvalidArgumentError) ranges outside the remote or local registration (also when
    offset + bytes wraps), unknown regions or peers, empty ranges, a notification over 4096 bytes; nothing
    moves. A range ending exactly at the remote end is accepted and written."""
    key, seed = secret(), 9
    a, b = start_agents(spawn, "window", key, "alice", "bob")
    D = 4096 + 7
    dst = b.call("register", key="dst", n=D)["id"]
    src = a.call("register", key="src", n=8192, seed=seed)["id"]
    connect(a, b)
    good = (src, dst, 0, D - 16, 16)
    bad = [[(src, dst, 0, D - 8, 16)], [(src, dst, 0, D, 1)], [(src, dst, 0, 0, D + 1)],
           [(src, dst, 0, (1 << 64) - 8, 16)], [(src, dst, (1 << 64) - 8, 0, 16)], [(src, dst + 1000, 0, 0, 8)],
           [(src, dst, 8190, 0, 8)], [(src, dst, 0, 0, 0)], [(src + 1000, dst, 0, 0, 8)],
           [good, good, (src, dst, 0, D - 1, 2)]]
    cases = [[op, "bob", r, ""] for r in bad for op in ("write", "read")]
    cases += [["write", "bob", [], ""], ["write", "nobody", [good], ""], ["write", "bob", [good], b64(bytes(4097))]]
    res = a.call("try_prep", cases=cases)
    wrong = [(c, r) for c, r in zip(cases, res) if r[0] != "InvalidArgumentError"]
    assert not wrong, f"not refused at prep: {wrong[:4]}"
    note = b"edge"
    b.send("wait_notif", msg=b64(note), timeout=20, snaps={"dst": snap(tmp_path, "dst")})
    a.call("xfer", op="write", peer="bob", ranges=[good], notif=b64(note))
    assert b.recv() == [["alice", b64(note)]], "a refused prep moved something (or the edge write lost its note)"
    exp = np.zeros(D, np.uint8)
    exp[D - 16:] = pattern(seed, 8192)[:16]
    assert_bytes(read_snap(snap(tmp_path, "dst")), exp, "bob's region after the refused preps and the edge write")


def test_deregistered_region_is_stale(spawn, path, tmp_path):
    """A write with a blob listing a region the target deregistered fails (InvalidArgumentError naming the peer)
    -- also after the target registered another of the same size (ids are never aliased) -- and changes nothing;
    with the new blob it works."""
    key, seed = secret(), 31
    a, b = start_agents(spawn, path, key, "alice", "bob")
    n = 64 << 10
    old = b.call("register", key="old", n=n)["id"]
    src = a.call("register", key="src", n=n, seed=seed)["id"]
    connect(a, b)
    b.call("deregister", key="old")
    new = b.call("register", key="new", n=n)["id"]
    for note in (b"stale 1", b"stale 2"):  # refused by the target: InvalidArgumentError (hetccl_agent.h)
        with pytest.raises(hetccl.InvalidArgumentError) as e:
            a.call("xfer", op="write", peer="bob", ranges=[(src, old, 0, 0, n)], notif=b64(note))
        assert "bob" in str(e.value) and "stale" in str(e.value), f"not a stale region naming the peer: {e.value}"
    b.call("snapshot", key="new", path=snap(tmp_path, "new"))
    assert_bytes(read_snap(snap(tmp_path, "new")), np.zeros(n, np.uint8), "the new region after the stale writes")
    assert b.call("notifs") == [], "a refused write's notification was delivered"
    assert a.call("load", blob=b.call("metadata")) == "bob"
    note = b"fresh"
    b.send("wait_notif", msg=b64(note), timeout=20, snaps={"new": snap(tmp_path, "new")})
    a.call("xfer", op="write", peer="bob", ranges=[(src, new, 0, 0, n)], notif=b64(note))
    b.recv()
    assert_bytes(read_snap(snap(tmp_path, "new")), pattern(seed, n), "the new region after the write")


def test_stale_blob_after_restart(spawn, path, tmp_path):
    """The target's process dies and another starts with the same name and address: transfers with the old
    blob fail (RemoteError naming it: dead, then stale) and write nothing; after loading the new blob they work."""
    key, s1, s2 = secret(), 41, 42
    listen = f"127.0.0.1:{free_port()}"
    (w,) = start_agents(spawn, path, key, "writer")
    t1 = spawn("kv-target", path)
    assert t1.call("create", name="kv-target", secret=key, listen=listen) == "kv-target"
    n = 256 << 10
    d1 = t1.call("register", key="dst", n=n)["id"]
    src1 = w.call("register", key="src1", n=n, seed=s1)["id"]
    src2 = w.call("register", key="src2", n=n, seed=s2)["id"]
    connect(w, t1)
    t1.send("wait_notif", msg=b64(b"one"), timeout=20, snaps={"dst": snap(tmp_path, "one")})
    w.call("xfer", op="write", peer="kv-target", ranges=[(src1, d1, 0, 0, n)], notif=b64(b"one"))
    t1.recv()
    assert_bytes(read_snap(snap(tmp_path, "one")), pattern(s1, n), "first incarnation's buffer")
    t1.kill()
    t2 = spawn("kv-target", path)
    assert t2.call("create", name="kv-target", secret=key, listen=listen) == "kv-target"
    d2 = t2.call("register", key="dst", n=n)["id"]
    errors = []
    for attempt in range(2):  # the first may meet the dead connection; the second connects to the new process
        with pytest.raises(hetccl.RemoteError) as e:
            w.call("xfer", op="write", peer="kv-target", ranges=[(src2, d1, 0, 0, n)], notif=b64(b"stale"))
        errors.append(f"{type(e.value).__name__}: {e.value}")
        assert "kv-target" in str(e.value), f"attempt {attempt}: the error does not name the peer: {e.value}"
    assert "stale" in errors[-1], f"the second attempt with the old blob did not say stale metadata: {errors[-1]}"
    t2.call("snapshot", key="dst", path=snap(tmp_path, "stale"))
    assert_bytes(read_snap(snap(tmp_path, "stale")), np.zeros(n, np.uint8),
                 f"the new incarnation's buffer after writes with the stale blob ({errors})")
    assert t2.call("notifs") == [], "a stale write's notification was delivered"
    assert w.call("load", blob=t2.call("metadata")) == "kv-target"
    t2.send("wait_notif", msg=b64(b"two"), timeout=20, snaps={"dst": snap(tmp_path, "two")})
    w.call("xfer", op="write", peer="kv-target", ranges=[(src2, d2, 0, 0, n)], notif=b64(b"two"))
    assert t2.recv() == [["writer", b64(b"two")]]
    assert_bytes(read_snap(snap(tmp_path, "two")), pattern(s2, n), "the new incarnation's buffer")


def test_killed_peer(spawn, path, tmp_path):
    """A peer killed with SIGKILL: transfers and notifications to it fail with RemoteError naming it, quickly,
    while transfers to a live peer -- posted at the same time -- still succeed and deliver their bytes."""
    key, s1, s2 = secret(), 51, 52
    a, b, v = start_agents(spawn, path, key, "alice", "bob", "victim")
    n = 128 << 10
    src1 = a.call("register", key="src1", n=n, seed=s1)["id"]
    src2 = a.call("register", key="src2", n=n, seed=s2)["id"]
    db = b.call("register", key="dst", n=n)["id"]
    dv = v.call("register", key="dst", n=n)["id"]
    connect(a, b)
    connect(a, v)
    v.send("wait_notif", msg=b64(b"hi"), timeout=20)
    assert a.call("xfers", jobs=[["write", "victim", [(src1, dv, 0, 0, n)], b64(b"hi")],
                                 ["write", "bob", [(src1, db, 0, 0, n)], ""]]) == [[None, ""], [None, ""]]
    v.recv()
    v.kill()
    t0 = time.monotonic()
    res = a.call("xfers", jobs=[["write", "victim", [(src2, dv, 0, 0, n)], b64(b"dead")],
                                ["write", "bob", [(src2, db, 0, 0, n)], b64(b"live")]])
    assert res[0][0] == "RemoteError" and "victim" in res[0][1], f"write to the killed peer: {res[0]}"
    assert res[1] == [None, ""], f"write to the live peer beside it: {res[1]}"
    for _ in range(2):
        with pytest.raises(hetccl.RemoteError, match="victim"):
            a.call("xfer", op="write", peer="victim", ranges=[(src2, dv, 0, 0, n)])
        with pytest.raises(hetccl.RemoteError, match="victim"):
            a.call("gen_notif", peer="victim", msg=b64(b"x"))
    took = time.monotonic() - t0
    assert took < AGENT_TIMEOUT, f"failing the transfers to a dead peer took {took:.1f} s (timeout {AGENT_TIMEOUT})"
    b.send("wait_notif", msg=b64(b"still"), timeout=20, snaps={"dst": snap(tmp_path, "bob")})
    a.call("xfer", op="write", peer="bob", ranges=[(src1, db, 0, 0, n // 2)], notif=b64(b"still"))
    assert b.recv() == [["alice", b64(b"live")], ["alice", b64(b"still")]]
    exp = pattern(s2, n)
    exp[:n // 2] = pattern(s1, n)[:n // 2]
    assert_bytes(read_snap(snap(tmp_path, "bob")), exp, "the live peer's buffer")


def test_cancel_queued(spawn, path, tmp_path):
    """A small write queued behind a 64 MiB one and cancelled never runs (its bytes stay zero, its notification
    never comes); posted again it works. Check before a post, and a second post or a release while it runs,
    are InvalidUsageError."""
    key, s1, s2 = secret(), 61, 62
    w, t = start_agents(spawn, path, key, "writer", "target")
    big, small = 64 << 20, 4096
    w.call("register", key="big", n=big, seed=s1)
    w.call("register", key="small", n=small, seed=s2)
    dbig = t.call("register", key="big", n=big)["id"]
    dsmall = t.call("register", key="small", n=small)["id"]
    connect(w, t)
    t.send("wait_notif", msg=b64(b"after"), timeout=30,
           snaps={"big": snap(tmp_path, "big"), "small": snap(tmp_path, "small")})
    res = w.call("cancel_queued", peer="target", big=["big", dbig], small=["small", dsmall, small], big_bytes=big)
    notes = t.recv()
    assert res["check_unposted"][0] == "InvalidUsageError", res
    assert res["x1_running_after_cancel"], "precondition: the 64 MiB write had already ended when x2 was cancelled"
    assert res["repost_running"][0] == "InvalidUsageError", res
    assert res["release_running"][0] == "InvalidUsageError", res
    assert res["x2_states"][-1][0] == "InvalidUsageError", f"the cancelled transfer's check(): {res['x2_states']}"
    assert ["ok", True] not in res["x2_states"], f"the cancelled transfer completed: {res['x2_states']}"
    assert res["x1_wait"] == ["ok", None], res
    assert notes == [["writer", b64(b"x1")], ["writer", b64(b"after")]]
    assert_bytes(read_snap(snap(tmp_path, "small")), np.zeros(small, np.uint8), "the cancelled write's target")
    assert_bytes(read_snap(snap(tmp_path, "big")), pattern(s1, big), "the 64 MiB write's target")
    t.send("wait_notif", msg=b64(b"x2"), timeout=20, snaps={"small": snap(tmp_path, "small2")})
    w.call("post_wait", key="x2")
    assert t.recv() == [["writer", b64(b"x2")]]
    assert_bytes(read_snap(snap(tmp_path, "small2")), pattern(s2, small), "the re-posted write's target")


def test_secret_from_environment(spawn, tmp_path):
    """secret=None takes HETCCL_SECRET (hex); an agent given the same hex digits (other case) as secret= is of
    the same deployment; with neither, creating an agent fails."""
    key, seed = secret(), 71
    e = spawn("env-agent", env={"HETCCL_SECRET": key})
    assert e.call("create", name="env-agent", secret=None) == "env-agent"
    (k,) = start_agents(spawn, "window", key.upper(), "key-agent")
    connect(e, k)
    dst = e.call("register", key="dst", n=1000)["id"]
    assert k.call("load", blob=e.call("metadata")) == "env-agent"
    src = k.call("register", key="src", n=1000, seed=seed)["id"]
    e.send("wait_notif", msg=b64(b"env"), timeout=20, snaps={"dst": snap(tmp_path, "dst")})
    k.call("xfer", op="write", peer="env-agent", ranges=[(src, dst, 0, 0, 1000)], notif=b64(b"env"))
    assert e.recv() == [["key-agent", b64(b"env")]]
    assert_bytes(read_snap(snap(tmp_path, "dst")), pattern(seed, 1000), "written between env and secret= agents")
    n = spawn("no-secret")
    with pytest.raises(hetccl.InvalidArgumentError):
        n.call("create", name="no-secret", secret=None)
