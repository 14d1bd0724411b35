"""Shared set-up of the torchrun programs in this folder (our own code; no hetccl import for "nccl": under
LD_PRELOAD PyTorch's "nccl" backend is served by hetccl's libnccl.so.2 without the program knowing).

Environment: torchrun's RANK, WORLD_SIZE, LOCAL_RANK; BACKEND (nccl, default, gloo, or hetccl: the
package's torch.distributed backend, registered by importing hetccl.torch_backend); DEVICE (cuda,
default, or cpu for checking the programs' logic without a GPU)."""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def setup():
    """Initialises the process group and returns (rank, world, device)."""
    backend = os.environ.get("BACKEND", "nccl")
    want_cpu = os.environ.get("DEVICE", "cuda") == "cpu"
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if want_cpu:
        device = torch.device("cpu")
    else:
        if not torch.cuda.is_available():
            sys.exit("no CUDA device (set DEVICE=cpu BACKEND=gloo to check the logic on CPU)")
        device = torch.device("cuda", local % torch.cuda.device_count())
        torch.cuda.set_device(device)
    # Every collective has a deadline: a hang becomes an error from PyTorch's watchdog.
    timeout = datetime.timedelta(seconds=float(os.environ.get("COLL_TIMEOUT", "300")))
    if backend == "hetccl":
        import hetccl.torch_backend  # noqa: F401  (registers the backend)
    dist.init_process_group(backend=backend, timeout=timeout)
    return dist.get_rank(), dist.get_world_size(), device


def describe():
    """One line: torch version, backend, and where the NCCL names come from."""
    loaded = "?"
    try:
        with open("/proc/self/maps") as maps:
            libs = sorted({line.split()[-1] for line in maps if "libnccl" in line or "librccl" in line})
        loaded = ", ".join(libs) or "none"
    except OSError:
        pass
    return f"torch {torch.__version__}, backend {dist.get_backend()}, NCCL libraries mapped: {loaded}"


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def out_path(name):
    """A file under $OUT_DIR (default: current folder)."""
    folder = os.environ.get("OUT_DIR", ".")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, name)


class Deadline:
    """Wall-clock budget of a program: every run ends (with an error) instead of hanging."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def check(self, what):
        if time.monotonic() > self.end:
            raise TimeoutError(f"deadline passed during {what}")


def add_optimizer_argument(parser):
    """--optimizer of the training programs (make_optimizer builds it)."""
    parser.add_argument("--optimizer", choices=("adamw", "sgd"), default="adamw",
                        help="sgd: a gradient off by a constant factor (a sum where a mean belongs) changes the "
                             "losses; AdamW's update hardly depends on the gradient's scale")


def make_optimizer(name, params, lr):
    """AdamW (the default of the training programs) or plain SGD (lr scaled up 100x: its steps are small)."""
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr * 100)
    return torch.optim.AdamW(params, lr=lr)


def write_losses(kind, label, losses, file_name):
    """Rank 0's per-step losses as "step loss" lines (compare_losses.py reads them), and a summary line."""
    with open(out_path(file_name), "w") as f:
        f.writelines(f"{k} {v:.9g}\n" for k, v in enumerate(losses))
    print(f"{kind} {label}: {len(losses)} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f} ({describe()})")
