#!/usr/bin/env python3
"""Python overhead of the agent API (issue 29 goal: issuing a batched read <= 10 us over the C call, ranges
given as a NumPy array). Two agents in this process (host memory, 127.0.0.1); the same calls made through
hetccl.Agent / Xfer and straight through ctypes on the same library, interleaved in one run:
  - prepare + release of a 256-range read from a NumPy array of hetcclAgentRange_t (no network);
  - post of a prepared 256-range read (the call only: the wait for completion is not timed).
    HETCCL_LIBRARY=build/libhetccl.so PYTHONPATH=python python3 bench/agent/python_overhead.py
"""
import ctypes
import time

import numpy as np

import hetccl
from hetccl import _agent


def best_of(f, n=3000, reps=3):
    for _ in range(100):
        f()
    best = 1e9
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def main():
    sec = b"python overhead secret 012345678"
    a = hetccl.Agent("A", secret=sec, listen="127.0.0.1:0")
    b = hetccl.Agent("B", secret=sec, listen="127.0.0.1:0")
    src, dst = np.zeros(1 << 20, np.uint8), np.zeros(1 << 20, np.uint8)
    ma, mb = a.register(src), b.register(dst)
    peer = a.load_remote(b.metadata())
    rng = np.zeros(256, dtype=_agent.range_dtype())
    for i in range(256):
        rng[i] = (ma.id, mb.id, i * 4096, i * 4096, 64)
    f = _agent._f()
    x = a.prep_xfer("read", peer, rng)
    xh, agh, peerb = x._x, a._h, peer.encode()
    out = ctypes.c_void_p()
    ptr = rng.ctypes.data_as(ctypes.c_void_p)

    def prep_py():
        a.prep_xfer("read", peer, rng).release()

    def prep_c():
        f.hetcclAgentPrepXfer(agh, 0, peerb, ptr, 256, None, 0, ctypes.byref(out))
        f.hetcclAgentReleaseXfer(out)

    def issue(calls, n=3000):  # the calls alternate, so that both see the same machine state
        t = [[] for _ in calls]
        for k in range(n * len(calls)):
            t0 = time.perf_counter()
            calls[k % len(calls)]()
            t[k % len(calls)].append(time.perf_counter() - t0)
            while f.hetcclAgentCheckXfer(xh) == 7:
                pass
        return [sorted(v)[len(v) // 2] * 1e6 for v in t]

    p_py, p_c = best_of(prep_py), best_of(prep_c)
    i_py, i_c = issue([lambda: x.post(), lambda: f.hetcclAgentPostXfer(xh)])
    print(f"prepare + release, 256 ranges from NumPy: python {p_py:.2f} us, C through ctypes {p_c:.2f} us, +{p_py - p_c:.2f} us")
    print(f"post of a prepared 256-range read (median): python {i_py:.2f} us, C through ctypes {i_c:.2f} us, +{i_py - i_c:.2f} us")
    print(f"issuing a batched read (prepare + post) from Python: +{p_py - p_c + i_py - i_c:.2f} us over the C calls (goal <= 10)")
    a.close()
    b.close()


if __name__ == "__main__":
    main()
