"""The per-call overhead (rank 1): get_batch of one tiny range from Python against the same hetcclGetBatch +
hetcclRequestWait + hetcclRequestFree called directly through ctypes, the variants interleaved call by call."""

from __future__ import annotations

import statistics
import time

import numpy as np
from hetccl import _lib


class Overhead:
    """The per-call overhead measurement of a Bench (mixed into runner.Bench)."""

    # ---- per-call overhead (rank 1) --------------------------------------------------------------------
    def overhead(self, lmem, remote):
        import ctypes
        f = _lib.fn
        calls = self.a.overhead_calls
        tiny = 64
        arr = np.array([[0, 0, tiny]], np.uint64)
        lst = [(0, 0, tiny)]
        rr = (_lib.RmaRange * 1)(_lib.RmaRange(0, 0, tiny))
        rptr = ctypes.addressof(rr)
        m, r = lmem._m, remote._r
        req = ctypes.c_void_p()
        breq = ctypes.byref(req)
        getb, wait, free = f.hetcclGetBatch, f.hetcclRequestWait, f.hetcclRequestFree

        pc = time.perf_counter_ns
        v = ctypes.c_int()
        gv, bv = f.hetcclGetVersion, ctypes.byref(v)

        # One sample per call and variant, the variants interleaved call by call (the round trip to the
        # peer's progress thread is noisy on a loaded machine: medians of per-call samples, same conditions).
        def c_full():
            t0 = pc()
            getb(m, r, rptr, 1, breq)
            wait(req)
            free(req)
            return pc() - t0

        def py_arr():
            t0 = pc()
            lmem.get_batch(remote, arr).wait()
            return pc() - t0

        def py_list():
            t0 = pc()
            lmem.get_batch(remote, lst).wait()
            return pc() - t0

        def c_issue():  # the issue alone; the request is waited for outside the timed part
            t0 = pc()
            getb(m, r, rptr, 1, breq)
            t = pc() - t0
            wait(req)
            free(req)
            return t

        def py_issue():
            t0 = pc()
            q = lmem.get_batch(remote, arr)
            t = pc() - t0
            q.wait()
            return t

        def py_issue_list():
            t0 = pc()
            q = lmem.get_batch(remote, lst)
            t = pc() - t0
            q.wait()
            return t

        def timer():
            t0 = pc()
            return pc() - t0

        def crossing():
            t0 = pc()
            gv(bv)
            return pc() - t0

        fns = {"c_full": c_full, "py_arr": py_arr, "py_list": py_list, "c_issue": c_issue, "py_issue": py_issue,
               "py_issue_list": py_issue_list, "timer": timer, "ctypes_crossing": crossing}
        res = {k: [] for k in fns}
        order = list(fns.items())
        for i in range(calls // 10 + calls):  # the first tenth is warm-up
            for name, fn in order[i % len(order):] + order[:i % len(order)]:
                t = fn()
                if i >= calls // 10:
                    res[name].append(t)
        med = {k: statistics.median(v) / 1e3 for k, v in res.items()}  # us
        med["over_c_full_arr_us"] = med["py_arr"] - med["c_full"]
        med["over_c_full_list_us"] = med["py_list"] - med["c_full"]
        med["over_c_issue_us"] = med["py_issue"] - med["c_issue"]
        med["over_c_issue_list_us"] = med["py_issue_list"] - med["c_issue"]
        med["timer_us"] = med["timer"]
        med["tiny_bytes"] = tiny
        med["samples"] = calls
        med["p90_us"] = {k: sorted(v)[int(0.9 * (len(v) - 1))] / 1e3 for k, v in res.items()}
        return med
