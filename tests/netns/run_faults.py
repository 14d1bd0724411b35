#!/usr/bin/env python3
"""Fault injection with every rank a separate host (its own network namespace, tcp or ucx between ranks).

Every case starts a 3-rank job (netns_fault_rank), injects one fault into one rank (the victim) at one
phase, and checks every survivor: it returns hetcclRemoteError naming the victim (rank, and host once the
victim has joined), within the promised bound, tears down and exits by itself, leaks no file descriptor,
and no hetccl shared-memory segment is left. Faults: kill (SIGKILL), term (SIGTERM), stop (SIGSTOP),
linkdown (its eth0 down), drop (nftables drops all its packets); degrade (random loss + delay) must
not fail the job at all. Phases: init (the victim has not joined while the others wait in init),
init_mid (during the victim's own init), coll (during a collective; runs rotate over seven kinds),
split (the others wait in hetcclCommSplit, colour rank % 2), finalize (the others wait in
hetcclCommFinalize), split_mid / finalize_mid (the victim is hit inside that call, 0-20 ms after it began;
a survivor whose call completed before the fault may succeed). --nranks sets the job size (default 3; the
wide set runs at 4 and 8). Inside a split the child communicator numbers ranks anew, so there the
victim's host (one per rank) identifies it.

Bounds (HETCCL_TIMEOUT = T; heartbeat period P = clamp(T/20, 20 ms, 500 ms)):
  dead peer (kill, term)                  error <= 10 s after the fault
  silent peer (stop, linkdown, drop)      T - P <= error - fault <= T + 1 s
  victim never joined (init)              T <= error - earliest survivor's init start (the root's deadline),
                                          error - survivor's init start <= T + 1 s
  victim holds before split (split)       as finalize, from the survivor's split start
  victim hit inside split/finalize (_mid) dead: error <= 10 s after the fault; silent: <= T + 1 s after it
  victim holds before finalize (finalize) T <= error - survivor's finalize start <= T + 1 s (silent faults;
                                          the victim stops taking part when it holds, before the fault)
Times count from the start of the injection. Upper bounds get --slack seconds (default 1.0) on top: a
loaded 2-core CI machine runs several jobs at once, and waiting ranks poll busily; lower bounds get 50 ms
for clock reading; a bound counted from the injection holds from its start (lower) and from its end
(upper), as the fault took effect somewhere in between (the injection's duration is printed per case).
Detection times are printed per case; they are a correctness check with slack, not a benchmark.

Transport (--transport): tcp (default: HETCCL_UCX=off, so auto picks tcp between hosts) or ucx
(HETCCL_UCX=on: auto must pick ucx between hosts, init fails otherwise; UCX_TLS=tcp and
HETCCL_NET_DEVICES=eth0, i.e. UCX's tcp over the namespace's link, as between machines -- UCX would
otherwise take shared memory or loopback between namespaces of one machine). Same cases, bounds and
checks for both.

Usage: run_faults.py --build BUILD_DIR [--runs N] [--parallel K] [--cases all|ci|wide|a,b] [--nranks N]
                     [--timeout T] [--seed S] [--transport tcp|ucx]
Exit status: 0 all passed, 1 a check failed, 77 network namespaces are unavailable (skipped).
"""
import argparse
import os
import random
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

REMOTE_ERROR = 6  # hetcclRemoteError
DEAD_BOUND = 10.0
COLLS = ["all_reduce", "all_gather", "broadcast", "reduce", "reduce_scatter", "alltoall", "sendrecv"]
FAULTS = {"kill": "dead", "term": "dead", "stop": "silent", "linkdown": "silent", "drop": "silent", "degrade": "ok"}
PHASES = ["init", "init_mid", "coll", "split", "split_mid", "finalize", "finalize_mid"]
MID_SPLIT_FINALIZE = ("split_mid", "finalize_mid")  # the victim is hit inside the call, at a random moment
CASES = [f"{f}_{p}" for f in FAULTS if f != "degrade" for p in PHASES] + ["degrade_coll"]
# The CI set (scripts/test.sh): every fault at every phase, except SIGTERM outside a collective (the
# process dies as under SIGKILL: hetccl installs no signal handler; term_coll stays as its witness).
CI_CASES = [c for c in CASES if (not c.startswith("term_") or c == "term_coll") and
            not c.endswith(("_split", "_split_mid", "_finalize_mid"))]
# The wide set (scripts/test.sh runs it at 4 and 8 ranks): a rank killed or stopped while the others are in
# hetcclCommSplit or hetcclCommFinalize, where with more ranks a survivor used to name another survivor.
WIDE_CASES = ["kill_split", "stop_split", "kill_split_mid", "stop_split_mid", "kill_finalize", "stop_finalize",
              "kill_finalize_mid"]


class Proc:
    """One rank process and the lines it printed (with arrival times)."""

    def __init__(self, rank, args, env):
        self.rank = rank
        self.lines = []
        self.events = {}
        self.cond = threading.Condition()
        self.p = subprocess.Popen(args, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            line = line.rstrip("\n")
            with self.cond:
                self.lines.append(line)
                m = re.match(r"T (\w+) ([\d.]+)$", line)
                if m:
                    self.events.setdefault(m.group(1), float(m.group(2)))
                self.cond.notify_all()
        with self.cond:
            self.events.setdefault("eof", time.time())
            self.cond.notify_all()

    def wait_event(self, name, deadline):
        with self.cond:
            while name not in self.events and "eof" not in self.events:
                left = deadline - time.time()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.events.get(name)

    def go(self):
        """Releases a rank started with --wait-go 1."""
        try:
            self.p.stdin.write("go\n")
            self.p.stdin.flush()
        except OSError:
            pass

    def kill(self):
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(self.p.pid, sig)
            except ProcessLookupError:
                pass
        self.p.wait()
        self.reader.join(5)

    def find(self, prefix):
        with self.cond:
            return [l for l in self.lines if l.startswith(prefix)]


def ucx_installed():
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return "libucp.so.0 " in out


def shm_segments():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("hetccl")}
    except FileNotFoundError:
        return set()


def rank_env(rank, nranks, secret, timeout, transport="tcp"):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HETCCL_", "NCCL_", "OMPI_", "SLURM_", "UCX_")) and k not in
           ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env.update({
        "OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(nranks),
        "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
        "HETCCL_COMM_ID": f"{netns.Cluster.addr(0)}:29500", "HETCCL_SECRET": secret,
        "HETCCL_HOST_ID": f"node{rank}", "HETCCL_SOCKET_IFNAME": "=eth0", "HETCCL_TIMEOUT": str(timeout),
    })
    if transport == "ucx":
        env.update({"HETCCL_UCX": "on", "UCX_TLS": "tcp", "HETCCL_NET_DEVICES": "eth0"})
    else:
        env["HETCCL_UCX"] = "off"
    return env


class Run:
    """One execution of one case on one cluster; check() returns a list of problems (empty: passed)."""

    def __init__(self, opts, cluster, case, index, rng):
        self.opts, self.cluster, self.case, self.index = opts, cluster, case, index
        self.fault, self.phase = case.split("_", 1)
        self.kind = FAULTS[self.fault]
        self.victim = index % opts.nranks
        self.coll = COLLS[index % len(COLLS)]
        self.rng = rng
        self.t0 = self.t1 = None
        self.detections = []

    def start(self):
        secret = secrets.token_hex(16)
        iters = 20 if self.phase in ("split", "finalize") + MID_SPLIT_FINALIZE else 0  # 0: until a call fails
        if self.kind == "ok":
            iters = self.opts.degrade_iters
        timeout = self.opts.degrade_timeout if self.kind == "ok" else self.opts.timeout
        hold = {"init": "init", "split": "split", "finalize": "finalize"}.get(self.phase, "none")
        self.procs = []
        for r in range(self.opts.nranks):
            args = self.cluster.prefix(r) + [self.opts.program, "--coll", self.coll, "--count", str(self.opts.count),
                                             "--iters", str(iters), "--hold", hold, "--victim", str(self.victim),
                                             "--wait-go", "1", "--split", "1" if self.phase.startswith("split") else "0"]
            self.procs.append(Proc(r, args, rank_env(r, self.opts.nranks, secret, timeout, self.opts.transport)))
        # Process start-up (ip netns exec, the dynamic loader) varies by far more than T on a loaded
        # machine: every rank begins its init at the same moment.
        deadline = time.time() + 30
        for p in self.procs:
            p.wait_event("start", deadline)
        for p in self.procs:
            p.go()

    def trigger(self):
        """Waits for the moment of the fault; returns None when it came, else a problem."""
        v = self.procs[self.victim]
        survivors = [p for p in self.procs if p.rank != self.victim]
        deadline = time.time() + 30
        if self.phase in ("init", "split", "finalize"):
            if v.wait_event("hold", deadline) is None:
                return f"victim never reached its hold before {self.phase}"
            wanted = {"init": "init_begin", "split": "split_begin"}.get(self.phase, "finalize_begin")
            for s in survivors:
                if s.wait_event(wanted, deadline) is None:
                    return f"rank {s.rank} never reached {wanted}"
            time.sleep(0.1)
        elif self.phase in MID_SPLIT_FINALIZE:
            if v.wait_event(self.phase.replace("_mid", "_begin"), deadline) is None:
                return f"victim never began {self.phase}"
            time.sleep(self.rng.uniform(0, 0.02))
        elif self.phase == "init_mid":
            if v.wait_event("init_begin", deadline) is None:
                return "victim never began init"
            time.sleep(self.rng.uniform(0, 0.15))
        else:
            if v.wait_event("loop", deadline) is None:
                return "victim never reached the collective loop"
            time.sleep(self.rng.uniform(0.05, 0.5))
        return None

    def inject(self):
        """Injects the fault; it takes effect between t0 (before) and t1 (after). Bounds that count from the
        fault take the lower bound from t0 and the upper from t1, so each holds whenever in [t0, t1] the fault
        took effect (t1 - t0: a few ms for a signal or `ip link`, tens of ms for an nft process, seconds on a
        loaded machine; the largest is printed per case)."""
        pid, c, r = self.procs[self.victim].p.pid, self.cluster, self.victim
        self.t0 = time.time()
        if self.fault == "kill":
            os.kill(pid, signal.SIGKILL)
        elif self.fault == "term":
            os.kill(pid, signal.SIGTERM)
        elif self.fault == "stop":
            os.kill(pid, signal.SIGSTOP)
        elif self.fault == "linkdown":
            c.link_down(r)
        elif self.fault == "drop":
            c.drop_all(r)
        elif self.fault == "degrade":
            c.degrade(r, self.opts.loss, self.opts.delay_ms, self.opts.netem)
        self.t1 = time.time()

    def bounds(self, survivor):
        """(reference time, lowest, highest) accepted for the survivor's error time."""
        T, P, slack = self.opts.timeout, self.opts.heartbeat, self.opts.slack
        if self.phase == "init":  # the victim never joined: the survivors' init deadline decides
            return survivor.events.get("init_begin", self.t0), T - 0.05, T + 1 + slack
        if self.phase in ("split", "finalize") and self.kind == "silent":  # the victim stopped taking part at its
            begin = survivor.events.get(f"{self.phase}_begin", self.t0)  # hold: the wait's deadline decides
            return begin, T - 0.05, T + 1 + slack
        if self.kind == "dead":
            hi = max(DEAD_BOUND, T + 1) if self.phase == "init_mid" else DEAD_BOUND
            return self.t0, 0.0, hi + slack
        if self.phase in ("init_mid",) + MID_SPLIT_FINALIZE:  # waits began before the fault: upper bound only
            return self.t0, 0.0, T + 1 + slack
        return self.t0, T - P - 0.05, T + 1 + slack

    def finish(self):
        T = self.opts.degrade_timeout if self.kind == "ok" else self.opts.timeout
        deadline = time.time() + T + 1 + self.opts.slack + 15
        survivors = [p for p in self.procs if p.rank != self.victim]
        waiting = survivors if self.kind != "ok" else self.procs
        problems = []
        for p in waiting:
            try:
                p.p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                problems.append(f"rank {p.rank} did not exit by itself (hang)" + self.stacks(p))
        for p in self.procs:
            p.kill()
        self.cluster.restore(self.victim)
        return problems

    def stacks(self, p):
        """The hung rank's threads as gdb sees them (--stacks), for the report."""
        if not self.opts.stacks:
            return ""
        try:
            r = subprocess.run(["gdb", "-p", str(p.p.pid), "-batch", "-ex", "thread apply all bt 30"],
                               capture_output=True, text=True, timeout=60)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("#", "Thread"))]
            return ":\n        " + "\n        ".join(lines)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f" (gdb failed: {e})"

    def root_stopped_mid_answers(self, msg):
        """The one accepted exception to naming the victim (docs/RELIABILITY.md, known limits): the root
        (rank 0) went silent while answering the rendezvous, so a survivor with its table waits for a
        survivor without one, and names that rank at its deadline, which itself names the root. Both
        directions: the survivor with its table accepts (the other "did not connect to this rank's bootstrap
        mesh") or connects (the other's listener, bound before it joined the root, "accepted the connection
        but never answered the hetccl bootstrap handshake": its acceptor starts only with its table)."""
        m = re.search(r"\brank (\d+) \(host node\d+\) (?:did not connect to this rank's bootstrap mesh|"
                      r"accepted the connection but never answered the hetccl bootstrap handshake)", msg)
        if not (self.phase == "init_mid" and self.kind == "silent" and self.victim == 0 and m):
            return False
        other = self.procs[int(m.group(1))]
        err = other.find("ERROR ")
        return bool(err) and bool(re.search(r"\brank 0\b", err[0].split(" ", 4)[-1]))

    def check(self, p):
        problems = []
        out = lambda: "\n      ".join(p.lines[-12:])
        for bad in ("WRONG", "MISUSE"):
            if p.find(bad):
                problems.append(f"rank {p.rank}: {p.find(bad)[0]}")
        if self.kind == "ok":
            if p.p.returncode != 0:
                problems.append(f"rank {p.rank}: exit {p.p.returncode} under a degraded link (expected 0):\n      {out()}")
            return problems
        if p.p.returncode == 0 and self.phase in MID_SPLIT_FINALIZE:
            return problems  # the call completed before the fault took effect: nothing to name
        if p.p.returncode != 3:
            return problems + [f"rank {p.rank}: exit {p.p.returncode} (expected 3: error reported, clean teardown):\n      {out()}"]
        err = p.find("ERROR ")
        if not err:
            return problems + [f"rank {p.rank}: no ERROR line"]
        _, phase, at, code, msg = err[0].split(" ", 4)
        if int(code) != REMOTE_ERROR:
            problems.append(f"rank {p.rank}: code {code}, expected hetcclRemoteError ({REMOTE_ERROR}): {msg}")
        # Inside a split, the child communicator numbers its ranks anew: its errors name the victim by its
        # child rank, so there the victim's host (one per rank here) identifies it.
        named = re.search(rf"\brank {self.victim}\b", msg) or (self.phase.startswith("split") and f"node{self.victim}" in msg)
        if not named and not self.root_stopped_mid_answers(msg):
            problems.append(f"rank {p.rank}: message does not name rank {self.victim}: {msg}")
        joined = self.phase != "init"
        if joined and self.phase != "init_mid" and f"node{self.victim}" not in msg:
            problems.append(f"rank {p.rank}: message does not name host node{self.victim}: {msg}")
        ref, lo, hi = self.bounds(p)
        took = float(at) - ref
        # A fault counted from the injection took effect somewhere in [t0, t1]: the upper bound holds from
        # t1, the latest moment it can have taken effect (an nft process on a loaded machine took 2.1 s).
        took_hi = float(at) - (self.t1 if ref == self.t0 else ref)
        self.detections.append(took)
        # Lower bound for init: from the earliest survivor's init start (the root gives up at the deadline
        # of the rank that started it).
        took_lo = took
        if self.phase == "init":
            took_lo = float(at) - min(s.events.get("init_begin", ref) for s in self.procs if s.rank != self.victim)
        if not (lo <= took_lo and took_hi <= hi):
            problems.append(f"rank {p.rank}: error {took:.3f} s after the reference ({took_lo:.3f} s for the lower "
                            f"bound, {took_hi:.3f} s for the upper), outside [{lo:.2f}, {hi:.2f}]: {msg}")
        fds = p.find("FDS ")
        if fds:
            before, after = map(int, fds[0].split()[1:3])
            if after > before:
                problems.append(f"rank {p.rank}: {after - before} file descriptor(s) left open after teardown")
        else:
            problems.append(f"rank {p.rank}: no FDS line")
        return problems

    def execute(self):
        before = shm_segments()
        self.start()
        try:
            problem = self.trigger()
            if problem:
                self.finish()
                return [problem] + [f"rank {p.rank}: " + " | ".join(p.lines[-6:]) for p in self.procs]
            self.inject()
            problems = self.finish()
        except Exception:
            for p in self.procs:
                p.kill()
            self.cluster.restore(self.victim)
            raise
        checked = self.procs if self.kind == "ok" else [p for p in self.procs if p.rank != self.victim]
        for p in checked:
            problems += self.check(p)
        if problems:  # every rank's first error, for the diagnosis of naming problems
            problems += [f"(rank {p.rank} said: {(p.find('ERROR ') or ['no error'])[0][:400]})" for p in self.procs]
        leaked = shm_segments() - before
        if leaked:
            problems.append(f"shared-memory segments left: {sorted(leaked)}")
        return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="build directory (has tests/netns/netns_fault_rank)")
    ap.add_argument("--runs", type=int, default=50, help="runs of every case")
    ap.add_argument("--nranks", type=int, default=3, help="ranks per job (each its own namespace); victims rotate")
    ap.add_argument("--parallel", type=int, default=4, help="jobs at a time (each in its own namespaces)")
    ap.add_argument("--cases", default="all", help="comma list, or 'all' (default), or 'ci' (" +
                    ",".join(CI_CASES) + "), or 'wide' (" + ",".join(WIDE_CASES) + "); all: " + ",".join(CASES))
    ap.add_argument("--timeout", type=float, default=1.0, help="HETCCL_TIMEOUT (s) of the fault cases")
    ap.add_argument("--degrade-timeout", type=float, default=30.0, help="HETCCL_TIMEOUT (s) of the degrade case")
    ap.add_argument("--slack", type=float, default=1.0, help="extra seconds on every upper bound (loaded CI)")
    ap.add_argument("--count", type=int, default=16384, help="int32 elements per rank and collective")
    ap.add_argument("--loss", type=int, default=5, help="degrade: percent of packets lost each way")
    ap.add_argument("--delay-ms", type=int, default=20, help="degrade: added delay")
    ap.add_argument("--degrade-iters", type=int, default=30, help="degrade: collectives run under the fault")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--stacks", action="store_true", help="print a hung rank's threads (gdb) before killing it")
    ap.add_argument("--transport", choices=["tcp", "ucx"], default="tcp", help="transport between the hosts")
    opts = ap.parse_args()
    why = netns.unavailable_reason()
    if why:
        print(f"netns faults: SKIPPED: {why}")
        return 77
    opts.program = os.path.join(opts.build, "tests", "netns", "netns_fault_rank")
    opts.heartbeat = min(max(opts.timeout / 20, 0.02), 0.5)
    opts.netem = netns.has_netem()
    seed = opts.seed if opts.seed is not None else int(time.time())
    cases = {"all": CASES, "ci": CI_CASES, "wide": WIDE_CASES}.get(opts.cases) or [c for c in opts.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case {c}")
    needs_nft = any(c.startswith("drop") or (c.startswith("degrade") and not opts.netem) for c in cases)
    if needs_nft and not shutil.which("nft"):
        print("netns faults: FAIL: nftables (`nft`) is not installed; scripts/install-deps.sh installs it")
        return 1
    if opts.transport == "ucx" and not ucx_installed():
        print("netns faults: SKIPPED: --transport ucx but libucp.so.0 is not installed (Debian: libucx0)")
        return 77
    print(f"netns faults: {len(cases)} cases x {opts.runs} runs, {opts.parallel} at a time, {opts.nranks} ranks, "
          f"transport {opts.transport}, "
          f"HETCCL_TIMEOUT={opts.timeout}, slack {opts.slack} s, degrade via {'netem' if opts.netem else 'nftables loss + tbf'}, "
          f"seed {seed}", flush=True)

    jobs = [(c, i) for i in range(opts.runs) for c in cases]
    results = {c: {"runs": 0, "failed": 0, "times": [], "problems": []} for c in cases}
    lock = threading.Lock()
    started = time.time()

    def worker(slot):
        cluster = netns.Cluster(f"{os.getpid() % 100000}s{slot}", opts.nranks)
        cluster.create()
        rng = random.Random(seed * 1000 + slot)
        try:
            while True:
                with lock:
                    if not jobs:
                        return
                    case, index = jobs.pop(0)
                run = Run(opts, cluster, case, index, rng)
                try:
                    problems = run.execute()
                except Exception as e:  # a harness failure is a failed run, not a crash of the suite
                    problems = [f"harness error: {e!r}"]
                with lock:
                    r = results[case]
                    r["runs"] += 1
                    r["times"] += run.detections
                    if run.t0 is not None and run.t1 is not None:
                        r["inject"] = max(r.get("inject", 0.0), run.t1 - run.t0)
                    if problems:
                        r["failed"] += 1
                        if len(r["problems"]) < 3:
                            r["problems"].append((index, run.victim, run.coll, problems))
        finally:
            cluster.destroy()

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(opts.parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    failed = 0
    for c in cases:
        r = results[c]
        times = r["times"]
        timing = (f"detection min/median/max {min(times):.3f}/{statistics.median(times):.3f}/{max(times):.3f} s"
                  if times else "no detections")
        status = "OK  " if r["failed"] == 0 and r["runs"] == opts.runs else "FAIL"
        print(f"netns {status} {c:18s} {r['runs']:3d} runs, {r['failed']} failed; {timing}; "
              f"injection took <= {r.get('inject', 0) * 1000:.0f} ms")
        for index, victim, coll, problems in r["problems"]:
            print(f"    run {index} (victim rank {victim}, {coll}):")
            for p in problems:
                print(f"      {p}")
        failed += r["failed"] + (opts.runs - r["runs"])
    print(f"netns faults: {sum(r['runs'] for r in results.values())} runs in {time.time() - started:.0f} s, "
          f"{failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
