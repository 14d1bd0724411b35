"""The torch.distributed backend "hetccl" (hetccl/torch_backend.py) against Gloo, op by op and dtype by dtype,
on every rank of the job (the Work, point-to-point, error, DDP and torchrun tests: test_torch_backend_semantics.py).

Every test runs an op through both groups of the `g` fixture (torch_backend_support.py) and compares: bitwise
with Gloo's result where Gloo 1.13 has the op and dtype, and with a result computed here from the inputs --
always. Where Gloo 1.13 lacks the op or dtype the Gloo reference is composed (torch_backend_support.py says how;
reduce_scatter: an all_reduce whose block is taken; the list all_to_all: all_to_all_single on the
concatenation). Each test makes all its calls before asserting, so a failing rank stays in step with the others.

Run: hetccl-run -n 3 --domains 2 -- python -m pytest python/tests/test_torch_backend_ops.py (CI:
python/ci/run_pytest_job.sh with --only, tests/python/CMakeLists.txt). Skipped without torch."""

import pytest

from torch_backend_support import (  # skips this module without torch
    F32, GLOO_DTYPES, I32, I64, MOVABLE, OPS, REDUCIBLE, SIZES, Check, dist, gloo_all_reduce, gview, name,
    reduce_here, same, torch, unview, values)
from torch_backend_support import g  # noqa: F401 - the module fixture: pytest looks for it in this module


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
