"""Host cost of the torch CUDA calls the hetccl torch backend makes per collective (one process, one GPU):
the next step of bench/results/torch_backend_h100x2_2026-11-27 (which ones to cut).
  python bench/gpu/torch_cuda_op_costs.py
"""
import time

import torch
from torch._C._distributed_c10d import _create_work_from_future

dev = torch.device("cuda", 0)
torch.cuda.set_device(dev)
x = torch.ones(4, device=dev)
side = torch.cuda.Stream(device=dev)
ev = torch.cuda.Event()
cur = torch.cuda.current_stream(dev)


def cost(name, fn, n=2000):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    us = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    print(f"{name:<58} {us:7.2f} us", flush=True)


def set_pair():
    torch.cuda.set_stream(side)
    torch.cuda.set_stream(cur)


def ctx():
    with torch.cuda.stream(side):
        pass


def fut_cuda():
    f = torch.futures.Future(devices=[dev])
    f.set_result([x])


def fut_cuda_work():
    f = torch.futures.Future(devices=[dev])
    f.set_result([x])
    _create_work_from_future(f)


def fut_cpu():
    f = torch.futures.Future()
    f.set_result([x])


cost("torch.cuda.current_stream(dev)", lambda: torch.cuda.current_stream(dev))
cost("torch.cuda.current_stream()", lambda: torch.cuda.current_stream())
cost("Event() + record(cur)", lambda: torch.cuda.Event().record(cur))
cost("cached event record(cur) + side.wait_event", lambda: (ev.record(cur), side.wait_event(ev)))
cost("side.wait_stream(cur)", lambda: side.wait_stream(cur))
cost("x.record_stream(side)", lambda: x.record_stream(side))
cost("torch.cuda.set_stream(side) + back", set_pair)
cost("with torch.cuda.stream(side)", ctx)
cost("Future(devices=[dev]).set_result([x])", fut_cuda)
cost("... + _create_work_from_future", fut_cuda_work)
cost("Future().set_result([x]) (CPU future)", fut_cpu)
cost("x.detach().reshape(-1)", lambda: x.detach().reshape(-1))
