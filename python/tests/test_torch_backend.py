"""The torch.distributed backend "hetccl" (hetccl/torch_backend.py) against Gloo, on every rank of the job.

A module fixture initialises torch.distributed once per process with the hetccl backend (a TCPStore whose
port rank 0 broadcasts over the job's communicator) and makes a Gloo group over the same ranks. Every test
runs an op through both and compares: bitwise with Gloo's result where Gloo 1.13 has the op and dtype, and
with a result computed here from the inputs (which are a function of the rank, so every rank can compute
every rank's) -- always. Gloo 1.13 lacks bfloat16, bool, int16, AVG, reduce_scatter, the *_base forms and the
list all_to_all: there the Gloo reference is composed (float32 values, uint8 views of the bytes, a SUM
divided here, an all_reduce whose block is taken, all_to_all_single on the concatenation). Values are
small integers (scaled by the group size for float AVG) so that every reduction is exact in every dtype
and order. Each test makes all its calls before asserting, so a failing rank stays in step with the others.

Run: hetccl-run -n 3 --domains 2 -- python -m pytest python/tests/test_torch_backend.py (CI:
python/ci/run_pytest_job.sh with --only, tests/python/CMakeLists.txt). Skipped without torch."""

import datetime
import os
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch", reason="the torch backend needs torch")
dist = pytest.importorskip("torch.distributed", reason="the torch backend needs torch.distributed")
if not dist.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)

import hetccl  # noqa: E402
import hetccl.torch_backend as tb  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = datetime.timedelta(seconds=120)

F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
I8, U8, I32, I64 = torch.int8, torch.uint8, torch.int32, torch.int64
REDUCIBLE = [F32, F64, F16, BF16, I8, I32, I64, U8]
MOVABLE = REDUCIBLE + [torch.bool, torch.int16, torch.complex64]
GLOO_DTYPES = {F16, F32, F64, I8, U8, I32, I64}  # what ProcessGroupGloo 1.13 takes ("Invalid scalar type" else)
OPS = ["SUM", "PRODUCT", "MIN", "MAX", "AVG"]
SIZES = [1, 37, 4099]


def name(x):
    return str(x).replace("torch.", "")


# ---- the groups -------------------------------------------------------------------------------------

class Groups:
    def __init__(self, rank, size, gloo):
        self.rank, self.size, self.gloo = rank, size, gloo
        self.pg = dist.distributed_c10d._get_default_group()


@pytest.fixture(scope="module")
def g(comm, request):
    rank, size = comm.rank, comm.size
    assert not dist.is_initialized()
    if rank == 0:  # hetccl-run starts every rank on this machine
        store = dist.TCPStore("127.0.0.1", 0, size, True, timeout=TIMEOUT, wait_for_workers=False)
        port = store.port
    port = int(comm.broadcast_bytes(str(port).encode() if rank == 0 else None).decode())
    if rank != 0:
        store = dist.TCPStore("127.0.0.1", port, size, False, timeout=TIMEOUT)
    dist.init_process_group("hetccl", store=store, rank=rank, world_size=size, timeout=TIMEOUT)
    gloo = dist.new_group(backend="gloo", timeout=TIMEOUT)
    groups = Groups(rank, size, gloo)
    yield groups
    try:
        if request.session.testsfailed:
            groups.pg.abort()  # this rank may be out of step: do not wait for the others
        else:
            groups.pg.shutdown()
    finally:
        dist.destroy_process_group()


# ---- values and references --------------------------------------------------------------------------

def ints(rank, n, lo, hi, salt):
    gen = torch.Generator().manual_seed(1_000_003 * salt + 7919 * rank + n)
    return torch.randint(lo, hi + 1, (n,), generator=gen, dtype=torch.int64)


def values(rank, dtype, n, op="SUM", salt=0, size=1):
    """Rank `rank`'s input: small integers, exact in every dtype; per op, a range whose reduction over 3
    ranks stays exact and in range (int8 and uint8 included)."""
    unsigned = dtype in (U8, torch.bool)
    if op == "PRODUCT":
        v = ints(rank, n, 1, 3, salt)
        if not unsigned:
            v = v * (ints(rank, n, 0, 1, salt + 1) * 2 - 1)
    elif op in ("MIN", "MAX"):
        v = ints(rank, n, 0 if unsigned else -50, 100 if unsigned else 50, salt)
    else:
        v = ints(rank, n, 0 if unsigned else -20, 40 if unsigned else 20, salt)
        if op == "AVG" and dtype.is_floating_point:
            v = v * size  # x / size exact whatever the order of the division and the sum
    if dtype == torch.bool:
        return v % 2 == 0
    if dtype == torch.complex64:
        return torch.complex(v.float(), -v.float())
    return v.to(dtype)


def reduce_here(inputs, op, dtype):
    """The reduction over ranks, computed exactly here (int64 / float64) and cast to the dtype."""
    wide = torch.stack([x.to(F64 if dtype.is_floating_point else I64) for x in inputs])
    if op == "SUM":
        r = wide.sum(0)
    elif op == "PRODUCT":
        r = wide.prod(0)
    elif op == "MIN":
        r = wide.min(0).values
    elif op == "MAX":
        r = wide.max(0).values
    elif dtype.is_floating_point:
        r = wide.sum(0) / len(inputs)
    else:
        r = torch.div(wide.sum(0), len(inputs), rounding_mode="trunc")  # hetccl.h: integer AVG truncates
    return r.to(dtype)


def gloo_all_reduce(x, op, g):
    """Gloo's all_reduce of x: bfloat16 through float32 (exact here), AVG as a SUM divided here."""
    dtype = x.dtype
    y = x.to(F32) if dtype == BF16 else x.clone()
    if op == "AVG":
        if dtype.is_floating_point:
            dist.all_reduce(y, dist.ReduceOp.SUM, group=g.gloo)
            y = y / g.size
        else:
            y = y.to(I64)
            dist.all_reduce(y, dist.ReduceOp.SUM, group=g.gloo)
            y = torch.div(y, g.size, rounding_mode="trunc")
    else:
        dist.all_reduce(y, getattr(dist.ReduceOp, op), group=g.gloo)
    return y.to(dtype)


def gview(t):
    """What Gloo moves for `t`: t itself, or its bytes (uint8) for the dtypes Gloo 1.13 does not take."""
    return t if t.dtype in GLOO_DTYPES else t.contiguous().view(U8)


def unview(t, dtype):
    return t if t.dtype == dtype else t.view(dtype)


def bits(t):
    """The tensor's bits: float16 -0.0 and 0.0 differ, NaNs compare."""
    t = t.contiguous()
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype == torch.bool:
        return t.view(U8)
    if t.is_floating_point():
        return t.view({2: torch.int16, 4: I32, 8: I64}[t.element_size()])
    return t


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


class Check:
    """Collects mismatches; assert at the end of a test (after every collective of it)."""

    def __init__(self):
        self.bad = []

    def __call__(self, what, got, want):
        if not same(got, want):
            self.bad.append(f"{what}: got {got.flatten()[:8].tolist()}..., want {want.flatten()[:8].tolist()}... "
                            f"({got.dtype}, {tuple(got.shape)} vs {want.dtype}, {tuple(want.shape)})")

    def done(self):
        assert not self.bad, "\n".join(self.bad[:20])


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


# ---- reductions ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", REDUCIBLE, ids=name)
def test_all_reduce(g, dtype, op):
    check = Check()
    for n in SIZES:
        x = values(g.rank, dtype, n, op, size=g.size)
        y = x.clone()
        dist.all_reduce(y, getattr(dist.ReduceOp, op))
        check(f"n={n} vs Gloo", y, gloo_all_reduce(x, op, g))
        everyone = [values(r, dtype, n, op, size=g.size) for r in range(g.size)]
        check(f"n={n} vs here", y, reduce_here(everyone, op, dtype))
    check.done()


def test_all_reduce_large(g):
    n = (1 << 20) + 3
    x = values(g.rank, F32, n)
    y = x.clone()
    dist.all_reduce(y)
    check = Check()
    check("vs Gloo", y, gloo_all_reduce(x, "SUM", g))
    check("vs here", y, reduce_here([values(r, F32, n) for r in range(g.size)], "SUM", F32))
    check.done()


def test_all_reduce_complex_sum(g):
    """torch passes a complex SUM as its real view."""
    x = values(g.rank, torch.complex64, 37)
    y, z = x.clone(), x.clone()
    dist.all_reduce(y)
    dist.all_reduce(z, group=g.gloo)
    assert same(y, z)


@pytest.mark.filterwarnings("ignore:torch.distributed.all_reduce_coalesced will be deprecated")
def test_all_reduce_coalesced(g):
    xs = [values(g.rank, F32, 37), values(g.rank, F32, 5, salt=1).reshape(5, 1)]
    ys, zs = [x.clone() for x in xs], [x.clone() for x in xs]
    dist.all_reduce_coalesced(ys)
    dist.all_reduce_coalesced(zs, group=g.gloo)
    assert all(same(y, z) for y, z in zip(ys, zs))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", REDUCIBLE, ids=name)
def test_reduce(g, dtype, op):
    check = Check()
    for root in range(g.size):
        x = values(g.rank, dtype, 37, op, salt=root, size=g.size)
        y = x.clone()
        dist.reduce(y, root, getattr(dist.ReduceOp, op))
        if dtype in GLOO_DTYPES and op != "AVG":
            z = x.clone()
            dist.reduce(z, root, getattr(dist.ReduceOp, op), group=g.gloo)
            if g.rank == root:
                check(f"root {root} vs Gloo", y, z)
        if g.rank == root:
            want = reduce_here([values(r, dtype, 37, op, salt=root, size=g.size) for r in range(g.size)], op, dtype)
            check(f"root {root} vs here", y, want)
        else:
            check(f"root {root}: this rank's tensor unchanged", y, x)
    check.done()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", REDUCIBLE, ids=name)
def test_reduce_scatter(g, dtype, op):
    """Both forms: reduce_scatter (a list) and reduce_scatter_tensor (_reduce_scatter_base); Gloo 1.13 has
    neither: its reference is an all_reduce of the whole input, this rank's block taken."""
    n, s = 13, g.size
    check = Check()
    full = values(g.rank, dtype, n * s, op, size=s)
    want = reduce_here([values(r, dtype, n * s, op, size=s) for r in range(s)], op, dtype)[g.rank * n:(g.rank + 1) * n]
    gloo = gloo_all_reduce(full, op, g)[g.rank * n:(g.rank + 1) * n]
    out = torch.empty(n, dtype=dtype)
    dist.reduce_scatter(out, list(full.clone().chunk(s)), getattr(dist.ReduceOp, op))
    out2 = torch.empty(n, dtype=dtype)
    dist.reduce_scatter_tensor(out2, full.clone(), getattr(dist.ReduceOp, op))
    for what, got in (("list", out), ("tensor", out2)):
        check(f"{what} vs Gloo", got, gloo)
        check(f"{what} vs here", got, want)
    check.done()


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


# ---- moving data ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", MOVABLE, ids=name)
def test_broadcast(g, dtype):
    check = Check()
    for root in range(g.size):
        for n in (1, 4099):
            y = values(g.rank, dtype, n, salt=root)
            dist.broadcast(y, root)
            z = gview(values(g.rank, dtype, n, salt=root))
            dist.broadcast(z, root, group=g.gloo)
            check(f"root {root} n={n} vs Gloo", y, unview(z, dtype))
            check(f"root {root} n={n} vs here", y, values(root, dtype, n, salt=root))
    check.done()


@pytest.mark.parametrize("dtype", MOVABLE, ids=name)
def test_all_gather(g, dtype):
    n, s = 37, g.size
    x = values(g.rank, dtype, n)
    outs = [torch.empty(n, dtype=dtype) for _ in range(s)]
    dist.all_gather(outs, x)
    gouts = [torch.empty_like(gview(x)) for _ in range(s)]
    dist.all_gather(gouts, gview(x), group=g.gloo)
    flat = torch.empty(s * n, dtype=dtype)
    dist.all_gather_into_tensor(flat, x)
    stacked = torch.empty(s, n, dtype=dtype)  # the "stack" form of all_gather_into_tensor
    dist.all_gather_into_tensor(stacked, x)
    check = Check()
    for p in range(s):
        check(f"list[{p}] vs Gloo", outs[p], unview(gouts[p], dtype))
        check(f"list[{p}] vs here", outs[p], values(p, dtype, n))
    check("into_tensor vs Gloo", flat, torch.cat([unview(o, dtype) for o in gouts]))
    check("into_tensor vs here", flat, torch.cat([values(p, dtype, n) for p in range(s)]))
    check("into_tensor stacked", stacked, torch.stack([values(p, dtype, n) for p in range(s)]))
    check.done()


def rows(src, dst):
    """Rows rank src sends rank dst in the uneven all-to-alls: 0, 1 or 2 (some blocks empty)."""
    return (src + 2 * dst + 1) % 3


def a2a_input(rank, dtype, size, k=3):
    """Rank `rank`'s all_to_all input: rows(rank, p) rows of k values for each p, row values naming (rank, p)."""
    blocks = [values(rank * 31 + p, dtype, rows(rank, p) * k, salt=5).reshape(-1, k) for p in range(size)]
    return blocks


@pytest.mark.parametrize("dtype", MOVABLE, ids=name)
def test_all_to_all_single(g, dtype):
    s, k = g.size, 3
    check = Check()
    # equal splits
    x = values(g.rank, dtype, 4 * s * k, salt=3).reshape(4 * s, k)
    y = torch.empty_like(x)
    dist.all_to_all_single(y, x)
    gy = torch.empty_like(gview(x))
    dist.all_to_all_single(gy, gview(x), group=g.gloo)
    want = torch.cat([values(p, dtype, 4 * s * k, salt=3).reshape(4 * s, k)[4 * g.rank:4 * g.rank + 4]
                      for p in range(s)])
    check("equal vs Gloo", y, unview(gy, dtype))
    check("equal vs here", y, want)
    # uneven split sizes (some 0)
    send = torch.cat(a2a_input(g.rank, dtype, s))
    in_splits = [rows(g.rank, p) for p in range(s)]
    out_splits = [rows(p, g.rank) for p in range(s)]
    out = torch.empty(sum(out_splits), k, dtype=dtype)
    dist.all_to_all_single(out, send, out_splits, in_splits)
    gout = torch.empty_like(gview(out))
    dist.all_to_all_single(gout, gview(send), out_splits, in_splits, group=g.gloo)
    want = torch.cat([a2a_input(p, dtype, s)[g.rank] for p in range(s)])
    check("splits vs Gloo", out, unview(gout, dtype))
    check("splits vs here", out, want)
    check.done()


@pytest.mark.parametrize("dtype", MOVABLE, ids=name)
def test_all_to_all_list(g, dtype):
    """Gloo 1.13 has no list all_to_all: its reference is all_to_all_single on the concatenation."""
    s = g.size
    ins = a2a_input(g.rank, dtype, s)
    outs = [torch.empty(rows(p, g.rank), 3, dtype=dtype) for p in range(s)]
    dist.all_to_all(outs, ins)
    in_splits = [rows(g.rank, p) for p in range(s)]
    out_splits = [rows(p, g.rank) for p in range(s)]
    gout = torch.empty_like(gview(torch.empty(sum(out_splits), 3, dtype=dtype)))
    dist.all_to_all_single(gout, gview(torch.cat(ins)), out_splits, in_splits, group=g.gloo)
    check = Check()
    check("vs Gloo", torch.cat(outs), unview(gout, dtype))
    for p in range(s):
        check(f"block from {p} vs here", outs[p], a2a_input(p, dtype, s)[g.rank])
    check.done()


@pytest.mark.parametrize("dtype", MOVABLE, ids=name)
def test_gather_scatter(g, dtype):
    n, s = 37, g.size
    check = Check()
    for root in range(s):
        x = values(g.rank, dtype, n, salt=root)
        outs = [torch.empty(n, dtype=dtype) for _ in range(s)] if g.rank == root else None
        dist.gather(x, outs, root)
        gouts = [torch.empty_like(gview(x)) for _ in range(s)] if g.rank == root else None
        dist.gather(gview(x), gouts, root, group=g.gloo)
        if g.rank == root:
            for p in range(s):
                check(f"gather root {root} [{p}] vs Gloo", outs[p], unview(gouts[p], dtype))
                check(f"gather root {root} [{p}] vs here", outs[p], values(p, dtype, n, salt=root))
        ins = [values(root * 10 + p, dtype, n, salt=7) for p in range(s)] if g.rank == root else None
        y = torch.empty(n, dtype=dtype)
        dist.scatter(y, ins, root)
        z = torch.empty_like(gview(y))
        dist.scatter(z, [gview(t) for t in ins] if g.rank == root else None, root, group=g.gloo)
        check(f"scatter root {root} vs Gloo", y, unview(z, dtype))
        check(f"scatter root {root} vs here", y, values(root * 10 + g.rank, dtype, n, salt=7))
    check.done()


def test_non_contiguous_tensors(g):
    """Staged in contiguous copies; outputs written back (the tensors keep their strides)."""
    s = g.size
    check = Check()
    base = values(g.rank, F32, 6 * 4).reshape(6, 4)
    x = base.clone().t()  # 4 x 6, not contiguous
    dist.all_reduce(x)
    want = reduce_here([values(r, F32, 24).reshape(6, 4) for r in range(s)], "SUM", F32).t()
    check("all_reduce of a transpose", x, want)
    buf = torch.zeros(20, dtype=I64)
    buf[::2] = values(g.rank, I64, 10)
    dist.broadcast(buf[::2], 0)  # a strided slice: the other elements stay 0
    check("broadcast into a strided slice", buf[::2], values(0, I64, 10))
    check("  the gaps untouched", buf[1::2], torch.zeros(10, dtype=I64))
    outs = [torch.zeros(3, 2, dtype=I32).t() for _ in range(s)]
    dist.all_gather(outs, values(g.rank, I32, 6).reshape(2, 3))
    for p in range(s):
        check(f"all_gather into a transpose [{p}]", outs[p], values(p, I32, 6).reshape(2, 3))
    check.done()


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
