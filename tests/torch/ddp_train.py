"""DDP training of model.TinyLM: per-step loss of the whole global batch to a file (rank 0), or a step-time
benchmark.
    torchrun --nproc-per-node N ddp_train.py --steps 200 --loss-file ddp_loss.txt [--dtype float64]
    torchrun --nproc-per-node N ddp_train.py --bench --steps 120 --warmup 20 --bench-file ddp_bench.json
    torchrun --nproc-per-node N ddp_train.py --bench --model mlp --dtype bfloat16 --global-batch 8192 [--no-sync]
--model mlp: model.Mlp (256 MiB of bfloat16 gradients per step: DDP's all-reduces carry real traffic);
--no-sync: DDP's no_sync() on every step (no all-reduce at all: the step's compute alone, the floor).
The loss line of step k is "k <loss>" (the mean over all ranks' shards, reduced with SUM / world)."""
import argparse
import contextlib
import json
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from common import Deadline, add_optimizer_argument, describe, make_optimizer, out_path, setup, sync, write_losses
from model import batch, build_model, loss_fn, make_deterministic, mlp_batch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--global-batch", type=int, default=32)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--loss-file", default="ddp_loss.txt")
    p.add_argument("--bench", action="store_true", help="time steps instead of logging losses")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--bench-file", default="ddp_bench.json")
    p.add_argument("--label", default="")
    p.add_argument("--model", choices=("tinylm", "mlp"), default="tinylm")
    p.add_argument("--no-sync", action="store_true", help="bench: skip DDP's gradient all-reduce (compute only)")
    p.add_argument("--bucket-mb", type=float, default=25, help="DDP's bucket_cap_mb (its default: 25)")
    p.add_argument("--trace", default="", help="bench: a torch.profiler trace (CPU + CUDA) of the 3 steps after "
                   "the warm-up (the profiler warmed up on the 2 before), written as <TRACE>_rank<r>.json "
                   "(trace_overlap.py reads it); needs --warmup >= 2")
    p.add_argument("--dtype", choices=("float32", "float64", "bfloat16"), default="float32",
                   help="parameters and activations (float64 makes rounding-order effects negligible)")
    p.add_argument("--deadline", type=float, default=900, help="seconds the whole run may take")
    add_optimizer_argument(p)
    a = p.parse_args()
    make_deterministic()
    rank, world, device = setup()
    deadline = Deadline(a.deadline)
    dtype = getattr(torch, a.dtype)
    model = DDP(build_model(a.seed, device, a.model).to(dtype), device_ids=[device.index] if device.type == "cuda" else None,
                bucket_cap_mb=a.bucket_mb)
    opt = make_optimizer(a.optimizer, model.parameters(), a.lr)
    losses, times = [], []
    total = a.steps + (a.warmup if a.bench else 0)
    prof = None
    for step in range(total):
        deadline.check(f"step {step}")
        if a.trace and step == a.warmup - 2:  # 2 steps of the profiler's own warm-up, then 3 recorded
            trace_file = out_path(f"{a.trace}_rank{rank}.json")
            prof = torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                schedule=torch.profiler.schedule(wait=0, warmup=2, active=3),
                on_trace_ready=lambda p: p.export_chrome_trace(trace_file))
            prof.__enter__()
        if prof is not None and step == a.warmup + 3:
            prof.__exit__(None, None, None)
            prof = None
        if a.model == "mlp":
            x = mlp_batch(a.seed, step, a.global_batch, rank, world, device, dtype)
        else:
            inputs, targets = batch(a.seed, step, a.global_batch, rank, world, device)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with model.no_sync() if a.no_sync else contextlib.nullcontext():
            loss = model(x).float().square().mean() if a.model == "mlp" else loss_fn(model, inputs, targets)
            loss.backward()
        opt.step()
        if prof is not None:
            sync(device)
            prof.step()
        if a.bench:
            sync(device)
            if step >= a.warmup:
                times.append(time.perf_counter() - t0)
        else:
            mean = loss.detach().clone()
            dist.all_reduce(mean)  # SUM (every backend has it), then / world
            losses.append(mean.item() / world)
    if rank == 0:
        if a.bench:
            ms = sorted(t * 1e3 for t in times)
            result = {"label": a.label, "world": world, "backend": dist.get_backend(), "steps": len(ms),
                      "model": a.model, "dtype": a.dtype, "bucket_mb": a.bucket_mb, "no_sync": a.no_sync, "median_ms": statistics.median(ms), "mean_ms": statistics.fmean(ms),
                      "p10_ms": ms[len(ms) // 10], "p90_ms": ms[(9 * len(ms)) // 10], "setup": describe()}
            with open(out_path(a.bench_file), "w") as f:
                json.dump(result, f, indent=1)
            print(f"ddp bench {a.label}: median {result['median_ms']:.2f} ms/step over {len(ms)} steps ({describe()})")
        else:
            write_losses("ddp", a.label, losses, a.loss_file)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
