#!/usr/bin/env python3
"""A rank killed during init after it joined the rendezvous root; ranks started after the kill.

Four ranks of netns_fault_rank on this host (tcp over loopback): ranks 0, 1 and the victim (rank 2)
start and join the root (hosted by rank 0's process); two seconds later (the victim has sent its
descriptor and waits in init for rank 3) the victim is killed with SIGKILL; four seconds after that
(rank 0's init has failed and its process is exiting) rank 3 starts. Every survivor, rank 3 included, must fail init with hetcclRemoteError
naming rank 2, and rank 3 must do so promptly: the root (kept serving by rank 0's process after its own
init failed, see RendezvousRoot::kExitLingerMs) answers it with the failure at once, instead of rank 3 waiting the whole HETCCL_TIMEOUT for
a root that is gone and then blaming rank 0.

HETCCL_TIMEOUT is 60 s; "promptly" is checked as "within 30 s of rank 3's start". This is not a
performance bound: it only separates an answer from a wait for the full timeout (60 s) on a loaded
machine, with 30 s of room either way.

Usage: late_joiner.py BUILD_DIR      Exit status 0 passed, 1 failed.
"""
import os
import re
import secrets
import random
import signal
import socket
import subprocess
import sys
import time

NRANKS = 4
VICTIM = 2
LATE = 3
TIMEOUT = 60
PROMPT = 30.0
REMOTE_ERROR = 6


def free_port():
    """A loopback port free a moment ago, below the kernel's ephemeral range when possible (as
    src/net/free_port.cc: no other process's bind(0) or outgoing connection takes it before rank 0 binds)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    rng = random.SystemRandom()
    for _ in range(64 if low > 10000 else 0):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", rng.randrange(10000, low)))
            except OSError:
                continue
            return s.getsockname()[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(program, rank, port, secret):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HETCCL_", "NCCL_", "OMPI_", "SLURM_")) and k not in
           ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env.update({
        "OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(NRANKS),
        "OMPI_COMM_WORLD_LOCAL_RANK": str(rank), "OMPI_COMM_WORLD_LOCAL_SIZE": str(NRANKS),
        "HETCCL_COMM_ID": f"127.0.0.1:{port}", "HETCCL_SECRET": secret, "HETCCL_TRANSPORT": "tcp",
        "HETCCL_HOST_ID": f"node{rank}", "HETCCL_TIMEOUT": str(TIMEOUT),
    })
    return subprocess.Popen([program, "--coll", "all_reduce", "--iters", "1"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def error_line(out):
    for line in out.splitlines():
        if line.startswith("ERROR "):
            return line
    return None


def main():
    program = os.path.join(sys.argv[1], "tests", "netns", "netns_fault_rank")
    port, secret = free_port(), secrets.token_hex(16)
    early = {r: start(program, r, port, secret) for r in (0, 1, VICTIM)}
    time.sleep(2.0)  # the victim has connected to the root and sent its descriptor (it then waits for rank 3)
    early[VICTIM].send_signal(signal.SIGKILL)
    early[VICTIM].wait()
    time.sleep(4.0)  # rank 3 comes after the root learnt of the failure (and after rank 0's init returned)
    t = time.time()
    late = start(program, LATE, port, secret)
    problems = []
    try:
        out, _ = late.communicate(timeout=TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        late.kill()
        out, _ = late.communicate()
        problems.append(f"rank {LATE} did not exit")
    took = time.time() - t
    outs = {LATE: out}
    for r in (0, 1):
        try:
            outs[r], _ = early[r].communicate(timeout=TIMEOUT + 30)
        except subprocess.TimeoutExpired:
            early[r].kill()
            outs[r], _ = early[r].communicate()
            problems.append(f"rank {r} did not exit")
    for r, o in sorted(outs.items()):
        err = error_line(o)
        print(f"rank {r}: {err}")
        if not err:
            problems.append(f"rank {r}: no error reported:\n{o}")
            continue
        _, phase, _, code, msg = err.split(" ", 4)
        if phase != "init" or int(code) != REMOTE_ERROR:
            problems.append(f"rank {r}: {phase} code {code}, expected an init hetcclRemoteError ({REMOTE_ERROR})")
        if not re.search(rf"\brank {VICTIM}\b", msg):
            problems.append(f"rank {r}: the error does not name rank {VICTIM}: {msg}")
    print(f"rank {LATE} (started after the kill) failed after {took:.1f} s")
    if took > PROMPT:
        problems.append(f"rank {LATE} took {took:.1f} s (> {PROMPT} s): it waited for the timeout instead of an answer")
    for p in problems:
        print("FAIL:", p)
    print("late joiner: " + ("FAIL" if problems else "OK"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
