#!/usr/bin/env bash
# rank_env.sh CMD ARGS... : torchrun's per-rank wrapper (torchrun --no_python bash rank_env.sh python3 x.py).
# Before exec'ing CMD it applies what torchrun cannot set per rank:
#   RANK_PRELOAD=LIB   put LIB first in LD_PRELOAD (hetccl's drop-in libnccl.so.2)
#   RANK_DOMAINS=K     HETCCL_DOMAIN=d<g % K>, g = this rank's GPU (LOCAL_RANK % RANK_GPUS), so with K GPUs
#                      every GPU stands for one vendor domain (2 GPUs, 4 ranks: ranks 0,2 in d0, 1,3 in d1)
set -euo pipefail
if [[ -n "${RANK_DOMAINS:-}" ]]; then
  gpus=${RANK_GPUS:?RANK_GPUS must be set with RANK_DOMAINS}
  export HETCCL_DOMAIN="d$(( (LOCAL_RANK % gpus) % RANK_DOMAINS ))"
fi
if [[ -n "${RANK_PRELOAD:-}" ]]; then
  export LD_PRELOAD="$RANK_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}"
fi
exec "$@"
