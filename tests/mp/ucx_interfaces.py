#!/usr/bin/env python3
"""The ucx transport uses only the interfaces HETCCL_SOCKET_IFNAME allows (issue 27 item 6).

Two ranks of netns_fault_rank as two "hosts" of this machine (HETCCL_HOST_ID), HETCCL_UCX=on (ucx
between the hosts), HETCCL_SOCKET_IFNAME=lo, UCX's own settings left alone (UCX_TLS unset: all of its
transports). After a few all-reduces rank 1 holds with its communicator alive (--hold finalize); then
every TCP socket of both processes (their descriptors matched by inode to /proc/PID/net/tcp and tcp6)
must have a loopback local address: no listener on a wildcard or on eth0's address, no connection from
it. Before the fix UCX's tcp transport listened and connected on every interface that is up.

Skipped (77) without libucp, or when no interface but loopback is up (nothing could leak).
Cost: about 3 s (two ranks' init over ucx, 20 all-reduces, one look at /proc).

Usage: ucx_interfaces.py BUILD_DIR      Exit status 0 passed, 1 failed, 77 skipped.
"""
import ipaddress
import os
import secrets
import socket
import subprocess
import sys
import time

NRANKS = 2
TIMEOUT = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(program, rank, port, secret):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HETCCL_", "NCCL_", "OMPI_", "SLURM_", "UCX_")) and k not in
           ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env.update({
        "OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(NRANKS),
        "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
        "HETCCL_COMM_ID": f"127.0.0.1:{port}", "HETCCL_SECRET": secret, "HETCCL_UCX": "on",
        "HETCCL_SOCKET_IFNAME": "lo", "HETCCL_HOST_ID": f"node{rank}", "HETCCL_TIMEOUT": str(TIMEOUT),
    })
    return subprocess.Popen([program, "--coll", "all_reduce", "--iters", "20", "--hold", "finalize", "--victim", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def hex_address(text):
    """/proc/net/tcp{,6} local address "0100007F:1F90" (32-bit words in host order) -> (ip, port)."""
    addr, port = text.split(":")
    raw = b"".join(int(addr[i:i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(addr), 8))
    return ipaddress.ip_address(raw), int(port, 16)


def sockets_of(pid):
    """(family, local ip, port, state) of every TCP socket process `pid` holds."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if cols[9] in inodes:
                    ip, port = hex_address(cols[1])
                    found.append((table, ip, port, "LISTEN" if cols[3] == "0A" else f"state {cols[3]}"))
    return found


def loopback(ip):
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def main():
    if subprocess.run("ldconfig -p | grep -q 'libucp\\.so\\.0 '", shell=True).returncode != 0:
        print("ucx_interfaces: libucp.so.0 is not installed: skipped")
        return 77
    others = [n for _, n in socket.if_nameindex() if n != "lo"]
    if not others:
        print("ucx_interfaces: no interface but lo: skipped")
        return 77
    program = os.path.join(sys.argv[1], "tests", "netns", "netns_fault_rank")
    port, secret = free_port(), secrets.token_hex(16)
    ranks = [start(program, r, port, secret) for r in range(NRANKS)]
    problems, checked = [], 0
    try:
        deadline = time.time() + TIMEOUT
        for line in ranks[1].stdout:  # rank 1 holds with its communicator alive once the loop is done
            print("rank 1:", line.rstrip())
            if line.startswith("T hold"):
                break
            if time.time() > deadline:
                break
        else:
            problems.append("rank 1 ended before it held (see its output above)")
        if not problems:
            time.sleep(0.5)  # let any connection UCX makes in the background appear
            for r, p in enumerate(ranks):
                for table, ip, sport, state in sockets_of(p.pid):
                    checked += 1
                    print(f"rank {r}: {table} {ip} port {sport} {state}")
                    if not loopback(ip):
                        problems.append(f"rank {r}: {table} socket on {ip} port {sport} ({state}) "
                                        f"outside HETCCL_SOCKET_IFNAME=lo")
            if checked == 0:
                problems.append("no TCP socket found at all: the check saw nothing")
    finally:
        for p in ranks:
            p.kill()
            p.wait()
    for p in problems:
        print("FAIL:", p)
    print(f"ucx interfaces: {checked} sockets checked: " + ("FAIL" if problems else "OK"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
