#!/usr/bin/env bash
# The device calls of this record (repository root on the device machine; binaries carried in devbin-tune/:
# before = the commit before the change, after = the change, both Release, stripped). PART 1: the built-in
# rule change, auto against the previous build's auto and every forced algorithm (4, 8, 16 one-rank domains,
# 8 ranks in one domain); PART 2: 12 and 16 ranks in one domain the same way, 8 one-rank domains again, then forced sweeps that write
# a tuning table, then auto against auto with that table and against auto again (the noise floor).
# Results end in $OUT/results.tgz (the device tool returns only a few files).
set -u
OUT=${OUT:?}
PART=${1:?usage: run.sh 1|2}
{ nproc; lscpu | grep -E 'Model name|^CPU\(s\)|NUMA node\(s\)'; uname -r; python3 --version; } >"$OUT/machine.txt" 2>&1
B="--build devbin-tune/after --before-build devbin-tune/before --reps 3 --iters 100 --warmup 10 -b 4K -e 4M -f 2"
sweep() {  # sweep NAME ARGS...
  local name=$1
  shift
  python3 bench/run_algo_sweep.py "$@" >"$OUT/$name.md" 2>"$OUT/$name.err"
  echo "== $name (exit $?)"
  grep -E '^\| [0-9]' "$OUT/$name.md" | awk -F'|' '{print $2, $(NF-2), $(NF-1)}' | tr -s ' ' | head -12
}
case $PART in
  1)
    for n in 4 8 16; do
      sweep n${n}_d${n}_shm $B --algos auto,ring,tree,rd,hier -n $n --domains $n --transport shm --write-tuning "$OUT/table.tuning"
    done
    sweep n8_d1_shm $B --algos auto,ring,tree,rd -n 8 --domains 1 --transport shm --write-tuning "$OUT/table.tuning"
    ;;
  2)
    for n in 12 16; do sweep n${n}_d1_shm $B --algos auto,ring,tree,rd -n $n --domains 1 --transport shm; done
    F="--build devbin-tune/after --reps 3 --iters 100 --warmup 10 -b 4K -e 4M -f 2 --write-tuning $OUT/table.tuning"
    sweep n8_d8_shm_run2 $B --write-tuning $OUT/table.tuning --algos auto,ring,tree,rd,hier -n 8 --domains 8 --transport shm
    sweep forced_n16_d16_shm $F --algos ring,tree,rd,hier -n 16 --domains 16 --transport shm
    sweep forced_n8_d1_shm $F --algos ring,tree,rd -n 8 --domains 1 --transport shm
    # auto, auto with the table, and auto again (identical setting: the noise floor), 5 runs each
    T="--build devbin-tune/after --reps 5 --iters 100 --warmup 10 -b 4K -e 4M -f 2 --algos auto"
    T="$T --variant table:HETCCL_TUNING_FILE=$OUT/table.tuning --variant same:HETCCL_IDLE_SPIN=auto"
    for n in 8 16; do sweep table_n${n}_d${n}_shm $T -n $n --domains $n --transport shm; done
    sweep table_n8_d1_shm $T -n 8 --domains 1 --transport shm
    ;;
esac
cd "$OUT" && tar czf results.tgz ./*.md ./*.tuning machine.txt && rm -f ./*.md ./*.err machine.txt
