#!/usr/bin/env python3
"""Hostile traffic against the bootstrap of a 4-rank job whose ranks are separate hosts (namespaces).

Ranks 0-2 start and wait in init (the root and their mesh listeners are open); an attacker host on the
same network (hostile_client.py) then hits the root port and every listening port of those ranks with a
port scan, HTTP requests, random bytes, half-open handshakes, handshakes with a wrong secret and a flood
of --flood connections; rank 3 starts --late seconds later, while the attack goes on. The job must
initialise and run its collectives exactly (exit 0 on every rank), no wrong-secret handshake may be
accepted, and no file descriptor or shared-memory segment may be left. The same job without the attack
is the baseline: the init time added by the attack is printed as a benchmark note (not pass/fail; the
goal is <= 1 s). Transport (tcp) listeners exist only between bootstrap and the first collective; their
hostile-client handling is tested in-process (tests/fault, fault_hostile_transport).

Usage: run_hostile.py --build BUILD_DIR [--runs 3] [--flood 1000] [--late 2]
Exit status: 0 passed, 1 a check failed, 77 network namespaces are unavailable (skipped).
"""
import argparse
import os
import secrets
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402
from run_faults import Proc, rank_env, shm_segments  # noqa: E402

NRANKS = 4


def job(opts, cluster, attacker_ns, attack):
    """Runs one job; returns (problems, init seconds after the last rank started, attacker report)."""
    secret = secrets.token_hex(16)
    before = shm_segments()
    args = lambda r: cluster.prefix(r) + [opts.program, "--coll", "all_reduce", "--iters", "10", "--count", "4096"]
    env = lambda r: rank_env(r, NRANKS, secret, 30)
    procs = [Proc(r, args(r), env(r)) for r in range(NRANKS - 1)]
    problems, report, client = [], "", None
    deadline = time.time() + 30
    for p in procs:
        if p.wait_event("init_begin", deadline) is None:
            problems.append(f"rank {p.rank} did not start")
    time.sleep(0.3)  # the root and the mesh listeners are bound by now
    targets = [f"{cluster.addr(r)}:{port}" for r in range(NRANKS - 1) for port in cluster.listening_ports(r)]
    if attack:
        cmd = ["ip", "netns", "exec", attacker_ns, sys.executable, os.path.join(os.path.dirname(__file__), "hostile_client.py"),
               "--seconds", str(opts.late + 3), "--flood", str(opts.flood)]
        for t in targets:
            cmd += ["--target", t]
        client = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(opts.late)
    last = Proc(NRANKS - 1, args(NRANKS - 1), env(NRANKS - 1))
    procs.append(last)
    for p in procs:
        try:
            p.p.wait(max(1, deadline + 30 - time.time()))
        except subprocess.TimeoutExpired:
            problems.append(f"rank {p.rank} hung")
        p.kill()
    if client:
        report = client.communicate(timeout=60)[0]
        if "ACCEPTED" in report:
            problems.append("a handshake with a wrong secret was accepted")
    for p in procs:
        if p.p.returncode != 0:
            problems.append(f"rank {p.rank}: exit {p.p.returncode}: " + " | ".join(p.lines[-5:]))
        fds = p.find("FDS ")
        if fds and int(fds[0].split()[2]) > int(fds[0].split()[1]):
            problems.append(f"rank {p.rank}: file descriptors left open: {fds[0]}")
    leaked = shm_segments() - before
    if leaked:
        problems.append(f"shared-memory segments left: {sorted(leaked)}")
    done = [p.events.get("init_done") for p in procs]
    start = last.events.get("init_begin")
    took = max(done) - start if all(done) and start else None
    return problems, took, report, targets


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--runs", type=int, default=3, help="jobs with and without the attack")
    ap.add_argument("--flood", type=int, default=1000, help="connections of the flood")
    ap.add_argument("--late", type=float, default=2.0, help="seconds rank 3 starts after the others")
    opts = ap.parse_args()
    why = netns.unavailable_reason()
    if why:
        print(f"netns hostile: SKIPPED: {why}")
        return 77
    opts.program = os.path.join(opts.build, "tests", "netns", "netns_fault_rank")
    cluster = netns.Cluster(f"{os.getpid() % 100000}h", NRANKS)
    cluster.create()
    failed = 0
    times = {False: [], True: []}
    try:
        attacker = cluster.add_host("att", 100)
        for i in range(opts.runs):
            for attack in (False, True):
                problems, took, report, targets = job(opts, cluster, attacker, attack)
                label = "attack  " if attack else "baseline"
                print(f"netns hostile: run {i} {label}: init {took if took is None else round(took, 3)} s after the "
                      f"last rank started; {'FAIL' if problems else 'OK'}", flush=True)
                if attack and i == 0:
                    print(f"    targets: {' '.join(targets)}")
                    for line in report.splitlines():
                        print(f"    {line}")
                for p in problems:
                    print(f"    {p}")
                failed += bool(problems)
                if took is not None:
                    times[attack].append(took)
    finally:
        cluster.destroy()
    if times[False] and times[True]:
        base, hit = statistics.median(times[False]), statistics.median(times[True])
        print(f"netns hostile: benchmark note: init after the last rank arrived: median {base:.3f} s without, "
              f"{hit:.3f} s under attack: +{hit - base:.3f} s (goal <= 1 s; not a pass/fail check)")
    print(f"netns hostile: {2 * opts.runs} jobs, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
