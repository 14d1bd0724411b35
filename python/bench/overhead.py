"""Per-call overhead of the Python binding over the C call (python/bench/run_overhead.sh runs it with the
C loop and writes the report). Prints "<case> <ns per call>" lines, best of --reps runs of --n calls."""

import argparse
import ctypes
import time

import numpy as np

import hetccl
from hetccl import _lib


def best(fn, n, reps):
    b = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(n)
        b = min(b, (time.perf_counter() - t0) / n)
    return b * 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pybind", action="store_true", help="also the pybind11 probe module (on sys.path)")
    a = ap.parse_args()
    n, reps = a.n, a.reps
    f = _lib.load()
    v = ctypes.c_int()
    ref = ctypes.byref(v)
    gv = f.hetcclGetVersion

    def loop_empty(k):
        for _ in range(k):
            pass

    def ctypes_version(k):
        for _ in range(k):
            gv(ref)

    def api_version(k):
        ver = hetccl.version
        for _ in range(k):
            ver()

    res = {"python empty loop": best(loop_empty, n, reps), "ctypes get_version (raw)": best(ctypes_version, n, reps),
           "hetccl.version()": best(api_version, n, reps)}
    probe = None
    if a.pybind:
        import hetccl_pybind_probe as probe

        def pb_version(k):
            g = probe.get_version
            for _ in range(k):
                g()

        res["pybind11 get_version"] = best(pb_version, n, reps)

    comm = hetccl.Communicator(hetccl.get_unique_id(), 1, 0)
    x = np.ones(1, np.float32)
    ptr = x.ctypes.data
    h = comm.handle
    ar = getattr(f.hetcclAllReduce, "raw", f.hetcclAllReduce)  # the ctypes function itself (not the SIGINT record)
    m = n // 4

    def ctypes_allreduce(k):
        for _ in range(k):
            ar(ptr, ptr, 1, 7, 0, h, None)

    def api_allreduce(k):
        c = comm.all_reduce
        for _ in range(k):
            c(x)

    res["ctypes hetcclAllReduce (raw pointer)"] = best(ctypes_allreduce, m, reps)
    res["comm.all_reduce(numpy, 1 elem)"] = best(api_allreduce, m, reps)
    if probe is not None:
        def pb_ptr(k):
            g = probe.all_reduce_ptr
            for _ in range(k):
                g(ptr, 1, 7, 0, h)

        def pb_dl(k):
            g = probe.all_reduce_dlpack
            for _ in range(k):
                g(x, h)

        res["pybind11 all_reduce (raw pointer)"] = best(pb_ptr, m, reps)
        res["pybind11 all_reduce (DLPack parsed in C++)"] = best(pb_dl, m, reps)

    def dlpack_only(k):
        from hetccl._dlpack import export
        for _ in range(k):
            export(x)

    res["hetccl DLPack export alone (numpy)"] = best(dlpack_only, m, reps)
    comm.destroy()
    for k, val in res.items():
        print(f"{k}\t{val:.0f}")


if __name__ == "__main__":
    main()
