#!/usr/bin/env bash
# One device call, CPU only (the machine's 16 cores; no GPU used): bench/agent/agent_latency_smoke.cc (two
# agents in one process on 127.0.0.1, host memory) against the library before the pipelined writes (d845e52,
# devbin-before) and after (devbin-after), interleaved, 3 rounds, window path (auto) and tcp (off). Every
# burst's bytes are checked by the probe.
set -uo pipefail
o=${OUT:?}
root=$PWD
{ date -u; lscpu | grep -E "Model name|^CPU\(s\)"; uname -r; ldconfig -p | grep -c libucp || true; } >"$o/machine.txt" 2>&1
for round in 1 2 3; do
  for lib in before after; do
    for w in auto off; do
      echo "== round $round lib $lib window $w" >>"$o/smoke.log"
      HETCCL_AGENT_WINDOW=$w LD_LIBRARY_PATH=$root/devbin-$lib timeout 120 "$root/devbin-after/agent_smoke" >>"$o/smoke.log" 2>&1
      echo "rc=$?" >>"$o/smoke.log"
    done
  done
done
grep -E "^==|burst|64 B write|16 MiB|rc=|MISMATCH" "$o/smoke.log"
