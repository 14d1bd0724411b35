#!/usr/bin/env python3
"""Hostile traffic against hetccl listeners (run inside an attacker namespace by run_hostile.py).

Attacks every target host:port at once, each in its own threads, for --seconds: a port scan around the
targets, HTTP requests, random bytes, half-open handshakes (a partial ClientHello, then silence), full
handshakes with a wrong secret (the proof is an HMAC under a random key), and a flood of --flood
connections held open. Prints one summary line per attack: how many tries, and how the listener
answered (closed on us, still open at the end). Never writes to stdout otherwise.
"""
import argparse
import hashlib
import hmac
import os
import resource
import socket
import struct
import threading
import time

HANDSHAKE_MAGIC = 0x53484348  # 'HCHS'


def connect(host, port, timeout=2.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect((host, port))
    return s


def closed_by_peer(s, timeout):
    """True when the peer closes (EOF or reset) within `timeout` seconds; drains what it sends."""
    s.settimeout(timeout)
    end = time.time() + timeout
    try:
        while time.time() < end:
            if not s.recv(4096):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    except OSError:
        return True
    return False


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, attack, outcome):
        with self.lock:
            self.counts.setdefault(attack, {}).setdefault(outcome, 0)
            self.counts[attack][outcome] += 1


def port_scan(targets, stats, stop):
    for host, port in targets:
        for p in list(range(1, 1025)) + list(range(max(1, port - 200), min(65535, port + 200))):
            if stop.is_set():
                return
            try:
                connect(host, p, 0.2).close()
                stats.add("port scan", "open")
            except OSError:
                stats.add("port scan", "closed")


def http(target, stats, stop):
    while not stop.is_set():
        try:
            s = connect(*target)
            s.sendall(b"GET / HTTP/1.1\r\nHost: hetccl\r\nUser-Agent: hostile\r\n\r\n")
            stats.add("http", "closed on us" if closed_by_peer(s, 6) else "left open")
            s.close()
        except OSError:
            stats.add("http", "refused")
            time.sleep(0.05)


def random_bytes(target, stats, stop):
    while not stop.is_set():
        try:
            s = connect(*target)
            s.sendall(os.urandom(65536))
            stats.add("random bytes", "closed on us" if closed_by_peer(s, 6) else "left open")
            s.close()
        except OSError:
            stats.add("random bytes", "closed on us")
            time.sleep(0.05)


def half_open(target, stats, stop, held):
    while not stop.is_set():
        try:
            s = connect(*target)
            s.sendall(struct.pack("<IHHi", HANDSHAKE_MAGIC, 1, 1, 3) + os.urandom(8))  # 20 of 44 bytes
            held.append(s)
            stats.add("half-open handshake", "held")
        except OSError:
            stats.add("half-open handshake", "refused")
        stop.wait(0.2)


def wrong_secret(target, stats, stop):
    """A complete handshake (root or mesh purpose, any rank) whose proof uses a random key."""
    purpose = 1
    while not stop.is_set():
        try:
            s = connect(*target)
            hello = struct.pack("<IHHi", HANDSHAKE_MAGIC, 1, purpose, 5 if purpose == 2 else 1) + os.urandom(32)
            s.sendall(hello)
            reply = b""
            s.settimeout(6)
            while len(reply) < 76:
                chunk = s.recv(76 - len(reply))
                if not chunk:
                    break
                reply += chunk
            if len(reply) < 76:
                stats.add("wrong secret", "rejected before the proof")
            else:
                key = os.urandom(32)
                proof = hmac.new(key, b"hetccl bootstrap v1 client proof" + hello + reply[:44], hashlib.sha256).digest()
                s.sendall(proof)
                stats.add("wrong secret", "rejected" if closed_by_peer(s, 6) else "ACCEPTED")
            s.close()
        except OSError:
            stats.add("wrong secret", "rejected")
        purpose = 3 - purpose  # alternate root and mesh purposes
        stop.wait(0.05)


def flood(targets, count, stats, stop, held):
    for i in range(count):
        if stop.is_set():
            return
        host, port = targets[i % len(targets)]
        try:
            held.append(connect(host, port, 1.0))
            stats.add("flood", "connected")
        except OSError:
            stats.add("flood", "failed")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--target", action="append", required=True, help="host:port, repeatable")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--flood", type=int, default=1000)
    opts = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    targets = [(t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in opts.target]
    stats, stop, held = Stats(), threading.Event(), []
    threads = [threading.Thread(target=port_scan, args=(targets, stats, stop)),
               threading.Thread(target=flood, args=(targets, opts.flood, stats, stop, held))]
    for t in targets:
        threads += [threading.Thread(target=f, args=(t, stats, stop)) for f in (http, random_bytes, wrong_secret)]
        threads.append(threading.Thread(target=half_open, args=(t, stats, stop, held)))
    for t in threads:
        t.daemon = True
        t.start()
    time.sleep(opts.seconds)
    stop.set()
    for t in threads:
        t.join(10)
    for s in held:
        s.close()
    for attack, outcomes in sorted(stats.counts.items()):
        print(f"attack {attack}: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())), flush=True)


if __name__ == "__main__":
    main()
