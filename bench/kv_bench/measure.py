"""Measurement: per-call statistics, repetitions per size, timed loops, and rank 0's copy ceiling of the same
bytes (numpy gather on CPU; pinned D2H / H2D and the device gather on CUDA)."""

from __future__ import annotations

import statistics
import time

import numpy as np


def stats(times):
    t = sorted(times)
    p90 = t[min(len(t) - 1, int(round(0.9 * (len(t) - 1))))]
    return {"median_s": statistics.median(t), "p90_s": p90, "min_s": t[0], "n": len(t)}


class Measure:
    """Timing and the ceiling of a Bench (mixed into runner.Bench)."""

    # ---- timing ----------------------------------------------------------------------------------------
    def reps_for(self, nbytes):
        a = self.a
        return int(max(a.min_reps, min(a.reps, a.budget_mb * 1e6 // max(1, nbytes))))

    def time_loop(self, fn, nbytes, warmup=None):
        warmup = self.a.warmup if warmup is None else warmup
        for _ in range(warmup):
            fn()
        ts = []
        for _ in range(self.reps_for(nbytes)):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return stats(ts)

    # ---- rank 0: the ceiling ---------------------------------------------------------------------------
    def ceiling(self, sel, scratch, pinned):
        n = len(sel)
        nb = n * self.a.layers * self.page
        nw = nb // 8
        out = {}
        if self.cuda:
            def g():
                self.gather(sel, scratch)
                self.sync()
            out["device_gather"] = self.time_loop(g, nb)
            g()
            bad = self.verify(scratch, sel)

            def d2h():
                pinned[:nw].copy_(scratch[:nw], non_blocking=True)
                self.sync()

            def h2d():
                scratch[:nw].copy_(pinned[:nw], non_blocking=True)
                self.sync()
            out["d2h_pinned"] = self.time_loop(d2h, nb)
            out["h2d_pinned"] = self.time_loop(h2d, nb)
            slow = max(out["d2h_pinned"]["median_s"], out["h2d_pinned"]["median_s"])
            out["ceiling_gbps"] = nb / slow / 1e9
            out["ceiling_what"] = "min(pinned D2H, pinned H2D), one contiguous copy of the same bytes"
        else:
            out["host_gather"] = self.time_loop(lambda: self.gather(sel, scratch), nb)
            self.gather(sel, scratch)
            bad = self.verify(scratch, sel)
            src = self.cache[:nw]
            out["host_memcpy"] = self.time_loop(lambda: np.copyto(scratch[:nw], src), nb)
            out["ceiling_gbps"] = nb / out["host_gather"]["median_s"] / 1e9
            out["ceiling_what"] = "numpy gather of the same ranges, registered cache -> another buffer, one process"
        out["ceiling_check_bad_words"] = bad
        self.gather(sel, scratch)  # packed blocks for the torch sender
        self.sync()
        return out
