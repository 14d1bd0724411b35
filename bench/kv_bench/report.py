"""The report (rank 0): machine, versions, command and layout, every size's rows merged with the peer's, the
goals; printed as markdown and written as markdown / JSON when asked."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

import hetccl
import numpy as np

from .layout import TOKENS

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bench/ (git describe runs there)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"({e})"


def parent_cmdline():
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            return " ".join(x.decode(errors="replace") for x in f.read().split(b"\0") if x)
    except OSError:
        return ""


class Report:
    """The report of a Bench (mixed into runner.Bench)."""

    # ---- report (rank 0) -------------------------------------------------------------------------------
    def report(self, rows0, peer, backend, torch_why, wall):
        a = self.a
        t = self.torch
        model = sh("lscpu | sed -n 's/^Model name: *//p' | head -1")
        gpu = ""
        if self.cuda:
            gpu = t.cuda.get_device_name(self.dev)
        elif t is not None and t.cuda.is_available():
            gpu = t.cuda.get_device_name(0) + " (not used: CPU ranks)"
        else:
            gpu = sh("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1") or "none"
        env0, env1 = self.env(), peer["env"]
        tcp = env0.get("HETCCL_HOST_ID", "") != env1.get("HETCCL_HOST_ID", "") or env0["host"] != env1["host"]
        transport = os.environ.get("HETCCL_TRANSPORT") or ("tcp (ranks act as two hosts)" if tcp else
                                                          "shm (one host)")
        info = {
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "machine": {"cpu": model, "nproc": os.cpu_count(), "loadavg": os.getloadavg(), "gpu": gpu,
                        "kernel": platform.platform(), "mem": sh("free -g | sed -n 2p")},
            "versions": {"hetccl": hetccl.version(), "hetccl_library": hetccl.library_path(),
                         "python": platform.python_version(), "numpy": np.__version__,
                         "torch": getattr(t, "__version__", None),
                         "torch_cuda": getattr(getattr(t, "version", None), "cuda", None) if t else None,
                         "git": sh(f"git -C {BENCH_DIR} describe --always --dirty")},
            "command": {"launcher": parent_cmdline(), "rank": " ".join([sys.executable] + sys.argv)},
            "ranks_env": [env0, env1],
            "transport": transport,
            "shared_gpu": bool(self.shared_gpu),
            "layout": {"layers": a.layers, "kv_heads": a.heads, "head_dim": a.head_dim, "dtype": "float16",
                       "tokens_per_block": TOKENS, "blocks": a.blocks, "layout": a.layout,
                       "page_bytes": self.page, "block_bytes": self.page * a.layers,
                       "cache_bytes": self.cache_bytes},
            "torch_baseline": backend or f"skipped: {torch_why}",
            "overhead": peer["overhead"],
            "wall_s": wall,
            "rows": [],
        }
        for r0, r1 in zip(rows0, peer["rows"]):
            nb = r1["bytes"]
            row = {**r1, "ceiling": r0["ceiling"]}
            row["get_gbps"] = nb / r1["get"]["median_s"] / 1e9
            row["ceiling_gbps"] = r0["ceiling"]["ceiling_gbps"]
            row["get_over_ceiling"] = row["get_gbps"] / row["ceiling_gbps"]
            if "torch" in r1:
                row["torch_gbps"] = nb / r1["torch"]["median_s"] / 1e9
                row["get_over_torch"] = row["get_gbps"] / row["torch_gbps"]
            info["rows"].append(row)
        info["wrong_words"] = sum(r["get_check_bad_words"] + r.get("torch_check_bad_words", 0) +
                                  r["ceiling"]["ceiling_check_bad_words"] for r in info["rows"])
        self.failed = info["wrong_words"] > 0
        md = self.markdown(info)
        print(md, flush=True)
        if a.md:
            with open(a.md, "w") as f:
                f.write(md + "\n")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(info, f, indent=1)

    def markdown(self, info):
        a, lay = self.a, info["layout"]
        ov = info["overhead"]
        out = []
        head = (f"## KV-block transfer, --device {a.device}, {info['transport']}"
                f"{', ranks in domains ' + '/'.join(e.get('HETCCL_DOMAIN', '-') for e in info['ranks_env'])}")
        out.append(head)
        if info["shared_gpu"]:
            out.append("\n**WARNING: both ranks share ONE GPU (separate domains): correctness run, NOT performance "
                       "evidence.**")
        m, v = info["machine"], info["versions"]
        out.append(f"\n- machine: {m['cpu']}, nproc {m['nproc']}, load {', '.join(f'{x:.2f}' for x in m['loadavg'])}, "
                   f"GPU: {m['gpu']}; {m['kernel']}")
        out.append(f"- versions: hetccl {v['hetccl']} ({v['hetccl_library']}), git {v['git']}, Python {v['python']}, "
                   f"NumPy {v['numpy']}, torch {v['torch'] or 'not installed'}"
                   f"{' (CUDA ' + str(v['torch_cuda']) + ')' if v.get('torch_cuda') else ''}")
        out.append(f"- command: `{info['command']['launcher'] or '(launcher unknown)'}`; rank: "
                   f"`{info['command']['rank']}`")
        out.append(f"- cache: {lay['layers']} layers x {lay['blocks']} blocks x 16 tokens x {lay['kv_heads']} KV heads x "
                   f"{lay['head_dim']} fp16, layout `{lay['layout']}`: page (K+V of one layer, one block) "
                   f"{lay['page_bytes'] // 1024} KiB, block {lay['block_bytes'] / 2**20:g} MiB, cache "
                   f"{lay['cache_bytes'] / 2**30:.2f} GiB; random block ids (random order)")
        c0 = info["rows"][0]["ceiling"]
        out.append(f"- ceiling: {c0['ceiling_what']}")
        out.append(f"- torch baseline: {info['torch_baseline']}")
        out.append("- GB/s = 1e9 B/s over the median; get = one get_batch + wait, checked once per size (all bytes)\n")
        hdr = "| blocks | MiB | ranges | get median ms | get p90 ms | get GB/s | ceiling GB/s | get/ceiling |"
        sep = "|---|---|---|---|---|---|---|---|"
        if any("torch" in r for r in info["rows"]):
            hdr += " torch ms | torch GB/s | get/torch |"
            sep += "---|---|---|"
        if self.cuda:
            hdr += " D2H GB/s | H2D GB/s | dev gather GB/s |"
            sep += "---|---|---|"
        else:
            hdr += " memcpy GB/s |"
            sep += "---|"
        hdr += " check |"
        sep += "---|"
        out += [hdr, sep]
        for r in info["rows"]:
            nb, ce = r["bytes"], r["ceiling"]
            cells = [str(r["blocks"]), f"{nb / 2**20:g}", str(r["ranges"]), f"{r['get']['median_s'] * 1e3:.3f}",
                     f"{r['get']['p90_s'] * 1e3:.3f}", f"{r['get_gbps']:.2f}", f"{r['ceiling_gbps']:.2f}",
                     f"**{r['get_over_ceiling']:.2f}x**"]
            if "torch" in hdr:
                if "torch" in r:
                    cells += [f"{r['torch']['median_s'] * 1e3:.3f}", f"{r['torch_gbps']:.2f}", f"{r['get_over_torch']:.2f}x"]
                else:
                    cells += ["-", "-", "-"]
            if self.cuda:
                cells += [f"{nb / ce[k]['median_s'] / 1e9:.2f}" for k in ("d2h_pinned", "h2d_pinned", "device_gather")]
            else:
                cells += [f"{nb / ce['host_memcpy']['median_s'] / 1e9:.2f}"]
            bad = r["get_check_bad_words"] + r.get("torch_check_bad_words", 0) + ce["ceiling_check_bad_words"]
            cells.append("ok" if bad == 0 else f"**{bad} WRONG words**")
            out.append("| " + " | ".join(cells) + " |")
        reps = ", ".join(f"{r['blocks']}:{r['get']['n']}" for r in info["rows"])
        out.append(f"\nTimed repetitions per size (blocks:reps): {reps}; warm-up {a.warmup}.")
        g = [r for r in info["rows"] if r["blocks"] == 256]
        if g:
            out.append(f"\n**Goal 1 (one batched get of 256 blocks >= 0.8x the ceiling): {g[0]['get_over_ceiling']:.2f}x "
                       f"-> {'met' if g[0]['get_over_ceiling'] >= 0.8 else 'NOT met'}** "
                       f"({g[0]['get_gbps']:.2f} vs {g[0]['ceiling_gbps']:.2f} GB/s)")
        else:
            out.append("\nGoal 1 (256 blocks): not measured (cache or --sizes below 256 blocks)")
        iss = ov["over_c_issue_us"]
        full = ov["over_c_full_arr_us"]
        out.append(f"\n**Goal 2 (Python per-call overhead <= 10 us over the C call), one {ov['tiny_bytes']} B range: "
                   f"issuing get_batch from Python costs +{iss:.2f} us over the ctypes hetcclGetBatch call "
                   f"({ov['py_issue']:.2f} vs {ov['c_issue']:.2f} us); get_batch + wait +{full:.2f} us over "
                   f"GetBatch + RequestWait + RequestFree ({ov['py_arr']:.2f} vs {ov['c_full']:.2f} us, includes the "
                   f"round trip's noise) -> {'met' if max(iss, full) <= 10 else 'NOT met'}**")
        out.append(f"\n| per call ({ov['samples']} samples each, variants interleaved call by call) | median us | "
                   f"p90 us |\n|---|---|---|")
        for k, label in (("c_full", "ctypes: hetcclGetBatch + RequestWait + RequestFree (\"the C call\")"),
                         ("py_arr", "mem.get_batch(remote, uint64 array (1,3)).wait()"),
                         ("py_list", "mem.get_batch(remote, [(0, 0, 64)]).wait()"),
                         ("c_issue", "issue only: ctypes hetcclGetBatch"),
                         ("py_issue", "issue only: mem.get_batch(remote, array)"),
                         ("py_issue_list", "issue only: mem.get_batch(remote, list)"),
                         ("timer", "perf_counter_ns pair alone (in every row)"),
                         ("ctypes_crossing", "one ctypes crossing (hetcclGetVersion)")):
            out.append(f"| {label} | {ov[k]:.2f} | {ov['p90_us'][k]:.2f} |")
        out.append(f"| **overhead: issue (array / list)** | {iss:.2f} / {ov['over_c_issue_list_us']:.2f} | |")
        out.append(f"| **overhead: get + wait (array / list)** | {full:.2f} / {ov['over_c_full_list_us']:.2f} | |")
        out.append(f"\nThe C rows are themselves called through ctypes: a C caller saves about 1 (issue) or 3 (get + "
                   f"wait) crossings of {ov['ctypes_crossing']:.2f} us. Wall time of the run: {info['wall_s']:.1f} s.")
        return "\n".join(out)
