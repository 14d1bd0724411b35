"""How much of a DDP step's communication overlaps its computation, from a torch.profiler trace
(ddp_train.py --trace): GPU intervals are split into compute (kernels, device-to-device copies and memsets:
DDP's own bucket copies), communication kernels (names with hetccl or nccl) and copies between device and
host (the stream pipeline's device <-> pinned-ring copies),
each merged into busy intervals; printed: the window, each class's busy time, copy bytes and rate, and the
time copies and communication kernels run while a compute kernel runs.
    python3 trace_overlap.py TRACE.json..."""
import json
import sys


def merged(intervals):
    out = []
    for b, e in sorted(intervals):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def busy(iv):
    return sum(e - b for b, e in iv)


def intersection(a, b):
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def summarize(path):
    events = json.load(open(path))
    if isinstance(events, dict):  # newer torch: {"traceEvents": [...]}; 1.13: the list itself
        events = events["traceEvents"]
    compute, comm, copies = [], [], []
    copy_bytes = 0
    by_kind = {}  # copy name -> MiB (DtoD are DDP's own bucket copies; DtoH / HtoD the rings')
    for ev in events:
        if ev.get("ph") != "X" or "dur" not in ev:
            continue
        cat, name = ev.get("cat", ""), ev.get("name", "")
        iv = (float(ev["ts"]), float(ev["ts"]) + float(ev["dur"]))
        if cat == "kernel":
            (comm if ("hetccl" in name.lower() or "nccl" in name.lower()) else compute).append(iv)
        elif cat in ("gpu_memcpy", "gpu_memset"):
            nbytes = int(ev.get("args", {}).get("bytes", 0) or 0)
            by_kind[name] = by_kind.get(name, 0) + nbytes / 2**20
            if "DtoD" in name or "Memset" in name:  # not between device and host: computation's own
                compute.append(iv)
                continue
            copies.append(iv)
            copy_bytes += nbytes
    if not compute:
        return f"{path}: no GPU kernels in the trace"
    c, k, m = merged(compute), merged(comm), merged(copies)
    window = max(x[1] for x in c + k + m) - min(x[0] for x in c + k + m)
    moving = merged(k + m)
    ms = lambda us: f"{us / 1e3:.2f} ms"
    rate = f", {copy_bytes / busy(m) / 1e3:.1f} GB/s while copying" if busy(m) and copy_bytes else ""
    return (f"{path}: window {ms(window)} (3 steps); compute kernels busy {ms(busy(c))}; communication kernels "
            f"{ms(busy(k))}; copies {ms(busy(m))} ({copy_bytes / 2**20:.0f} MiB{rate}); communication (copies + "
            f"its kernels) {ms(busy(moving))}, of it while compute runs {ms(intersection(moving, c))} "
            f"({100 * intersection(moving, c) / busy(moving) if busy(moving) else 0:.0f} %); copies by kind: "
            + ", ".join(f"{k} {v:.0f} MiB" for k, v in sorted(by_kind.items())))


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(summarize(p))
