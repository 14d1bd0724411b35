// Who am I? Every tool and multi-process test program learns its rank, the job size and the unique id
// from the launcher that started it, through readLaunchEnv().
//
// Launchers understood, tried in this order (the first whose variables are present wins):
//   hetccl-run  HETCCL_RANK, HETCCL_NRANKS, HETCCL_LOCAL_RANK, HETCCL_LOCAL_SIZE, HETCCL_UNIQUE_ID (hex)
//   torchrun    RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; the root
//               listens on MASTER_ADDR at MASTER_PORT+1 (torch's own store holds MASTER_PORT)
//   Open MPI    OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE}; root address from HETCCL_COMM_ID
//   Slurm       SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID + SLURM_STEP_TASKS_PER_NODE
//               (or SLURM_TASKS_PER_NODE); root from HETCCL_COMM_ID, else the first host of
//               SLURM_STEP_NODELIST (or SLURM_NODELIST) at port slurmRootPort(SLURM_JOB_ID)
// Launchers other than hetccl-run cannot hand out a secret, so every rank reads the same one from
// HETCCL_SECRET, and rank 0 starts the rendezvous root inside init.
#pragma once

#include <string>

#include "hetccl/hetccl.h"

namespace hetccl::tools {

struct LaunchEnv {
  int rank = 0;        ///< in [0, size)
  int size = 0;        ///< >= 1
  int localRank = 0;   ///< rank among the processes of this host, in [0, localSize)
  int localSize = 0;   ///< processes on this host, in [1, size]
  hetcclUniqueId id{}; ///< the same bytes on every rank of the job; pass to hetcclCommInitRank
  std::string source;  ///< which launcher: "hetccl-run", "torchrun", "openmpi" or "slurm"
};

/// Reads the launch environment of this process. Every value is validated (numbers parse fully, rank
/// in [0, size), local rank in [0, local size)). Throws hetccl::InvalidArgument (a std::runtime_error)
/// naming the missing or garbled variable and what was expected, or saying that no launcher was found.
LaunchEnv readLaunchEnv();

/// The root port used under Slurm without HETCCL_COMM_ID: 15000 + jobId % 15000, below Linux's
/// ephemeral range so that it is normally free, and different for jobs sharing a node.
int slurmRootPort(long long jobId);

}  // namespace hetccl::tools
