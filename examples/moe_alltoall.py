#!/usr/bin/env python3
"""Mixture-of-experts token routing with hetccl's all_to_allv: every rank is an expert; each step every rank
routes a random number of tokens (hidden size H) to every expert-rank, exchanging the counts first
(all_to_all) and then the tokens (all_to_allv, uneven), and checks every received token's content.

    hetccl-run -n 4 --domains 2 -- python3 examples/moe_alltoall.py               # CPU ranks, NumPy
    hetccl-run -n 2 -- python3 examples/moe_alltoall.py --device cuda --hidden 4096 --max-tokens 2048
    torchrun --nproc-per-node 2 examples/moe_alltoall.py --device cuda            # + HETCCL_SECRET
"""

import argparse
import sys
import time

import numpy as np

import hetccl

MOD = 1 << 23  # token values stay below 2^24: exact in float32 (and in float16/bfloat16 after the mod below)


def token_values(src, dst, step, first, count, hidden, dtype_mod):
    """The content of tokens first..first+count-1 routed from rank src to expert dst at `step`."""
    j = np.arange(first, first + count, dtype=np.int64)[:, None]
    h = np.arange(hidden, dtype=np.int64)[None, :]
    v = (((step * 1_000_003 + src * 7919 + dst * 104_729 + j * 131) * 2654435761 + h * 40503) >> 7) % MOD
    return (v % dtype_mod).astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=64, help="hidden size H (default 64)")
    ap.add_argument("--max-tokens", type=int, default=32, help="at most this many tokens per destination (32)")
    ap.add_argument("--steps", type=int, default=3, help="routing steps (3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                    help="cpu: NumPy arrays; cuda: torch tensors on the rank's GPU; auto: cuda when torch sees one")
    ap.add_argument("--corrupt-rank", type=int, default=-1, help=argparse.SUPPRESS)  # tests: the check must fail
    a = ap.parse_args()

    torch = None
    if a.device in ("auto", "cuda"):
        try:
            import torch  # noqa: F811
        except ImportError:
            torch = None
        if torch is None or not torch.cuda.is_available():
            if a.device == "cuda":
                sys.exit("moe_alltoall: --device cuda needs torch with CUDA")
            torch = None
    if a.dtype == "bfloat16" and torch is None:
        sys.exit("moe_alltoall: bfloat16 needs torch")

    comm = hetccl.init()  # binds to GPU local_rank % count first when torch is imported
    rank, size = comm.rank, comm.size
    # values are taken modulo a bound the dtype holds exactly (float16: 2048, bfloat16: 256)
    dtype_mod = {"float32": MOD, "float16": 2048, "bfloat16": 256}[a.dtype]
    rng = np.random.default_rng(a.seed * 1000 + rank)
    checked = 0
    moved = 0
    t0 = time.perf_counter()
    for step in range(a.steps):
        send_counts = rng.integers(0, a.max_tokens + 1, size)
        if step == 0 and size > 1:
            send_counts[(rank + 1) % size] = 0  # always some empty routes
        # 1) counts: recv_counts[p] = how many tokens rank p routes to this expert
        sc = np.ascontiguousarray(send_counts, np.int64)
        rc = np.zeros(size, np.int64)
        comm.all_to_all(sc, rc)
        # 2) tokens, packed per destination
        send_np = np.concatenate([token_values(rank, p, step, 0, int(send_counts[p]), a.hidden, dtype_mod)
                                  for p in range(size)]) if send_counts.sum() else np.zeros((0, a.hidden))
        if rank == a.corrupt_rank and len(send_np):
            send_np[len(send_np) // 2, a.hidden // 2] += 1
        nrecv = int(rc.sum())
        if torch is not None:
            tdt = getattr(torch, a.dtype)
            send = torch.from_numpy(send_np).to(device="cuda", dtype=tdt).contiguous()
            recv = torch.full((nrecv, a.hidden), -1, dtype=tdt, device="cuda")
        else:
            send = send_np.astype(a.dtype)
            recv = np.full((nrecv, a.hidden), -1, a.dtype)
        comm.all_to_allv(send, [int(c) * a.hidden for c in send_counts], recv, [int(c) * a.hidden for c in rc])
        if torch is not None:
            torch.cuda.current_stream().synchronize()
            got = recv.float().cpu().numpy().astype(np.float64)
        else:
            got = recv.astype(np.float64)
        # 3) check every received token
        off = 0
        for p in range(size):
            n = int(rc[p])
            exp = token_values(p, rank, step, 0, n, a.hidden, dtype_mod)
            bad = np.argwhere(got[off:off + n] != exp)
            if bad.size:
                j, h = bad[0]
                print(f"moe_alltoall: rank {rank} step {step}: token {j} from rank {p} differs at hidden index {h}: "
                      f"got {got[off + j, h]}, expected {exp[j, h]} ({len(bad)} values wrong)", flush=True)
                comm.abort()
                return 1
            off += n
            checked += n
        moved += int(send_counts.sum())
    dt = time.perf_counter() - t0
    total = np.array([checked], np.int64)
    comm.all_reduce(total)
    print(f"moe_alltoall: rank {rank}/{size}: {a.steps} steps, sent {moved} and checked {checked} tokens of "
          f"hidden {a.hidden} ({a.dtype}, {'cuda' if torch is not None else 'cpu'}) in {dt:.3f} s; job total "
          f"{int(total[0])} tokens OK", flush=True)
    comm.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
