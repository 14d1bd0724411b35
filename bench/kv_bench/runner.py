"""The benchmark run: the communicator and its RMA, rank 0's registered cache and ceiling against rank 1's
batched gets, the torch baseline between them, the overhead, and the report."""

from __future__ import annotations

import json
import os
import socket
import sys
import time

import hetccl
import numpy as np

from .layout import TOKENS, CacheLayout
from .measure import Measure
from .overhead import Overhead
from .report import Report
from .torch_baseline import TorchBaseline


class Bench(CacheLayout, Measure, TorchBaseline, Overhead, Report):
    def __init__(self, a):
        self.a = a
        self.cuda = a.device == "cuda"
        if not self.cuda:
            os.environ["HETCCL_DEVICE"] = "host"  # CPU ranks even on a GPU machine
        self.torch = None
        self.torch_why = ""
        try:
            import torch  # noqa: F401
            self.torch = torch
        except ImportError as e:
            self.torch_why = f"torch is not importable ({e})"
        if self.cuda and (self.torch is None or not self.torch.cuda.is_available()):
            sys.exit("kv_transfer_bench: --device cuda needs torch with CUDA" +
                     (f": {self.torch_why}" if self.torch_why else ": torch sees no GPU"))
        self.comm = hetccl.init(set_device=self.cuda)
        c = self.comm
        if c.size != 2:
            sys.exit("kv_transfer_bench: run it with exactly 2 ranks (hetccl-run -n 2 -- ...)")
        if self.cuda and c.device < 0:
            sys.exit("kv_transfer_bench: --device cuda but this rank is a CPU rank (HETCCL_DEVICE=host, or no GPU "
                     "plugin: set HETCCL_CUDA_PLUGIN)")
        if not hetccl.rma_available():
            sys.exit(f"kv_transfer_bench: {hetccl.library_path()} has no RMA API (hetccl_rma.h)")
        c.rma_init()
        self.rank = c.rank
        L, H, D, B = a.layers, a.heads, a.head_dim, a.blocks
        self.page = 2 * TOKENS * H * D * 2  # K and V of one layer of one block, fp16
        self.W = self.page // 8            # 8-byte words per page
        self.sizes = sorted({min(int(s), B) for s in a.sizes.split(",") if s.strip()})
        self.maxn = max(self.sizes)
        self.cache_bytes = L * B * self.page
        self.dev = None
        if self.cuda:
            self.dev = self.torch.device("cuda", c.device)
    def wait_peer(self, peer, tag, limit=1800):
        """Sleeps (no spinning: the peer's timing runs on the same cores) until notification `tag` from peer."""
        t0 = time.time()
        while not self.comm.wait_notification(peer, tag, timeout=5):
            if time.time() - t0 > limit:
                sys.exit(f"kv_transfer_bench: rank {peer} silent for {limit} s (tag {tag})")

    # ---- the run ---------------------------------------------------------------------------------------
    def run(self):
        a, c = self.a, self.comm
        L = a.layers
        maxw = self.maxn * L * self.page // 8
        t_start = time.time()
        backend, torch_why = self.torch_setup()
        if not hasattr(self, "shared_gpu"):
            me = self.gpu_id() if self.cuda else ""
            ids = [c.broadcast_bytes(me.encode() if c.rank == r else None, root=r).decode() for r in range(c.size)]
            self.shared_gpu = self.cuda and ids[0] == ids[1]
        pinned = None
        if self.cuda:
            pinned = self.torch.empty(maxw, dtype=self.torch.int64, pin_memory=True)
        results = []
        if self.rank == 0:
            self.fill_cache()
            mem = c.register(self.cache)
            c.broadcast_bytes(mem.descriptor(), root=0)
            scratch = self.words(maxw)
            for i, n in enumerate(self.sizes):
                self.wait_peer(1, 100 + i)  # rank 1 pulls (rank 0 sleeps; its progress thread serves)
                sel = self.select(n)
                row = {"blocks": n, "ceiling": self.ceiling(sel, scratch, pinned)}
                c.notify(1, 200 + i)
                if backend:
                    self.torch_sendrecv(backend, n, self.as_torch(scratch), None, pinned)
                results.append(row)
            self.wait_peer(1, 300)  # rank 1 measures the per-call overhead
            peer = json.loads(c.recv_bytes(1).decode())
            c.barrier()
            mem.deregister()
            self.report(results, peer, backend, torch_why, time.time() - t_start)
        else:
            desc = c.broadcast_bytes(None, root=0)
            remote = c.import_descriptor(desc)
            dst = self.dst = self.words(maxw)
            lmem = c.register(dst)
            for i, n in enumerate(self.sizes):
                sel = self.select(n)
                rg = self.ranges(sel)
                nb = n * L * self.page
                # check: poison, one get, every byte (outside the timing)
                if self.cuda:
                    dst[:nb // 8].fill_(-1)
                else:
                    dst[:nb // 8] = np.uint64(0xA5A5A5A5A5A5A5A5)
                self.sync()
                lmem.get_batch(remote, rg).wait()
                self.sync()
                bad = self.verify(dst, sel)

                def get():
                    lmem.get_batch(remote, rg).wait()
                    self.sync()
                st = self.time_loop(get, nb)
                row = {"blocks": n, "bytes": nb, "ranges": len(rg), "get": st, "get_check_bad_words": bad}
                c.notify(0, 100 + i)
                self.wait_peer(0, 200 + i)  # rank 0's ceiling
                if backend:
                    tst, tbad = self.torch_sendrecv(backend, n, None, self.as_torch(dst), pinned)
                    row["torch"] = tst
                    row["torch_check_bad_words"] = tbad
                results.append(row)
            ov = self.overhead(lmem, remote)
            c.notify(0, 300)
            c.send_bytes(json.dumps({"rows": results, "overhead": ov, "env": self.env()}).encode(), 0)
            c.barrier()
            lmem.deregister()
            remote.release()
        if backend:
            self.dist.destroy_process_group()
        c.destroy()

    def env(self):
        keep = ("HETCCL_DOMAIN", "HETCCL_HOST_ID", "HETCCL_DEVICE", "HETCCL_TRANSPORT", "HETCCL_LOCAL_RANK",
                "CUDA_VISIBLE_DEVICES", "HETCCL_CUDA_PLUGIN", "HETCCL_LIBRARY")
        return {k: os.environ[k] for k in keep if k in os.environ} | {"host": socket.gethostname(),
                                                                      "comm_device": self.comm.device}
