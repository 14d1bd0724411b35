#!/usr/bin/env bash
# rank_env.sh CMD ARGS... : torchrun's per-rank wrapper (torchrun --no_python bash rank_env.sh python3 x.py).
# Before exec'ing CMD it applies what torchrun cannot set per rank:
#   RANK_PRELOAD=LIB   put LIB first in LD_PRELOAD (hetccl's drop-in libnccl.so.2)
#   RANK_PRELOAD_ODD=LIB  odd LOCAL_RANKs preload LIB instead (e.g. the drop-in librccl.so: both builds in one job)
#   RANK_DOMAINS=K     HETCCL_DOMAIN=d<LOCAL_RANK * K / LOCAL_WORLD_SIZE>: K blocks of consecutive ranks. The
#                      GPU is LOCAL_RANK % RANK_GPUS, so with 2 GPUs and 4 ranks d0 = ranks 0,1 on GPUs 0,1 and
#                      d1 = ranks 2,3 on GPUs 0,1: every domain has distinct GPUs, as a vendor group has (NCCL
#                      refuses two ranks of one communicator on one GPU, e.g. in a new_group inside a domain)
set -euo pipefail
if [[ -n "${RANK_DOMAINS:-}" ]]; then
  export HETCCL_DOMAIN="d$(( LOCAL_RANK * RANK_DOMAINS / ${LOCAL_WORLD_SIZE:?torchrun sets LOCAL_WORLD_SIZE} ))"
fi
if [[ -n "${RANK_PRELOAD_ODD:-}" ]] && (( LOCAL_RANK % 2 == 1 )); then
  RANK_PRELOAD=$RANK_PRELOAD_ODD
fi
if [[ -n "${RANK_PRELOAD:-}" ]]; then
  export LD_PRELOAD="$RANK_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}"
fi
exec "$@"
