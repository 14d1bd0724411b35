#!/usr/bin/env python3
"""A rank killed during init after it joined the rendezvous root; ranks started after the kill.

Four ranks (--nranks) of netns_fault_rank on this host (tcp over loopback): ranks 0, 1 and the victim (rank 2)
start and join the root (hosted by rank 0's process); two seconds later (the victim has sent its
descriptor and waits in init for rank 3) the victim is killed with SIGKILL; four seconds after that
(rank 0's init has failed and its process is exiting) rank 3 starts. Every survivor, rank 3 included, must fail init with hetcclRemoteError
naming rank 2, and rank 3 must do so promptly: the root (kept serving by rank 0's process after its own
init failed, see RendezvousRoot::kExitLingerMs) answers it with the failure at once, instead of rank 3 waiting the whole HETCCL_TIMEOUT for
a root that is gone and then blaming rank 0.

HETCCL_TIMEOUT is 60 s; "promptly" is checked as "within 30 s of rank 3's start". This is not a
performance bound: it only separates an answer from a wait for the full timeout (60 s) on a loaded
machine, with 30 s of room either way. Every survivor must also exit by itself with the failed-init
status (3), never by a signal: rank 0's process answers rank 3 while it exits (issue 27 item 1, a
segfault in RAND_bytes after OpenSSL's exit-time cleanup, 10/10 before the fix).

Usage: late_joiner.py BUILD_DIR [--nranks N] [--victim R] [--launcher mpirun|hetccl-run] [--repeat N] [--parallel P]
  --nranks: the last rank is the late one (default 4); --launcher hetccl-run gives the ranks a
  HETCCL_UNIQUE_ID instead of HETCCL_COMM_ID + HETCCL_SECRET (the crash above needed it: nothing in rank
  0's process had initialised OpenSSL before its root); --repeat runs the scenario N times, P at a time
  (each on its own port).  Exit status 0 passed, 1 failed.
"""
import argparse
import concurrent.futures
import os
import re
import secrets
import random
import signal
import socket
import struct
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


def launcher_id(port, secret):
    """hetccl-run's HETCCL_UNIQUE_ID (src/bootstrap/unique_id.cc): rank 0 starts the root at 127.0.0.1:port."""
    raw = bytearray(128)
    raw[0:8] = struct.pack("<IHH", 0x44494348, 1, 1)  # magic "HCID", layout 1, flag: rank 0 starts the root
    raw[8], raw[10:12], raw[12:16] = 4, struct.pack("<H", port), socket.inet_aton("127.0.0.1")
    raw[28:60] = bytes.fromhex(secret) * 2
    return raw.hex()


def start(program, rank, port, secret, launcher):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HETCCL_", "NCCL_", "OMPI_", "SLURM_")) and k not in
           ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env.update({"HETCCL_TRANSPORT": "tcp", "HETCCL_HOST_ID": f"node{rank}", "HETCCL_TIMEOUT": str(TIMEOUT)})
    if launcher == "hetccl-run":  # the id is decoded, not derived: rank 0's process uses no OpenSSL before its root
        env.update({"HETCCL_RANK": str(rank), "HETCCL_NRANKS": str(NRANKS), "HETCCL_LOCAL_RANK": str(rank),
                    "HETCCL_LOCAL_SIZE": str(NRANKS), "HETCCL_UNIQUE_ID": launcher_id(port, secret)})
    else:
        env.update({
            "OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(NRANKS),
            "OMPI_COMM_WORLD_LOCAL_RANK": str(rank), "OMPI_COMM_WORLD_LOCAL_SIZE": str(NRANKS),
            "HETCCL_COMM_ID": f"127.0.0.1:{port}", "HETCCL_SECRET": secret,
        })
    return subprocess.Popen([program, "--coll", "all_reduce", "--iters", "1"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def error_line(out):
    for line in out.splitlines():
        if line.startswith("ERROR "):
            return line
    return None


def run_once(program, victim, launcher):
    """One scenario; returns (report lines, problems)."""
    port, secret = free_port(), secrets.token_hex(16)
    survivors = [r for r in range(NRANKS) if r not in (victim, LATE)]
    early = {r: start(program, r, port, secret, launcher) for r in survivors + [victim]}
    time.sleep(2.0)  # the victim has connected to the root and sent its descriptor (it then waits for rank 3)
    early[victim].send_signal(signal.SIGKILL)
    early[victim].wait()
    time.sleep(4.0)  # rank 3 comes after the root learnt of the failure (and after rank 0's init returned)
    t = time.time()
    late = start(program, LATE, port, secret, launcher)
    problems = []
    try:
        out, _ = late.communicate(timeout=TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        late.kill()
        out, _ = late.communicate()
        problems.append(f"rank {LATE} did not exit")
    took = time.time() - t
    outs = {LATE: out}
    codes = {LATE: late.returncode}
    for r in survivors:
        try:
            outs[r], _ = early[r].communicate(timeout=TIMEOUT + 30)
        except subprocess.TimeoutExpired:
            early[r].kill()
            outs[r], _ = early[r].communicate()
            problems.append(f"rank {r} did not exit")
        codes[r] = early[r].returncode
    report = []
    for r, o in sorted(outs.items()):
        err = error_line(o)
        report.append(f"rank {r}: exit status {codes[r]}: {err}")
        if codes[r] != 3:
            problems.append(f"rank {r} exited with status {codes[r]} (negative: killed by that signal), "
                            "expected 3 (init failed, clean exit)")
        if not err:
            problems.append(f"rank {r}: no error reported:\n{o}")
            continue
        _, phase, _, code, msg = err.split(" ", 4)
        if phase != "init" or int(code) != REMOTE_ERROR:
            problems.append(f"rank {r}: {phase} code {code}, expected an init hetcclRemoteError ({REMOTE_ERROR})")
        if not re.search(rf"\brank {victim}\b", msg):
            problems.append(f"rank {r}: the error does not name rank {victim}: {msg}")
    report.append(f"rank {LATE} (started after the kill) failed after {took:.1f} s")
    if took > PROMPT:
        problems.append(f"rank {LATE} took {took:.1f} s (> {PROMPT} s): it waited for the timeout instead of an answer")
    return report, problems


def main():
    global NRANKS, LATE
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("--victim", type=int, default=VICTIM)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--nranks", type=int, default=4)
    ap.add_argument("--launcher", choices=["mpirun", "hetccl-run"], default="mpirun")
    args = ap.parse_args()
    NRANKS, LATE = args.nranks, args.nranks - 1
    if not 1 <= args.victim < LATE:
        ap.error(f"--victim must be a rank between 1 and {LATE - 1} (rank 0 runs the root, rank {LATE} is late)")
    program = os.path.join(args.build_dir, "tests", "netns", "netns_fault_rank")
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        runs = [pool.submit(run_once, program, args.victim, args.launcher) for _ in range(args.repeat)]
        for i, run in enumerate(runs):
            report, problems = run.result()
            print(f"-- run {i + 1} of {args.repeat} (victim rank {args.victim})")
            for line in report + [f"FAIL: {p}" for p in problems]:
                print(line)
            failed += bool(problems)
    print(f"late joiner: {args.repeat - failed} of {args.repeat} runs passed: " + ("FAIL" if failed else "OK"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
