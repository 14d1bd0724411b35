"""The torch.distributed backend "hetccl" (hetccl/torch_backend.py) beyond op-by-op conformance, on every rank
of the job (every op and dtype against Gloo: test_torch_backend_ops.py): the package and the group, ops and
dtypes it refuses, point-to-point (blocking, the deferred isend/irecv, batch_isend_irecv), the barrier, async
Works, errors out of hetccl, a sub-group, DDP over hetccl against DDP over Gloo, a torchrun-style job.

The groups and the helpers: torch_backend_support.py. Each test makes all its calls before asserting, so a
failing rank stays in step with the others.

Run: hetccl-run -n 3 --domains 2 -- python -m pytest python/tests/test_torch_backend_semantics.py (CI:
python/ci/run_pytest_job.sh with --only, tests/python/CMakeLists.txt). Skipped without torch."""

import os
import subprocess
import sys
import time

import pytest

from torch_backend_support import (  # skips this module without torch
    BF16, F16, F32, F64, I8, I32, I64, TIMEOUT, Check, dist, reduce_here, same, torch, values)
from torch_backend_support import g  # noqa: F401 - the module fixture: pytest looks for it in this module

import hetccl  # noqa: E402 - after the skip above: hetccl.torch_backend imports torch
import hetccl.torch_backend as tb  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- package-level behaviour --------------------------------------------------------------------------

def test_import_hetccl_does_not_import_torch():
    code = "import sys, hetccl; assert 'torch' not in sys.modules, 'import hetccl imported torch'; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_register_is_idempotent():
    tb.register()
    tb.register()
    import importlib
    importlib.reload(tb)  # runs register() at import again
    assert dist.Backend("hetccl") == "hetccl"
    assert dist.Backend._plugins["HETCCL"].creator_fn.__name__ == "create_process_group"


@pytest.mark.skipif(int(torch.__version__.split(".")[0]) >= 2, reason="torch 2 parses device-mapped backends")
def test_device_mapped_backend_string_is_refused_by_torch_1():
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.Backend("cpu:gloo,cuda:hetccl")


def test_group_is_hetccl(g):
    assert dist.get_backend() == "hetccl"
    assert isinstance(g.pg, tb.ProcessGroupHetccl)
    assert g.pg.name() == "hetccl" and g.pg.size() == g.size and g.pg.rank() == g.rank
    assert g.pg.comm.size == g.size and g.pg.comm.rank == g.rank and g.pg.timeout == TIMEOUT


# ---- what the backend refuses -------------------------------------------------------------------------

def test_unsupported_ops_raise(g):
    x = torch.ones(4)
    with pytest.raises(NotImplementedError, match="PREMUL_SUM"):
        dist.all_reduce(x, dist._make_nccl_premul_sum(2.0))
    for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
        with pytest.raises(RuntimeError, match="does not support ReduceOp"):
            dist.all_reduce(torch.ones(4, dtype=I32), op)
    with pytest.raises(NotImplementedError, match="PREMUL_SUM"):
        dist.reduce_scatter_tensor(torch.empty(2), torch.ones(2 * g.size), dist._make_nccl_premul_sum(0.5))


def test_unreducible_dtypes_raise_type_error(g):
    with pytest.raises(TypeError, match="torch.bool"):
        dist.all_reduce(torch.ones(4, dtype=torch.bool))
    with pytest.raises(TypeError, match="torch.int16"):
        dist.reduce_scatter_tensor(torch.empty(2, dtype=torch.int16), torch.ones(2 * g.size, dtype=torch.int16))
    with pytest.raises(TypeError, match="torch.complex64"):
        dist.reduce(torch.ones(4, dtype=torch.complex64), 0)
    with pytest.raises(TypeError, match="torch.int16"):
        dist.reduce_scatter(torch.empty(2, dtype=torch.int16), [torch.ones(2, dtype=torch.int16)] * g.size)


# ---- point-to-point, barrier ---------------------------------------------------------------------------

@pytest.fixture
def two_or_more(g):
    if g.size < 2:
        pytest.skip("needs 2 ranks")
    return g


def test_send_recv(two_or_more):
    g = two_or_more
    s, me = g.size, g.rank
    check = Check()
    # blocking send/recv: rank 0 to every other rank, then every other rank back to 0
    for p in range(1, s):
        if me == 0:
            dist.send(values(p, F64, 9, salt=11), p)
        elif me == p:
            r = torch.empty(9, dtype=F64)
            dist.recv(r, 0)
            check("recv from 0", r, values(p, F64, 9, salt=11))
    for p in range(1, s):
        if me == p:
            dist.send(values(p, torch.bool, 5, salt=12), 0)
        elif me == 0:
            r = torch.empty(5, dtype=torch.bool)
            dist.recv(r, p)
            check(f"recv bool from {p}", r, values(p, torch.bool, 5, salt=12))
    # isend/irecv around the ring: deferred until a wait, then run together, so that neither blocks the
    # other. 16 MB: hetccl buffers a few MB of an unmatched send; this size made two plain sends-first wait
    # for each other until HETCCL_TIMEOUT (seen with hetccl.Communicator.send on 2 ranks)
    nxt, prv = (me + 1) % s, (me - 1) % s
    big = 8 << 20
    r = torch.empty(big, dtype=BF16)
    ws = dist.isend(values(me, BF16, big, salt=13), nxt)
    wr = dist.irecv(r, prv)
    pending = (ws.is_completed(), wr.is_completed())
    wr.wait()
    done = (ws.is_completed(), wr.is_completed(), ws.is_success(), wr.exception())
    ws.wait()
    check("irecv around the ring", r, values(prv, BF16, big, salt=13))
    # batch_isend_irecv the other way round, and Gloo doing the same
    r2, r3 = torch.empty(77, dtype=I8), torch.empty(77, dtype=I8)
    for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, values(me, I8, 77, salt=14), prv),
                                     dist.P2POp(dist.irecv, r2, nxt)]):
        w.wait()
    for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, values(me, I8, 77, salt=14), prv, g.gloo),
                                     dist.P2POp(dist.irecv, r3, nxt, g.gloo)]):
        w.wait()
    check("batch_isend_irecv vs Gloo", r2, r3)
    check("batch_isend_irecv vs here", r2, values(nxt, I8, 77, salt=14))
    check.done()
    assert pending == (False, False), "isend/irecv Works should be pending before a wait"
    assert done == (True, True, True, None), done
    assert wr.source_rank() == prv


def test_recv_without_source_and_tags_raise(two_or_more):
    with pytest.raises(NotImplementedError, match="any source"):
        dist.recv(torch.empty(2))
    with pytest.raises(NotImplementedError, match="any source"):
        dist.irecv(torch.empty(2))
    with pytest.raises(NotImplementedError, match="tag"):
        dist.isend(torch.empty(2), (two_or_more.rank + 1) % two_or_more.size, tag=3)


def test_barrier_waits_for_the_last_rank(g):
    dist.barrier(group=g.gloo)
    t0 = time.monotonic()
    if g.rank == 0:
        time.sleep(1.0)
    dist.barrier()
    waited = time.monotonic() - t0
    assert waited >= 0.5, f"barrier returned after {waited:.3f} s while rank 0 slept 1 s"


# ---- Work ------------------------------------------------------------------------------------------------

def test_async_work(g):
    x = values(g.rank, I32, 37)
    w = dist.all_reduce(x, async_op=True)
    state = (isinstance(w, tb.Work), w.is_completed(), w.is_success(), w.exception())
    fut = w.get_future()
    got = fut.wait()
    ok = w.wait()
    res = w.result()
    out = torch.empty(4, dtype=F16)
    w2 = dist.reduce_scatter_tensor(out, values(g.rank, F16, 4 * g.size), async_op=True)
    fut2 = w2.get_future()
    a2a = torch.empty(2 * g.size, dtype=I64)
    w3 = dist.all_to_all_single(a2a, values(g.rank, I64, 2 * g.size), async_op=True)
    w3.wait()
    w4 = dist.barrier(async_op=True)
    w4.wait()
    assert state == (True, True, True, None), state
    assert ok is True and fut.done() and isinstance(got, list) and got[0] is x and res[0] is x
    assert same(x, reduce_here([values(r, I32, 37) for r in range(g.size)], "SUM", I32))
    assert fut2.done() and fut2.value()[0] is out
    assert w3.is_completed() and w4.is_completed()


# ---- errors --------------------------------------------------------------------------------------------

def test_hetccl_errors_propagate(g):
    """A validation error of the library (root out of range) raises out of dist.broadcast and leaves the
    group usable; ranks calling different ops on a group get hetccl's RemoteError out of dist.all_reduce
    (that group is then unusable: aborted); a Work whose call failed says so.

    Each rank aborts the bad group as soon as its call failed: with this library a rank that detects the
    disagreement does not always tell every peer (seen: 2 ranks in 2 domains, and 3 ranks in one domain,
    one rank waited for HETCCL_TIMEOUT for data the detecting rank never sent), so a peer may learn of it
    only as "closed its end of the connection" when the detecting rank aborts. At least one rank names the
    disagreement."""
    with pytest.raises(hetccl.InvalidArgumentError, match="root"):
        dist.broadcast(torch.ones(4), g.size + 3)
    x = torch.ones(4)
    dist.all_reduce(x)
    usable = same(x, torch.full((4,), float(g.size)))
    bad = dist.new_group(backend="hetccl", timeout=TIMEOUT)
    op = dist.ReduceOp.MAX if g.rank == 0 else dist.ReduceOp.SUM
    err = None
    try:
        dist.all_reduce(torch.ones(4), op, group=bad)
    except hetccl.HetcclError as e:
        err = e
    bad.abort()
    failed_work = None
    if g.size > 1:  # a deferred isend on the aborted group: its Work fails when run
        w = dist.isend(torch.ones(4), (g.rank + 1) % g.size, group=bad)
        before = w.is_completed()
        try:
            w.wait()
            raised = None
        except hetccl.HetcclError as e:
            raised = e
        try:
            w.get_future().wait()
            fut_raised = None
        except RuntimeError as e:
            fut_raised = e
        failed_work = (before, raised is not None, w.is_completed(), w.is_success(), w.exception() is raised,
                       fut_raised is not None)
    named = torch.tensor([int(err is not None and "disagree" in str(err))])
    dist.all_reduce(named, dist.ReduceOp.MAX, group=g.gloo)
    dist.destroy_process_group(bad)
    assert usable
    if g.size > 1:
        assert isinstance(err, hetccl.RemoteError), repr(err)
        assert named.item() == 1, f"no rank's error names the disagreement; this rank's: {err}"
        # (pending, wait raised, completed, success, exception() is that error, the future raised)
        assert failed_work == (False, True, True, False, True, True), failed_work


def test_subgroup(two_or_more):
    """A hetccl group of ranks {0, last}: group ranks differ from global ones (rank `last` is group rank 1)."""
    g = two_or_more
    last = g.size - 1
    sub = dist.new_group([0, last], backend="hetccl", timeout=TIMEOUT)
    x = values(g.rank, I64, 10, salt=20)
    b = values(g.rank, F32, 10, salt=21)
    if g.rank in (0, last):
        dist.all_reduce(x, group=sub)
        dist.broadcast(b, last, group=sub)  # src is a global rank
        sub.shutdown()
    dist.destroy_process_group(sub)
    if g.rank in (0, last):
        assert same(x, values(0, I64, 10, salt=20) + values(last, I64, 10, salt=20))
        assert same(b, values(last, F32, 10, salt=21))
    else:
        assert sub == dist.GroupMember.NON_GROUP_MEMBER


# ---- DDP -----------------------------------------------------------------------------------------------

def make_model(seed):
    """Weights k/8 (|k| <= 8): with integer inputs and a learning rate of 1/16, every gradient, its sum over
    ranks and every update stay exact in float64 for the steps below, so sums in any order agree bitwise."""
    gen = torch.Generator().manual_seed(seed)
    m = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3)).to(F64)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randint(-8, 9, p.shape, generator=gen).to(F64) / 8)
    return m


def train(model, group, rank, size, steps=4):
    ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=1 / 16)
    for step in range(steps):
        gen = torch.Generator().manual_seed(100 * step + rank)
        inp = torch.randint(-3, 4, (4, 6), generator=gen).to(F64)
        opt.zero_grad()
        (ddp(inp).sum() * size).backward()  # * size: DDP divides by the world size; the gradient stays exact
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def test_ddp_matches_gloo(g):
    """Each rank starts from other weights (seed = rank): DDP broadcasts rank 0's, then trains on per-rank
    inputs. The parameters after DDP over hetccl and over Gloo must be equal bitwise, and on every rank."""
    calls = {}

    def counting(name):
        real = getattr(g.pg.comm, name)

        def call(*a, **k):
            calls[name] = calls.get(name, 0) + 1
            return real(*a, **k)
        return call

    for name in ("all_reduce", "broadcast", "all_gather"):
        setattr(g.pg.comm, name, counting(name))
    try:
        ph = train(make_model(g.rank), None, g.rank, g.size)  # the default group: hetccl
    finally:
        for name in ("all_reduce", "broadcast", "all_gather"):
            delattr(g.pg.comm, name)
    pg = train(make_model(g.rank), g.gloo, g.rank, g.size)
    start = [p.detach() for p in make_model(0).parameters()]
    check = Check()
    for i, (a, b) in enumerate(zip(ph, pg)):
        check(f"parameter {i}: DDP over hetccl vs over Gloo", a, b)
        gathered = [torch.empty_like(a) for _ in range(g.size)]
        dist.all_gather(gathered, a, group=g.gloo)
        for r, other in enumerate(gathered):
            check(f"parameter {i} on rank {r} vs this rank", other, a)
    check.done()
    assert any(not same(a, b) for a, b in zip(ph, start)), "training changed nothing"
    # DDP's C++ reached hetccl: the parameter check (all_gather), the start broadcast, a gradient all_reduce
    # per step (one bucket)
    assert calls.get("all_gather", 0) >= 1 and calls.get("broadcast", 0) >= 1 and calls.get("all_reduce", 0) >= 4, \
        calls


# ---- torchrun-style job (no hetccl-run) -------------------------------------------------------------------

def test_torchrun_style_job(job_rank):
    """Two processes with torchrun's variables only (no hetccl-run variables, no HETCCL_SECRET):
    init_process_group("hetccl") through env:// gets hetccl's unique id from torch's store. Runs on rank 0
    of the test job only (it uses no group of the others)."""
    if job_rank != 0:
        pytest.skip("spawns a job of its own: rank 0 of the test job only")
    from test_jobs import clean_env, free_port_pair, run_children
    port = free_port_pair()
    cmds = []
    for r in range(2):
        env = clean_env(RANK=r, WORLD_SIZE=2, LOCAL_RANK=r, LOCAL_WORLD_SIZE=2, MASTER_ADDR="127.0.0.1",
                        MASTER_PORT=port, HETCCL_TIMEOUT=30)
        env.pop("HETCCL_SECRET", None)
        cmds.append(([sys.executable, os.path.join(HERE, "torch_child.py")], env))
    outs = run_children(cmds, timeout=120)
    for r, (rc, out) in enumerate(outs):
        assert rc == 0 and f"rank {r} of 2: torch ok" in out, out
