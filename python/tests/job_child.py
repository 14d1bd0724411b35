"""A rank of a small job started by test_jobs.py: python3 job_child.py MODE [UID_HEX NRANKS RANK]."""

import os
import sys
import time

import numpy as np

import hetccl


def main():
    mode = sys.argv[1]
    if mode in ("launcher", "init-finalize"):  # rank, size, id from the launcher's variables
        comm = hetccl.init()
    else:
        uid, n, rank = bytes.fromhex(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        comm = hetccl.Communicator(uid, n, rank)
    n, rank = comm.size, comm.rank
    if mode == "init-finalize":  # the same calls as hetccl-info --comm: init, finalize
        comm.finalize()
        comm.destroy()
        print(f"rank {rank}: init-finalize ok")
        return 0
    if mode == "launcher":
        x = np.full(4, rank + 1, np.int32)
        comm.all_reduce(x)
        assert (x == n * (n + 1) // 2).all(), x
        print(f"rank {rank} of {n}: {comm.launch.source} ok")
        comm.destroy()
        return 0
    victim = n - 1
    if rank == victim:
        if mode == "dead":
            os._exit(0)  # leaves without a word: the others must name this rank
        time.sleep(float(os.environ.get("CHILD_SILENT_SECONDS", "30")))  # "silent": alive, never calls
        os._exit(0)
    try:
        for _ in range(1000):
            x = np.ones(1024, np.float32)
            comm.all_reduce(x)
            time.sleep(0.01)
    except hetccl.RemoteError as e:
        print(f"rank {rank}: RemoteError: {e}")
        later_ok = False
        try:
            comm.barrier()
        except hetccl.RemoteError:
            later_ok = True  # every later call fails the same way
        comm.abort()
        return 0 if f"rank {victim}" in str(e) and later_ok else 3
    print(f"rank {rank}: no error")
    return 2


if __name__ == "__main__":
    sys.exit(main())
