#!/usr/bin/env bash
# Every TCP connect() of a two-host job over ucx is non-blocking. UCX's tcp transport connects its
# wire-up sockets blocking by default (UCX_TCP_CONN_NB=n); towards a host that drops packets that call
# sat in the kernel's SYN retries for minutes, holding the worker past every deadline (a hang the
# netns drop_init_mid case found). The ucx transport sets CONN_NB=y; this test sees the connects as
# strace does: a blocking connect() returns 0, a non-blocking one -1 EINPROGRESS.
# Usage: ucx_connects_nonblocking.sh <hetccl-run> <netns_fault_rank>
set -euo pipefail
run=$1 rank=$2
command -v strace >/dev/null || { echo "strace is not installed (scripts/install-deps.sh): skipped"; exit 77; }
# LeakSanitizer cannot run under ptrace: in the ASan build the traced ranks skip the exit-time leak scan
# (every other ASan check stays on).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
env -u UCX_TCP_CONN_NB HETCCL_UCX=on UCX_TLS=tcp HETCCL_TIMEOUT=60 \
  strace -f -qq -e trace=connect -o "$log" "$run" -n 2 --host-ids 2 --timeout 100 -- "$rank" --coll all_reduce --iters 2
inet=$(grep -c 'AF_INET' "$log" || true)
# "connect(...) = 0", or strace's split form "<... connect resumed>) = 0", on an AF_INET socket: join
# the resumed halves to their calls by pid first.
blocking=$(awk '
  /connect\(.*AF_INET/ && /<unfinished/ { open[$1] = $0; next }
  /<\.\.\. connect resumed>/ { if ($1 in open) { line = open[$1] " " $0; delete open[$1]; if (line ~ /= 0$/) print line } next }
  /connect\(.*AF_INET/ && /= 0$/ { print }' "$log")
if (( inet == 0 )); then
  echo "FAIL: strace saw no AF_INET connect() at all (did the job run over ucx between two hosts?)"
  exit 1
fi
if [[ -n "$blocking" ]]; then
  echo "FAIL: blocking TCP connect() calls (returned 0 at once):"
  echo "$blocking"
  exit 1
fi
echo "OK: $inet AF_INET connect() calls, every one non-blocking"
