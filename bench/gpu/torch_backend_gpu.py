"""The torch.distributed backend "hetccl" on GPUs, under torchrun (2 processes, one GPU each):

  torchrun --nproc-per-node 2 bench/gpu/torch_backend_gpu.py gpu  --out DIR
      collectives on CUDA tensors through backend "hetccl" against a "nccl" group of the same ranks
      (bitwise: small-integer values, exact in any order, also checked against the sum computed here),
      async Work, then DDP: the same model and data trained over each group (losses, parameters across
      ranks, hetccl vs nccl), and the step time of a bf16 MLP (8 x 4096^2, 256 MiB of gradients) on each
  torchrun --nproc-per-node 2 bench/gpu/torch_backend_gpu.py mixed --out DIR
      rank 0 on its GPU, rank 1 a CPU rank (HETCCL_DEVICE=host): one model trained with DDP over backend
      "hetccl" (which NCCL cannot run): parameters must be equal on both ranks after every step
Prints "torch_backend_gpu MODE: PASS|FAIL ..." and writes MODE_rankR.json under --out.
"""
import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("mode", choices=["gpu", "mixed", "cpu"])  # cpu: the mixed training on two CPU ranks (a dry run)
p.add_argument("--out", default=".")
p.add_argument("--steps", type=int, default=20)
args = p.parse_args()
rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
on_gpu = args.mode == "gpu" or (args.mode == "mixed" and rank == 0)
if not on_gpu:
    os.environ["HETCCL_DEVICE"] = "host"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import hetccl.torch_backend  # noqa: E402,F401

dev = torch.device("cuda", local) if on_gpu else torch.device("cpu")
if on_gpu:
    torch.cuda.set_device(dev)
dist.init_process_group("hetccl")
problems, record = [], {"rank": rank, "device": str(dev), "torch": torch.__version__}


def check(name, ok, detail=""):
    if not ok:
        problems.append(f"{name}: {detail}")
        print(f"rank {rank}: FAIL {name} {detail}", flush=True)


def sync():
    if on_gpu:
        torch.cuda.synchronize()


def mlp(width, depth, dtype):
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width, bias=False), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).to(dev, dtype)


def train(model, group, steps, width, dtype, seed=1):
    ddp = DDP(model, process_group=group, device_ids=[local] if on_gpu else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(seed + rank)
    losses = []
    for _ in range(steps):
        x = torch.randn(64, width, generator=g).to(dev, dtype)
        loss = ddp(x).float().pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def params_equal_across_ranks(model, group):
    flat = torch.cat([q.detach().reshape(-1).float() for q in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat, group=group)
    return all(torch.equal(gathered[0], t) for t in gathered[1:])


if args.mode == "gpu":
    nccl = dist.new_group(backend="nccl")
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.int8):
        for n in (1, 1000, (1 << 20) + 3):
            x = ((torch.arange(n, device=dev) % 5) + rank).to(dtype)
            a, b = x.clone(), x.clone()
            dist.all_reduce(a)
            dist.all_reduce(b, group=nccl)
            want = ((torch.arange(n, dtype=torch.float64) % 5) * world + sum(range(world))).to(dtype)
            check(f"all_reduce {dtype} {n}", torch.equal(a.cpu(), want) and torch.equal(a, b), f"{a[:4]} vs {b[:4]}")
    n = 4099
    x = torch.arange(n, device=dev, dtype=torch.float32) + 1000 * rank
    outs = {}
    for name, group in (("hetccl", None), ("nccl", nccl)):
        ag = torch.empty(n * world, device=dev)
        dist.all_gather_into_tensor(ag, x, group=group)
        rs = torch.empty(n, device=dev)
        dist.reduce_scatter_tensor(rs, torch.cat([x] * world), group=group)
        bc = x.clone()
        dist.broadcast(bc, src=1, group=group)
        a2 = torch.empty(n * world, device=dev)
        dist.all_to_all_single(a2, torch.cat([x] * world), group=group)
        w = dist.all_reduce(x.clone(), async_op=True, group=group)
        w.wait()
        outs[name] = (ag, rs, bc, a2)
    for label, h, r in zip(("all_gather_into_tensor", "reduce_scatter_tensor", "broadcast", "all_to_all_single"),
                           outs["hetccl"], outs["nccl"]):
        check(label, torch.equal(h, r), f"{h[:4]} vs {r[:4]}")
    y = torch.full((1 << 20,), float(rank + 1), device=dev)
    w = dist.all_reduce(y, async_op=True)
    w.wait()
    check("async all_reduce value", torch.equal(y, torch.full_like(y, float(world * (world + 1) // 2))), f"{y[:2]}")
    check("async is_completed", w.is_completed())

    # DDP, float32, small: the same training over each group.
    lh = train(mlp(512, 4, torch.float32), None, args.steps, 512, torch.float32)
    ln = train(mlp(512, 4, torch.float32), nccl, args.steps, 512, torch.float32)
    record["ddp_losses_hetccl"], record["ddp_losses_nccl"] = lh, ln
    check("ddp losses hetccl vs nccl", all(abs(a - b) <= 1e-5 * max(1.0, abs(b)) for a, b in zip(lh, ln)),
          f"{lh[-1]} vs {ln[-1]}")
    m = mlp(512, 4, torch.float32)
    train(m, None, args.steps, 512, torch.float32)
    check("ddp parameters equal across ranks (hetccl)", params_equal_across_ranks(m, nccl))

    # Step time, bf16 MLP 8 x 4096^2 (256 MiB of bf16 gradients), default 25 MB buckets.
    times = {}
    for name, group in (("hetccl", None), ("nccl", nccl)):
        model = mlp(4096, 8, torch.bfloat16)
        ddp = DDP(model, process_group=group, device_ids=[local])
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
        x = torch.randn(256, 4096, device=dev, dtype=torch.bfloat16)
        for i in range(25):
            if i == 5:
                sync()
                t0 = time.perf_counter()
            loss = ddp(x).float().pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        sync()
        times[name] = (time.perf_counter() - t0) / 20 * 1e3
        del ddp, model, opt
    record["step_ms"] = times
    print(f"rank {rank}: DDP bf16 8x4096^2 step: hetccl {times['hetccl']:.2f} ms, nccl {times['nccl']:.2f} ms, "
          f"nccl/hetccl {times['nccl'] / times['hetccl']:.3f}", flush=True)
else:
    # One GPU rank and one CPU rank train one model: gradients are averaged across the two devices.
    m = mlp(256, 3, torch.float32)
    ddp = DDP(m, device_ids=[local] if on_gpu else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(7 + rank)
    for step in range(args.steps):
        x = torch.randn(32, 256, generator=g).to(dev)
        loss = ddp(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        flat = torch.cat([q.detach().reshape(-1) for q in m.parameters()])
        both = [torch.empty_like(flat) for _ in range(world)]
        dist.all_gather(both, flat)
        same = all(torch.equal(both[0].cpu(), t.cpu()) for t in both[1:])
        if not same:
            check(f"step {step}: parameters equal on the GPU rank and the CPU rank", False,
                  f"max diff {(both[0].cpu() - both[1].cpu()).abs().max().item()}")
            break
    record["steps"] = args.steps

record["problems"] = problems
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, f"{args.mode}_rank{rank}.json"), "w") as f:
    json.dump(record, f, indent=1)
dist.barrier()
hetccl.torch_backend.shutdown()
print(f"torch_backend_gpu {args.mode}: rank {rank}: {'FAIL ' + '; '.join(problems) if problems else 'PASS'}", flush=True)
sys.exit(1 if problems else 0)
