#!/usr/bin/env bash
# Secrets never reach a log: a 2-rank job started the way mpirun/torchrun start one (HETCCL_SECRET, a
# fixed root address) runs a checked all-reduce with every log message on (HETCCL_DEBUG=TRACE, every
# subsystem), and hetccl-info prints its table; neither output may contain the secret (in any case), nor
# any run of 64 hex digits (a 32-byte key or id secret printed in hex). The job must succeed, so that the
# logs looked at are those of a real init.
# Usage: secrets_not_logged.sh BUILD_DIR
set -u
build=$1
secret=5ec12e7c0ffee0ddba11ad5eed5a1ade
port=$((20000 + RANDOM % 20000))
out=$(mktemp)
trap 'rm -f "$out" "$out".*' EXIT

export HETCCL_SECRET=$secret HETCCL_DEBUG=TRACE HETCCL_DEBUG_SUBSYS=ALL HETCCL_TIMEOUT=60
export HETCCL_COMM_ID=127.0.0.1:$port OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_SIZE=2
pids=()
for r in 0 1; do
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_LOCAL_RANK=$r timeout 120 "$build/tools/hetccl-perf" all_reduce \
    -b 4K -e 4K -n 2 -w 1 >"$out.$r" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=$?; done
timeout 60 "$build/tools/hetccl-info" >"$out.info" 2>&1 || status=$?
cat "$out".* >"$out"
lines=$(wc -l <"$out")
if [[ $status != 0 ]]; then
  cat "$out"
  echo "FAIL: the job or hetccl-info failed (exit $status)"
  exit 1
fi
if ((lines < 20)); then
  cat "$out"
  echo "FAIL: only $lines lines of output: logging was not on, so this test proves nothing"
  exit 1
fi
if grep -qi "$secret" "$out" || grep -qiE '[0-9a-f]{64}' "$out"; then
  grep -niE "$secret|[0-9a-f]{64}" "$out" | head
  echo "FAIL: a secret (or 64 hex digits) appears in the output above"
  exit 1
fi
if ! grep -q "HETCCL_SECRET.*(set, hidden)" "$out.info"; then
  grep -n "HETCCL_SECRET" "$out.info"
  echo "FAIL: hetccl-info does not print HETCCL_SECRET as '(set, hidden)'"
  exit 1
fi
echo "PASS: $lines lines of TRACE logs and hetccl-info output, no secret in them"
