"""A rank of a small job started by test_jobs.py: python3 job_child.py MODE [UID_HEX NRANKS RANK]."""

import os
import signal
import sys
import time

import numpy as np

import hetccl


def main():
    mode = sys.argv[1]
    if mode == "sigint":  # Python's own SIGINT handler, also where the test runs with SIGINT ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
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
    if mode == "sigint":
        return sigint(comm, n, rank)
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


def sigint(comm, n, rank):
    """Rank 0 blocks in an all_reduce that rank 1 does not join and gets SIGINT from the test: it must raise
    KeyboardInterrupt (not a HetcclError, not at HETCCL_TIMEOUT), the communicator aborted. Rank 1 waits
    for the test's go file (rank 0 has exited then) and must get a RemoteError naming rank 0."""
    if rank == 1:
        go = os.environ["CHILD_GO_FILE"]
        deadline = time.monotonic() + 120
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.05)
        # The same call as rank 0's. Rank 0 had sent its contribution before it was interrupted, so the first
        # one may complete (with the right sum); the next one cannot.
        for i in range(3):
            try:
                x = comm.all_reduce(np.ones(1024, np.float32))
            except hetccl.RemoteError as e:
                print(f"rank 1: call {i + 1}: RemoteError: {e}", flush=True)
                comm.abort()
                return 0 if "rank 0" in str(e) else 3
            if not (x == 2).all():
                print(f"rank 1: call {i + 1} returned a wrong sum {x[:4]}", flush=True)
                return 8
        print("rank 1: no error", flush=True)
        return 2
    x = np.ones(1024, np.float32)
    print("rank 0: blocked in all_reduce", flush=True)
    try:
        comm.all_reduce(x)
    except KeyboardInterrupt:
        print(f"rank 0: KeyboardInterrupt at {time.monotonic():.6f}", flush=True)
    except hetccl.HetcclError as e:
        print(f"rank 0: {type(e).__name__} instead of KeyboardInterrupt: {e}", flush=True)
        return 4
    else:
        print("rank 0: all_reduce returned", flush=True)
        return 5
    try:
        comm.all_reduce(x)
    except hetccl.InvalidUsageError as e:
        print(f"rank 0: later call: InvalidUsageError: {e}", flush=True)
        if "aborted" not in str(e) or "SIGINT" not in str(e):
            return 6
    else:
        return 7
    comm.abort()  # already aborted: nothing left to do, no error
    comm.destroy()
    print("rank 0: exits", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
