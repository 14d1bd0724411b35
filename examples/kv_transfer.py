#!/usr/bin/env python3
"""Disaggregated inference, KV-cache transfer with hetccl's one-sided API: the prefill rank (0) writes a paged
KV cache -- layers x blocks x 16 tokens x heads x head_dim -- into a registered buffer and sends its
descriptor to the decode ranks (a broadcast through the communicator); it notifies each decode rank when the
cache is ready. Each decode rank imports the descriptor, pulls its selected block ids of every layer with ONE
batched get, verifies every byte and notifies the prefill rank that it is done.

    hetccl-run -n 2 -- python3 examples/kv_transfer.py                      # CPU ranks, NumPy
    hetccl-run -n 3 --domains 2 -- python3 examples/kv_transfer.py --pull 24
    hetccl-run -n 2 -- python3 examples/kv_transfer.py --device cuda --layers 32 --blocks 1024 --heads 8 --head-dim 128
"""

import argparse
import sys
import time

import numpy as np

import hetccl

TOKENS_PER_BLOCK = 16
TAG_READY, TAG_DONE = 1, 2


def block_pattern(layer, block, block_bytes, seed):
    """The bytes of one block of one layer (what the prefill rank writes, what the decode rank expects)."""
    i = np.arange(block_bytes, dtype=np.uint64)
    return ((i * np.uint64(2654435761) + np.uint64((layer * 1_000_003 + block * 7919 + seed) * 97)) >> np.uint64(8)
            ).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--blocks", type=int, default=64, help="blocks of 16 tokens per layer in the prefill cache")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    ap.add_argument("--pull", type=int, default=16, help="block ids each decode rank pulls (default 16)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                    help="cpu: NumPy buffers; cuda: torch tensors on the rank's GPU; auto: cuda when torch sees one")
    ap.add_argument("--corrupt", action="store_true", help=argparse.SUPPRESS)  # tests: the check must fail
    a = ap.parse_args()

    torch = None
    if a.device in ("auto", "cuda"):
        try:
            import torch  # noqa: F811
        except ImportError:
            torch = None
        if torch is None or not torch.cuda.is_available():
            if a.device == "cuda":
                sys.exit("kv_transfer: --device cuda needs torch with CUDA")
            torch = None
    if a.dtype == "bfloat16" and torch is None:
        sys.exit("kv_transfer: bfloat16 needs torch")

    comm = hetccl.init()
    rank, size = comm.rank, comm.size
    if size < 2:
        sys.exit("kv_transfer: needs 2+ ranks (rank 0 prefill, the others decode): hetccl-run -n 2 -- ...")
    comm.rma_init()
    itemsize = {"float16": 2, "bfloat16": 2, "float32": 4}[a.dtype]
    block_shape = (TOKENS_PER_BLOCK, a.heads, a.head_dim)
    block_bytes = TOKENS_PER_BLOCK * a.heads * a.head_dim * itemsize

    def alloc(nblocks):
        shape = (a.layers, nblocks) + block_shape
        if torch is not None:
            return torch.empty(shape, dtype=getattr(torch, a.dtype), device="cuda")
        return np.empty(shape, a.dtype)

    def as_bytes(buf):  # a host uint8 copy (GPU) or view (CPU) of the buffer
        if torch is not None:
            return buf.contiguous().view(torch.uint8).cpu().numpy().reshape(-1)
        return buf.reshape(-1).view(np.uint8)

    t0 = time.perf_counter()
    if rank == 0:
        # ---- prefill: write the cache, publish its descriptor, say "ready", wait for every decode rank ----
        kv = alloc(a.blocks)
        host = np.empty(kv.numel() * itemsize if torch is not None else kv.nbytes, np.uint8)
        for layer in range(a.layers):
            for b in range(a.blocks):
                off = (layer * a.blocks + b) * block_bytes
                host[off:off + block_bytes] = block_pattern(layer, b, block_bytes, a.seed)
        if a.corrupt:  # one byte of every block: whatever a decode rank pulls is wrong
            host[block_bytes // 3::block_bytes] ^= 0xFF
        if torch is not None:
            kv.view(torch.uint8).view(-1).copy_(torch.from_numpy(host))
            torch.cuda.synchronize()  # the data is in place before anyone reads it
        else:
            as_bytes(kv)[:] = host
        mem = comm.register(kv)
        comm.broadcast_bytes(mem.descriptor(), root=0)
        for peer in range(1, size):
            comm.notify(peer, TAG_READY)
        for peer in range(1, size):
            if not comm.wait_notification(peer, TAG_DONE, timeout=None):
                sys.exit(f"kv_transfer: decode rank {peer} did not finish within HETCCL_TIMEOUT")
        total = a.layers * a.blocks * block_bytes
        print(f"kv_transfer: prefill rank 0: cache {a.layers} layers x {a.blocks} blocks x {block_shape} {a.dtype} "
              f"= {total / 2**20:.2f} MiB ({mem.kind} memory), served {size - 1} decode rank(s)", flush=True)
        comm.barrier()
        mem.deregister()
        comm.destroy()
        return 0

    # ---- decode: import, wait for "ready", ONE batched get of the selected blocks, verify ----
    desc = comm.broadcast_bytes(None, root=0)
    remote = comm.import_descriptor(desc)
    rng = np.random.default_rng(a.seed * 100 + rank)
    pull = min(a.pull, a.blocks)
    sel = np.sort(rng.choice(a.blocks, pull, replace=False))
    local = alloc(pull)
    lmem = comm.register(local)
    ranges = np.array([((layer * pull + i) * block_bytes, (layer * a.blocks + int(b)) * block_bytes, block_bytes)
                       for layer in range(a.layers) for i, b in enumerate(sel)], np.uint64)
    if not comm.wait_notification(0, TAG_READY, timeout=None):
        sys.exit("kv_transfer: the prefill rank never said ready")
    t1 = time.perf_counter()
    lmem.get_batch(remote, ranges).wait()
    t_get = time.perf_counter() - t1
    got = as_bytes(local)
    bad = []
    for layer in range(a.layers):
        for i, b in enumerate(sel):
            off = (layer * pull + i) * block_bytes
            exp = block_pattern(layer, int(b), block_bytes, a.seed)
            diff = np.flatnonzero(got[off:off + block_bytes] != exp)
            if diff.size:
                bad.append((layer, int(b), int(diff[0]), diff.size))
    comm.notify(0, TAG_DONE)
    nbytes = a.layers * pull * block_bytes
    if bad:
        layer, b, first, n = bad[0]
        print(f"kv_transfer: decode rank {rank}: {len(bad)} block(s) wrong; first: layer {layer} block {b}, byte "
              f"{first} ({n} bytes differ)", flush=True)
        comm.abort()
        return 1
    print(f"kv_transfer: decode rank {rank}: pulled blocks {sel.tolist()[:8]}{' ...' if pull > 8 else ''} of "
          f"{a.layers} layers ({len(ranges)} ranges, one get_batch): {nbytes / 2**20:.2f} MiB in {t_get * 1e3:.2f} ms, "
          f"every byte checked ({time.perf_counter() - t0:.2f} s total)", flush=True)
    comm.barrier()
    lmem.deregister()
    remote.release()
    comm.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
