"""Shared by the torch.distributed backend's tests (test_torch_backend_ops.py, test_torch_backend_semantics.py):
the `g` fixture, the inputs and the references. Not a test file (pytest collects test_*.py only).

Importing it skips the importing test module where torch or torch.distributed is missing. The module fixture
`g` (import it into the test module) initialises torch.distributed once per test module with the hetccl
backend (a TCPStore whose port rank 0 broadcasts over the job's communicator) and makes a Gloo group over the
same ranks. Inputs are a function of the rank, so every rank can compute every rank's; values are small
integers (scaled by the group size for float AVG) so that every reduction is exact in every dtype and order.
Gloo 1.13 lacks bfloat16, bool, int16, AVG, reduce_scatter, the *_base forms and the list all_to_all: the
helpers here compose its references there (float32 values, uint8 views of the bytes, a SUM divided here).
`Check` collects mismatches so that a test makes all its calls before asserting (a failing rank stays in
step with the others)."""

import datetime

import pytest

torch = pytest.importorskip("torch", reason="the torch backend needs torch")
dist = pytest.importorskip("torch.distributed", reason="the torch backend needs torch.distributed")
if not dist.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)

import hetccl.torch_backend  # noqa: E402,F401 - registers the backend "hetccl" (the `g` fixture uses it)

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

