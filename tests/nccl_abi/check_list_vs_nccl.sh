#!/usr/bin/env bash
# check_list_vs_nccl.sh LIST [REAL_LIBNCCL] : the committed API list is exactly what a real NCCL 2.28 library
# exports (its ncclX names, without NCCL-internal ones), so the list misses nothing. Skips (exit 77) where
# no real NCCL 2.28 is installed.
set -euo pipefail
list=$1 real=${2:-/usr/local/cuda/lib64/libnccl.so.2}
if [[ ! -r "$real" ]]; then echo "SKIP: no NCCL library at $real"; exit 77; fi
version=$(strings "$real" | grep -m1 -oE '^NCCL version 2\.[0-9]+' || true)
[[ -z "$version" || "$version" == "NCCL version 2.28" ]] || { echo "SKIP: $real is $version, not 2.28"; exit 77; }
internal='^ncclResetDebugInitInternal$'
theirs=$(nm -D --defined-only "$real" | awk '{print $3}' | grep '^nccl' | grep -Ev "$internal" | sort)
ours=$(grep -v '^#' "$list" | grep -v '^$' | sort)
if [[ "$theirs" != "$ours" ]]; then
  echo "FAIL: $list (<) differs from the names $real exports (>):"
  diff <(echo "$ours") <(echo "$theirs") || true
  exit 1
fi
echo "OK: $list matches the $(echo "$ours" | wc -l) API names of $real"
