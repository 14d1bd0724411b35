"""The torch.distributed baseline: the process group (gloo, or nccl for CUDA ranks on different GPUs) and a
timed send/recv of the same packed blocks, checked like the get."""

from __future__ import annotations

import os
import socket
import time

import numpy as np

from .measure import stats


class TorchBaseline:
    """torch.distributed send/recv of a Bench (mixed into runner.Bench)."""

    # ---- torch.distributed -----------------------------------------------------------------------------
    def torch_setup(self):
        a, c = self.a, self.comm
        if a.torch == "none":
            return None, "--torch none"
        if self.torch is None:
            return None, self.torch_why
        import torch.distributed as dist
        if not dist.is_available():
            return None, "torch.distributed is not available in this torch build"
        # Which GPU is each rank on (same GPU: no NCCL between them)?
        me = self.gpu_id() if self.cuda else ""
        ids = [c.broadcast_bytes(me.encode() if c.rank == r else None, root=r).decode() for r in range(c.size)]
        self.shared_gpu = self.cuda and ids[0] == ids[1]
        backend = a.torch
        if backend == "auto":
            backend = "nccl" if self.cuda and not self.shared_gpu else "gloo"
        if backend == "nccl" and (not self.cuda or self.shared_gpu):
            return None, "nccl needs CUDA tensors on two different GPUs"
        if os.environ.get("MASTER_ADDR") and os.environ.get("RANK"):
            init = "env://"
        else:
            port = b""
            if c.rank == 0:
                s = socket.socket()
                s.bind(("127.0.0.1", 0))
                port = str(s.getsockname()[1]).encode()
                s.close()
            port = c.broadcast_bytes(port if c.rank == 0 else None, root=0).decode()
            init = f"tcp://127.0.0.1:{port}"
        kw = {}
        if backend == "nccl":
            kw["device_id"] = self.dev
        try:
            dist.init_process_group(backend, init_method=init, rank=c.rank, world_size=c.size, **kw)
        except TypeError:
            dist.init_process_group(backend, init_method=init, rank=c.rank, world_size=c.size)
        except Exception as e:  # noqa: BLE001
            return None, f"init_process_group({backend}) failed: {e}"
        self.dist = dist
        return backend, ""

    def gpu_id(self):
        t = self.torch
        p = t.cuda.get_device_properties(self.dev)
        uuid = getattr(p, "uuid", None)
        return str(uuid) if uuid is not None else f"{socket.gethostname()}:{os.environ.get('CUDA_VISIBLE_DEVICES')}:" \
            f"{self.dev.index}"

    def torch_sendrecv(self, backend, n, packed, recvbuf, pinned):
        """Rank 0 sends the packed blocks (first n blocks of `packed`), rank 1 receives into recvbuf. Returns
        (stats, bad words) on rank 1."""
        dist = self.dist
        nw = n * self.a.layers * self.page // 8
        nb = nw * 8
        via_host = self.cuda and backend == "gloo"

        def one():
            if self.rank == 0:
                if via_host:
                    pinned[:nw].copy_(packed[:nw])
                    dist.send(pinned[:nw], 1)
                else:
                    dist.send(packed[:nw], 1)
            else:
                if via_host:
                    dist.recv(pinned[:nw], 0)
                    recvbuf[:nw].copy_(pinned[:nw], non_blocking=True)
                else:
                    dist.recv(recvbuf[:nw], 0)
                self.sync()

        if self.rank == 1:  # poison: the check must see the bytes torch delivered, not the get's
            recvbuf[:nw].fill_(-1)  # a torch tensor on either device (CPU: a view of self.dst)
            self.sync()
        ts = []
        reps = self.reps_for(nb)
        for i in range(self.a.warmup + reps):
            dist.barrier()
            t0 = time.perf_counter()
            one()
            if i >= self.a.warmup:
                ts.append(time.perf_counter() - t0)
        if self.rank == 1:
            return stats(ts), self.verify(self.dst, self.select(n))  # the same memory as recvbuf
        return None, 0

    def as_torch(self, arr):
        return arr if self.cuda else self.torch.from_numpy(arr.view(np.int64))
