"""Every torch.distributed collective on device tensors, each result compared exactly with a value computed
locally. Element i of rank r's input is x(r, i) = r + 1 + i % 7 (small integers: sums, averages over 2 or 4
ranks and the PreMulSum factor 0.5 stay exact in every dtype used). Two sizes: 13 elements, and 1M + 3
(large enough for the pipelined/chunked paths).

    torchrun --nproc-per-node N collectives.py        (BACKEND=gloo DEVICE=cpu: logic check without GPU)
Prints one line per rank and exits 1 when any check failed."""
import os
import sys

import torch
import torch.distributed as dist

from common import describe, setup, sync

RANK, WORLD, DEV = setup()
GLOO = dist.get_backend() == "gloo"
FAILURES = []
CHECKS = 0


def x(r, n, dtype, offset=0):
    i = torch.arange(offset, offset + n, device=DEV, dtype=torch.int64)
    return (r + 1 + i % 7).to(dtype)


def expect(name, got, want):
    global CHECKS
    CHECKS += 1
    sync(DEV)
    if got.dtype != want.dtype or got.shape != want.shape or not torch.equal(got, want):
        bad = (got.to(torch.float64) != want.to(torch.float64)).nonzero()
        if bad.numel():
            i = tuple(bad[0].tolist())
            FAILURES.append(f"{name}: first difference at {list(i)}: got {got[i].item()}, want {want[i].item()}")
        else:
            FAILURES.append(f"{name}: shape/dtype {got.shape}/{got.dtype} vs {want.shape}/{want.dtype}")


def all_reduce(n, dtype):
    everyone = torch.stack([x(r, n, dtype) for r in range(WORLD)]).to(torch.float64)
    cases = [("SUM", dist.ReduceOp.SUM, everyone.sum(0)), ("MAX", dist.ReduceOp.MAX, everyone.max(0).values),
             ("MIN", dist.ReduceOp.MIN, everyone.min(0).values)]
    if WORLD <= 4 and dtype in (torch.int64, torch.float64):
        cases.append(("PRODUCT", dist.ReduceOp.PRODUCT, everyone.prod(0)))
    if not GLOO and dtype.is_floating_point:  # AVG and PREMUL_SUM: floating types (NCCL backend only)
        cases.append(("AVG", dist.ReduceOp.AVG, everyone.sum(0) / WORLD))
        if dtype != torch.bfloat16:
            cases.append(("PREMUL_SUM(0.5)", dist._make_nccl_premul_sum(0.5), everyone.sum(0) * 0.5))
        # bfloat16 PREMUL_SUM is left out: torch 2.11 + the real NCCL 2.28.9 (no hetccl) return 0 for it
        # (measured on 2 x H200; the factor arrives as 0, consistent with a float32 0.5 read as a 2-byte
        # bfloat16). hetccl reads the scalar exactly as NCCL does and returns the same.
    for name, op, want in cases:
        t = x(RANK, n, dtype)
        dist.all_reduce(t, op=op)
        expect(f"all_reduce {name} {dtype} n={n}", t, want.to(dtype))


def gathers(n, dtype):
    mine = x(RANK, n, dtype)
    want = torch.cat([x(r, n, dtype) for r in range(WORLD)])
    if not GLOO:  # Gloo of older PyTorch lacks the tensor forms
        out = torch.empty(WORLD * n, dtype=dtype, device=DEV)
        dist.all_gather_into_tensor(out, mine)
        expect(f"all_gather_into_tensor {dtype} n={n}", out, want)
    parts = [torch.empty(n, dtype=dtype, device=DEV) for _ in range(WORLD)]
    dist.all_gather(parts, mine)
    expect(f"all_gather {dtype} n={n}", torch.cat(parts), want)

    # reduce_scatter: rank p receives the sum over r of block p of x(r, WORLD * n).
    full = [x(r, WORLD * n, dtype) for r in range(WORLD)]
    want_rs = sum(f[RANK * n:(RANK + 1) * n].to(torch.float64) for f in full)
    if GLOO:  # Gloo has no reduce-scatter
        return
    ops = [(dist.ReduceOp.SUM, want_rs)] + ([(dist.ReduceOp.AVG, want_rs / WORLD)] if dtype.is_floating_point else [])
    for op, w in ops:
        out = torch.empty(n, dtype=dtype, device=DEV)
        dist.reduce_scatter_tensor(out, x(RANK, WORLD * n, dtype), op=op)
        expect(f"reduce_scatter_tensor {op} {dtype} n={n}", out, w.to(dtype))
    out = torch.empty(n, dtype=dtype, device=DEV)
    dist.reduce_scatter(out, list(x(RANK, WORLD * n, dtype).chunk(WORLD)))
    expect(f"reduce_scatter {dtype} n={n}", out, want_rs.to(dtype))


def rooted(n, dtype):
    root = WORLD - 1
    t = x(RANK, n, dtype)
    dist.broadcast(t, src=root)
    expect(f"broadcast {dtype} n={n}", t, x(root, n, dtype))
    t = x(RANK, n, dtype)
    dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
    if RANK == 0:
        expect(f"reduce {dtype} n={n}", t, sum(x(r, n, torch.float64) for r in range(WORLD)).to(dtype))
    parts = [torch.empty(n, dtype=dtype, device=DEV) for _ in range(WORLD)] if RANK == root else None
    dist.gather(x(RANK, n, dtype), gather_list=parts, dst=root)
    if RANK == root:
        expect(f"gather {dtype} n={n}", torch.cat(parts), torch.cat([x(r, n, dtype) for r in range(WORLD)]))
    out = torch.empty(n, dtype=dtype, device=DEV)
    dist.scatter(out, scatter_list=list(x(0, WORLD * n, dtype).chunk(WORLD)) if RANK == 0 else None, src=0)
    expect(f"scatter {dtype} n={n}", out, x(0, WORLD * n, dtype)[RANK * n:(RANK + 1) * n])


def all_to_all(n, dtype):
    # Block p of rank r's input (x(r, WORLD*n) shifted by 100p) goes to rank p.
    def send(r):
        return x(r, WORLD * n, dtype) + torch.arange(WORLD, device=DEV).repeat_interleave(n).to(dtype) * 100
    out = torch.empty(WORLD * n, dtype=dtype, device=DEV)
    dist.all_to_all_single(out, send(RANK))
    want = torch.cat([send(r)[RANK * n:(RANK + 1) * n] for r in range(WORLD)])
    expect(f"all_to_all_single {dtype} n={n}", out, want)
    # Uneven: rank r sends p + 1 elements to rank p.
    sizes_in = [p + 1 for p in range(WORLD)]
    src = x(RANK, sum(sizes_in), dtype)
    out = torch.empty(WORLD * (RANK + 1), dtype=dtype, device=DEV)
    dist.all_to_all_single(out, src, output_split_sizes=[RANK + 1] * WORLD, input_split_sizes=sizes_in)
    offs = [sum(sizes_in[:RANK])] * WORLD
    want = torch.cat([x(r, sum(sizes_in), dtype)[offs[r]:offs[r] + RANK + 1] for r in range(WORLD)])
    expect(f"all_to_all_single uneven {dtype}", out, want)
    if not GLOO:
        outs = [torch.empty(n, dtype=dtype, device=DEV) for _ in range(WORLD)]
        dist.all_to_all(outs, list(send(RANK).chunk(WORLD)))
        expect(f"all_to_all {dtype} n={n}", torch.cat(outs), torch.cat([send(r)[RANK * n:(RANK + 1) * n] for r in range(WORLD)]))


def point_to_point(n, dtype):
    right, left = (RANK + 1) % WORLD, (RANK - 1) % WORLD
    got = torch.empty(n, dtype=dtype, device=DEV)
    if RANK % 2 == 0:  # blocking send/recv around the ring, ordered so that it cannot deadlock
        dist.send(x(RANK, n, dtype), dst=right)
        dist.recv(got, src=left)
    else:
        dist.recv(got, src=left)
        dist.send(x(RANK, n, dtype), dst=right)
    expect(f"send/recv {dtype} n={n}", got, x(left, n, dtype))
    got = torch.empty(n, dtype=dtype, device=DEV)
    reqs = [dist.isend(x(RANK, n, dtype) * 2, dst=right), dist.irecv(got, src=left)]
    for q in reqs:
        q.wait()
    expect(f"isend/irecv {dtype} n={n}", got, x(left, n, dtype) * 2)
    got_l, got_r = torch.empty(n, dtype=dtype, device=DEV), torch.empty(n, dtype=dtype, device=DEV)
    ops = [dist.P2POp(dist.isend, x(RANK, n, dtype), right), dist.P2POp(dist.irecv, got_l, left),
           dist.P2POp(dist.isend, x(RANK, n, dtype) + 1, left), dist.P2POp(dist.irecv, got_r, right)]
    for q in dist.batch_isend_irecv(ops):
        q.wait()
    expect(f"batch_isend_irecv {dtype} n={n}", torch.cat([got_l, got_r]), torch.cat([x(left, n, dtype), x(right, n, dtype) + 1]))


def groups():
    dist.barrier()
    evens = list(range(0, WORLD, 2))
    g = dist.new_group(ranks=evens)
    if RANK in evens:
        t = x(RANK, 1001, torch.float32)
        dist.all_reduce(t, group=g)
        expect("new_group all_reduce", t, sum(x(r, 1001, torch.float64) for r in evens).to(torch.float32))
        dist.barrier(group=g)
    reversed_group = dist.new_group(ranks=list(reversed(range(WORLD))))
    t = torch.full((5,), float(RANK), device=DEV)
    dist.broadcast(t, src=WORLD - 1, group=reversed_group)
    expect("new_group (reversed) broadcast", t, torch.full((5,), float(WORLD - 1), device=DEV))
    objs = [None] * WORLD
    dist.all_gather_object(objs, {"rank": RANK})
    if objs != [{"rank": r} for r in range(WORLD)]:
        FAILURES.append("all_gather_object")
    dist.barrier()


def main():
    dtypes = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.float64]
    if GLOO:
        dtypes = [torch.float32, torch.int64, torch.float64]
    for n in (13, 1_000_003):
        for dtype in dtypes:
            all_reduce(n, dtype)
            gathers(n, dtype)
            rooted(n, dtype)
        all_to_all(n, torch.float32)
        point_to_point(n, torch.float32)
        point_to_point(n, torch.uint8 if not GLOO else torch.int64)
    groups()
    sync(DEV)
    status = "ok" if not FAILURES else "FAILED"
    print(f"collectives rank {RANK}/{WORLD}: {status}, {CHECKS} checks, {len(FAILURES)} failures ({describe()})",
          flush=True)
    for f in FAILURES[:20]:
        print(f"  rank {RANK}: {f}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
