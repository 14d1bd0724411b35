#!/usr/bin/env bash
# Runs every libFuzzer target of a HETCCL_FUZZ build for a fixed time each, starting from a copy of its
# committed seed corpus (the repository is never written). Targets run side by side, JOBS at a time.
# A crash, leak, sanitizer report or slow unit fails the run; its reproducer is kept under WORK and
# printed; a work dir of its own is removed when every target passed.
# Usage: run_fuzzers.sh BUILD_DIR [SECONDS_EACH=60] [JOBS=nproc] [WORK=mktemp -d]
#   reproduce: BUILD_DIR/tests/fuzz/fuzz_<name> WORK/<name>/crash-...
set -uo pipefail
build=$1
seconds=${2:-60}
jobs=${3:-$(nproc)}
own_work=0
[[ -n ${4:-} ]] || own_work=1
work=${4:-$(mktemp -d /tmp/hetccl-fuzz.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
targets=(unique_id descriptor frame handshake mesh tcp_wire shm_wire config_env agent_wire)

run_one() {  # run_one NAME: fuzz for $seconds, output in $work/NAME.log
  local name=$1 dir=$work/$1
  mkdir -p "$dir/corpus"
  cp "$here/corpus/$name"/* "$dir/corpus/" 2>/dev/null
  # -timeout: a unit slower than 10 s is a hang; -rss_limit_mb: memory use per input is bounded.
  "$build/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/" "$dir/corpus" >"$work/$name.log" 2>&1
  echo $? >"$work/$name.rc"
}
export -f run_one
export build seconds work here

echo "fuzz: ${#targets[@]} targets x ${seconds} s, $jobs at a time; work dir $work"
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'

failed=0
for name in "${targets[@]}"; do
  rc=$(cat "$work/$name.rc" 2>/dev/null || echo missing)
  runs=$(grep -oP 'stat::number_of_executed_units:\s*\K\d+' "$work/$name.log" | tail -1)
  cov=$(grep -oP '(?<=cov: )\d+' "$work/$name.log" | tail -1)
  corpus=$(ls "$work/$name/corpus" | wc -l)
  if [[ $rc == 0 ]]; then
    printf 'fuzz %-12s OK   %10s runs  cov %5s  corpus %4s\n' "$name" "${runs:-?}" "${cov:-?}" "$corpus"
  else
    failed=1
    printf 'fuzz %-12s FAIL (exit %s) after %s runs\n' "$name" "$rc" "${runs:-?}"
    grep -E 'ERROR|SUMMARY|==[0-9]+==|#[0-9]+ 0x|runtime error|Test unit written' "$work/$name.log" | head -30
    ls "$work/$name"/crash-* "$work/$name"/leak-* "$work/$name"/timeout-* "$work/$name"/oom-* 2>/dev/null
  fi
done
if [[ $failed == 0 && $own_work == 1 ]]; then rm -rf "$work"; fi  # kept (and printed above) on a failure
exit $failed
