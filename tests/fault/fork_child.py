#!/usr/bin/env python3
"""A rank with a live forked child dies: its peer names it within 10 s (issue 27 item 5).

Runs fault_fork_child (see tests/fault/fork_child.cc) as two "hosts" of this machine over TRANSPORT
(tcp, or ucx with UCX_TLS=tcp), HETCCL_TIMEOUT 60 s. Rank 1 forks a child that stays alive, then dies.
Checks: the child's use of the inherited communicator fails with hetcclInvalidUsage naming fork() (a
child that never reports, hung or crashed in that call, fails the run);
rank 0 fails with hetcclRemoteError naming rank 1 within 10 s of the kill (before the fix the child's
inherited copies of every socket kept the connections open: no EOF, rank 0 waited the whole timeout).
Cost: about 2 s when it passes (60 s when it fails).

Usage: fork_child.py BUILD_DIR tcp|ucx      Exit status 0 passed, 1 failed, 77 skipped (ucx without libucp).
"""
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time

TIMEOUT, BOUND, INVALID_USAGE, REMOTE_ERROR = 60, 10.0, 5, 6


def main():
    build, transport = sys.argv[1], sys.argv[2]
    if transport == "ucx" and subprocess.run("ldconfig -p | grep -q 'libucp\\.so\\.0 '", shell=True).returncode:
        print("fork_child: libucp.so.0 is not installed: skipped")
        return 77
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    secret = secrets.token_hex(16)
    ranks = []
    for rank in range(2):
        # UCX_MEM_EVENTS passes through: the TSan stage sets it (UCX's memory hooks crash under TSan).
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("HETCCL_", "NCCL_", "OMPI_", "UCX_")) or k == "UCX_MEM_EVENTS"}
        env.update({"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": "2",
                    "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
                    "HETCCL_COMM_ID": f"127.0.0.1:{port}", "HETCCL_SECRET": secret, "HETCCL_TRANSPORT": transport,
                    "HETCCL_HOST_ID": f"node{rank}", "HETCCL_TIMEOUT": str(TIMEOUT)})
        if transport == "ucx":
            env["UCX_TLS"] = "tcp"
        ranks.append(subprocess.Popen([os.path.join(build, "tests", "fault", "fault_fork_child")], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    problems, child, forked, killed_at = [], None, None, None
    for line in ranks[1].stdout:  # the child shares this pipe: stop reading at the parent's last line
        print("rank 1:", line.rstrip())
        if line.startswith("FORKED "):
            forked = int(line.split()[1])
        if line.startswith("CHILD "):
            _, pid, code, msg = (line.rstrip().split(" ", 3) + [""])[:4]
            child = int(pid)
            if int(code) != INVALID_USAGE or "fork" not in msg:
                problems.append(f"the forked child's all-reduce returned {code} ({msg}), "
                                f"expected hetcclInvalidUsage ({INVALID_USAGE}) naming fork()")
        if line.startswith("T kill "):
            killed_at = float(line.split()[2])
            break
    try:
        out, _ = ranks[0].communicate(timeout=TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        ranks[0].kill()
        out, _ = ranks[0].communicate()
        problems.append("rank 0 did not exit")
    if child is None:
        problems.append("the forked child never reported its call on the inherited communicator (it hung or crashed)")
    for pid in {child, forked} - {None}:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    ranks[1].wait()
    print(out.rstrip())
    err = next((l for l in out.splitlines() if l.startswith("ERROR ")), None)
    if killed_at is None or err is None:
        problems.append("rank 1 was not killed, or rank 0 reported no error")
    else:
        _, at, code, msg = (err.split(" ", 3) + [""])[:4]
        took = float(at) - killed_at
        print(f"rank 0 failed {took:.2f} s after rank 1 was killed")
        if int(code) != REMOTE_ERROR or not re.search(r"\brank 1\b", msg):
            problems.append(f"rank 0: code {code}, expected hetcclRemoteError ({REMOTE_ERROR}) naming rank 1: {msg}")
        if took > BOUND:
            problems.append(f"rank 0 named the dead rank after {took:.1f} s (> {BOUND} s): the child kept its sockets")
    for p in problems:
        print("FAIL:", p)
    print(f"fork child ({transport}): " + ("FAIL" if problems else "OK"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
