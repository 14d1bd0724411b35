#!/usr/bin/env python3
"""Init failures that must be clear and prompt (issue 12 item 10), with real rank processes on this host.

  port_banner  another program holds the root's port and speaks first (an SSH-like banner): rank 0 fails
               at once with the bind error naming the address and port; rank 1 fails at once saying the
               program there is not hetccl (InvalidUsage). Before: rank 1 waited HETCCL_TIMEOUT, then
               "receive timed out with 76 bytes missing".
  port_silent  the same, but the program never sends anything: rank 1 cannot tell it from a stopped root
               and waits its deadline (HETCCL_TIMEOUT=4 here), then says the peer accepted but never
               answered the hetccl handshake and that another program may hold the port.
  secret_mismatch  rank 1 has another HETCCL_SECRET: it fails at once; rank 0 within HETCCL_AUTH_FAILURE_GRACE
               (5 s) names rank 1 and its failed authentication (HETCCL_TIMEOUT=60: not a wait for it).
  secret_mismatch_no_grace  the same with HETCCL_AUTH_FAILURE_GRACE=0: rank 0 at its deadline
               (HETCCL_TIMEOUT=4) names rank 1 and the failed handshake.
  emfile_root  8 ranks; rank 0 may open only 10 files (RLIMIT_NOFILE): its root's accept() fails with
               EMFILE; every rank fails at once with "Too many open files", the limit and `ulimit -n`.
               Before: the root thread stopped and every rank waited HETCCL_TIMEOUT, then "could not
               connect ... before the deadline".
emfile_root is skipped (said so, not passed) for a sanitizer build: the sanitizers' runtimes need file
descriptors of their own (UBSan checks memory through a pipe) and report false errors at 10.
"Prompt" (port_banner, emfile_root) is checked as "within 30 s" with HETCCL_TIMEOUT=60: not a
performance bound, only what separates an answer from a wait for the whole timeout on a loaded machine.

Usage: init_errors.py BUILD_DIR [case ...]      Exit status 0 passed, 1 failed.
"""
import os
import resource
import secrets
import socket
import subprocess
import sys
import threading
import time

PROMPT = 30.0


def foreign_listener(banner):
    """A non-hetccl program holding a port: accepts connections, optionally sends a banner, never more."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    held = []

    def serve():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            held.append(c)
            if banner:
                c.sendall(banner)

    threading.Thread(target=serve, daemon=True).start()
    return s, s.getsockname()[1]


def run_job(program, nranks, port, timeout, limits=None, secret_of=None, extra_env=None):
    secret = secrets.token_hex(16)
    procs, t0 = [], time.time()
    for r in range(nranks):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HETCCL_", "NCCL_", "OMPI_", "SLURM_"))}
        env.update({"OMPI_COMM_WORLD_RANK": str(r), "OMPI_COMM_WORLD_SIZE": str(nranks),
                    "OMPI_COMM_WORLD_LOCAL_RANK": str(r), "OMPI_COMM_WORLD_LOCAL_SIZE": str(nranks),
                    "HETCCL_COMM_ID": f"127.0.0.1:{port}", "HETCCL_TRANSPORT": "tcp", "HETCCL_TIMEOUT": str(timeout),
                    "HETCCL_SECRET": (secret_of or {}).get(r, secret)})
        env.update(extra_env or {})
        lim = (limits or {}).get(r)
        pre = (lambda n=lim: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))) if lim else None
        procs.append(subprocess.Popen([program, "--iters", "1"], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, preexec_fn=pre))
    results = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        err = next((l for l in out.splitlines() if l.startswith("ERROR ")), None)
        if err:
            _, _, at, code, msg = err.split(" ", 4)
            results.append((int(code), msg, float(at) - t0))
        else:
            results.append((None, out.strip()[-300:], time.time() - t0))
    return results


def expect(problems, rank, result, code, needles, prompt):
    got_code, msg, took = result
    print(f"  rank {rank}: code {got_code} after {took:.1f} s: {msg[:260]}")
    if got_code != code:
        problems.append(f"rank {rank}: code {got_code}, expected {code}")
    for n in needles:
        if n not in msg:
            problems.append(f"rank {rank}: message lacks '{n}'")
    if prompt and took > PROMPT:
        problems.append(f"rank {rank}: took {took:.1f} s (> {PROMPT} s): waited for the timeout")


SYSTEM_ERROR, INVALID_ARGUMENT, INVALID_USAGE, REMOTE_ERROR = 2, 4, 5, 6


def port_banner(program):
    s, port = foreign_listener(b"SSH-2.0-OpenSSH_9.6\r\n")
    r = run_job(program, 2, port, 60)
    s.close()
    p = []
    expect(p, 0, r[0], SYSTEM_ERROR, [f"127.0.0.1:{port}", "Address already in use", "choose a free port"], True)
    expect(p, 1, r[1], INVALID_USAGE, [f"127.0.0.1:{port}", "is not a hetccl", "SSH-"], True)
    return p


def port_silent(program):
    s, port = foreign_listener(None)
    r = run_job(program, 2, port, 4)
    s.close()
    p = []
    expect(p, 0, r[0], SYSTEM_ERROR, [f"127.0.0.1:{port}", "Address already in use"], True)
    expect(p, 1, r[1], REMOTE_ERROR, [f"127.0.0.1:{port}", "never answered the hetccl", "another program"], False)
    return p


def secret_mismatch(program):
    """Rank 1 has another HETCCL_SECRET: it fails at once saying the root does not hold its secret; rank 0 is
    told within HETCCL_AUTH_FAILURE_GRACE (default 5 s; HETCCL_TIMEOUT=60 here, so 'prompt' separates the two)
    that rank 1 did not join and that a client claiming rank 1 failed authentication. Before 2026-11-30: rank 0
    waited its whole HETCCL_TIMEOUT."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_job(program, 2, port, 60, secret_of={1: secrets.token_hex(16)})
    p = []
    expect(p, 0, r[0], REMOTE_ERROR, ["rank 1 of 2 did not join", "HETCCL_AUTH_FAILURE_GRACE",
                                      "a client claiming rank 1 failed authentication", "HETCCL_SECRET"], True)
    expect(p, 1, r[1], INVALID_ARGUMENT, ["failed authentication", "does not hold this job's secret"], True)
    return p


def secret_mismatch_no_grace(program):
    """The same with HETCCL_AUTH_FAILURE_GRACE=0 (no unauthenticated client may shorten init): rank 0 waits its
    deadline (HETCCL_TIMEOUT=4), then names rank 1 as missing *and* the failed handshake as the likely cause."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_job(program, 2, port, 4, secret_of={1: secrets.token_hex(16)}, extra_env={"HETCCL_AUTH_FAILURE_GRACE": "0"})
    p = []
    expect(p, 0, r[0], REMOTE_ERROR, ["rank 1 of 2 did not join", "failed the handshake", "HETCCL_SECRET"], False)
    expect(p, 1, r[1], INVALID_ARGUMENT, ["failed authentication", "does not hold this job's secret"], True)
    return p


def sanitized(program):
    """True for a binary built with a sanitizer (its runtime's entry points are in the executable)."""
    with open(program, "rb") as f:
        data = f.read()
    return any(s in data for s in (b"__asan_init", b"__tsan_init", b"__ubsan_handle"))


def emfile_root(program):
    if sanitized(program):
        print("  SKIPPED: sanitizer build (its runtime needs more than 10 file descriptors)")
        return []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_job(program, 8, port, 60, limits={0: 10})
    p = []
    for rank, res in enumerate(r):
        expect(p, rank, res, REMOTE_ERROR if rank else res[0], ["Too many open files", "RLIMIT_NOFILE", "ulimit -n"], True)
    return p


def main():
    program = os.path.join(sys.argv[1], "tests", "netns", "netns_fault_rank")
    cases = sys.argv[2:] or ["port_banner", "port_silent", "secret_mismatch", "secret_mismatch_no_grace", "emfile_root"]
    failed = 0
    for c in cases:
        print(f"{c}:", flush=True)
        problems = globals()[c](program)
        for pr in problems:
            print("  FAIL:", pr)
        print(f"{c}: {'FAIL' if problems else 'OK'}", flush=True)
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
