"""FSDP2 (torch.distributed.fsdp.fully_shard) training of model.TinyLM: every transformer layer and the
whole model sharded; per-step loss of the global batch to a file (rank 0), same format as ddp_train.py.
    torchrun --nproc-per-node N fsdp_train.py --steps 50 --loss-file fsdp_loss.txt
Needs PyTorch >= 2.6 (fully_shard in torch.distributed.fsdp)."""
import argparse
import sys

import torch
import torch.distributed as dist

from common import Deadline, add_optimizer_argument, make_optimizer, setup, write_losses
from model import batch, build_model, loss_fn, make_deterministic


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--global-batch", type=int, default=32)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--loss-file", default="fsdp_loss.txt")
    p.add_argument("--label", default="")
    p.add_argument("--deadline", type=float, default=900)
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                   help="parameters (float64: rounding-order effects of another rank count stay below 1e-6)")
    add_optimizer_argument(p)
    a = p.parse_args()
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        sys.exit(f"fsdp_train.py needs torch.distributed.fsdp.fully_shard (PyTorch >= 2.6); this is {torch.__version__}")
    make_deterministic()
    rank, world, device = setup()
    deadline = Deadline(a.deadline)
    model = build_model(a.seed, device).to(getattr(torch, a.dtype))
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    opt = make_optimizer(a.optimizer, model.parameters(), a.lr)
    losses = []
    for step in range(a.steps):
        deadline.check(f"step {step}")
        inputs, targets = batch(a.seed, step, a.global_batch, rank, world, device)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model, inputs, targets)
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / world)
    if rank == 0:
        write_losses("fsdp", a.label, losses, a.loss_file)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
