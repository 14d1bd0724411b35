#!/usr/bin/env python3
"""Scenarios of the agent API (include/hetccl/hetccl_agent.h): each agent a process of agent_peer.

Usage: run_agent_scenarios.py --bin AGENT_PEER [--path window|tcp|ucx] [--keep] SCENARIO
       run_agent_scenarios.py --list

One scenario per invocation (one CTest test each, tests/agent/CMakeLists.txt). --path window (the default, agents
of one host: shared-memory windows), tcp (HETCCL_AGENT_WINDOW=off for every process) or ucx (every agent on a
"host" of its own, HETCCL_HOST_ID=agent-host-NAME, with HETCCL_UCX=on and UCX_TLS=tcp (unless the caller
sets UCX_TLS), as between real hosts:
the payload crosses UCX, the requests the agents' tcp sockets; CTest runs it through tests/mp/ucx_or_skip.sh,
which skips where libucp.so.0 is not installed; every process logs at INFO, and the scenario fails unless the logs show connections whose payload
crossed ucx and none whose payload crossed tcp). Every agent listens on
127.0.0.1:0 (but in "stale", where the restarted target must come back on its old address: a port this driver
picks), uses the fixed test secret below and publishes its metadata into a fresh temporary directory. The
processes check their data themselves (agent_peer.cc says how); this driver starts them, kills, stops or
continues them where the scenario says, and passes when every process ended as expected: exit status 0 and its
"OK" line, or killed by SIGKILL where it was the victim. Every wait has a deadline; on a failure every process
still running is killed and every log is printed. Exit status 0 passed, 1 failed, 2 usage.

Scenarios:
  write      (a) 3 writes back to back over two registrations each side (20 MiB + 353 ranges) and notifications
             (4096, 2, 1 and 0 bytes): every byte of the target checked after each
  read       (b) a read of 22,557 strided ranges between two registrations on each side, then a notification to
             the target; posted twice; every local byte checked, the target's regions unchanged
  order      (c) 10,000 small writes (every 97th with a second range of 256 KiB), 64 in flight, with
             notifications (every 500th a GenNotif): on each, the write's data is in place and the sequence is
             the next one
  joinleave  (d) an agent joins mid-run, another destroys its agent: transfers to it fail with hetcclRemoteError
             naming it (and write nothing), transfers to the others go on
  forged     (e) flipped bytes, another secret, truncated, garbage, own and older blobs: hetcclInvalidArgument
  stale      (f) the target restarts under the same name on the same address: transfers through its old blob fail
             naming it and write nothing; through the new blob they work (also right after the restart)
  envsecret  the write scenario with the target's secret from HETCCL_SECRET (hex digits) and the initiator's
             from options.secret (the same bytes): one secret, the two ways the header documents
  kill       (g) SIGKILL of a target during a stream of writes (timeout 5 s): hetcclRemoteError naming it within
             the timeout, writes to a second target go on
  silent     (g') the same with SIGSTOP (timeout 3 s): the pending write fails at its deadline
  badargs    (h) every documented refusal: its code, a message, nothing written
  cancel     (i) cancel of a queued write and of a 64 MiB write on the wire (the target stopped)
  dereg      (j) transfers to a deregistered region (registered again at the same address) fail, write nothing
"""
import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# The bytes agent_peer uses as options.secret (kSecret, peer_support.hpp); given hex-encoded as HETCCL_SECRET
# where a role reads the environment.
SECRET = b"hetccl-agent-ci-secret-32-bytes!"
SEED = 7
ROLE_DEADLINE = 50  # agent_peer's watchdog
WAIT = 40  # one agent_peer wait for another process
DRIVER_WAIT = 45  # one wait of this driver
# HETCCL_* variables passed on from the caller's environment (logging only); every other one is dropped, so
# the scenarios run the same whatever the caller exported.
KEEP_ENV = ("HETCCL_DEBUG", "HETCCL_DEBUG_SUBSYS")


class Failed(Exception):
    pass


def free_port():
    """A loopback port free a moment ago, below the kernel's ephemeral range when possible (so that no
    outgoing connection takes it before the agent binds it)."""
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


class Proc:
    def __init__(self, label, tag, popen, log_path):
        self.label, self.tag, self.popen, self.log_path = label, tag, popen, log_path
        self.pid = popen.pid

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


class Scenario:
    def __init__(self, binary, path, workdir, name):
        self.binary, self.path, self.dir, self.name = binary, path, workdir, name
        self.procs = []
        self.start_time = time.monotonic()

    def env(self, extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HETCCL_") or k in KEEP_ENV}
        if self.path == "tcp":
            env["HETCCL_AGENT_WINDOW"] = "off"
        if self.path == "ucx":
            env.update(HETCCL_UCX="on", HETCCL_DEBUG="INFO", HETCCL_DEBUG_SUBSYS="NET")
            env.setdefault("UCX_TLS", "tcp")  # as between hosts; a caller's UCX_TLS (e.g. RDMA devices) is kept
        for k, v in (extra or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def start(self, role, name, label=None, env=None, **opts):
        label = label or name
        args = [self.binary, role, "--scenario", opts.pop("scenario", self.name), "--dir", self.dir, "--name", name,
                "--seed", str(SEED), "--wait", str(WAIT), "--deadline", str(ROLE_DEADLINE), "--path", self.path]
        for k, v in opts.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        log_path = os.path.join(self.dir, label + ".log")
        env = dict(env or {})
        if self.path == "ucx":
            env.setdefault("HETCCL_HOST_ID", "agent-host-" + name)
        with open(log_path, "wb") as log:
            popen = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env(env))
        tag = "agent_peer %s/%s %s" % (args[3], role, name)
        proc = Proc(label, tag, popen, log_path)
        self.procs.append(proc)
        print("started %s (pid %d): %s" % (label, proc.pid, " ".join(args[1:])), flush=True)
        return proc

    def _check_early_exits(self, allowed=()):
        """A process that failed ends the scenario at once instead of at a deadline."""
        for p in self.procs:
            rc = p.popen.poll()
            if rc is not None and rc != 0 and p not in allowed:
                raise Failed("%s exited with status %s while the scenario waited" % (p.label, describe(rc)))

    def wait_file(self, file, what, allowed=()):
        path = os.path.join(self.dir, file)
        end = time.monotonic() + DRIVER_WAIT
        while not os.path.exists(path):
            self._check_early_exits(allowed)
            if time.monotonic() > end:
                raise Failed("waited %d s for %s (%s)" % (DRIVER_WAIT, what, file))
            time.sleep(0.002)

    def write_file(self, file, content):
        path = os.path.join(self.dir, file)
        with open(path + ".tmp", "w") as f:
            f.write(content)
        os.rename(path + ".tmp", path)

    def wait_stopped(self, proc):
        end = time.monotonic() + DRIVER_WAIT
        while True:
            try:
                with open("/proc/%d/stat" % proc.pid) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                state = "?"
            if state in ("T", "t"):
                return
            self._check_early_exits()
            if proc.popen.poll() is not None:
                raise Failed("%s exited instead of stopping itself" % proc.label)
            if time.monotonic() > end:
                raise Failed("%s did not stop within %d s (state %s)" % (proc.label, DRIVER_WAIT, state))
            time.sleep(0.002)

    def wait_exit(self, proc, expect=0):
        """Waits for proc's exit (any other process failing meanwhile ends the scenario at once)."""
        end = time.monotonic() + DRIVER_WAIT + ROLE_DEADLINE
        while proc.popen.poll() is None:
            self._check_early_exits(allowed=(proc,))
            if time.monotonic() > end:
                raise Failed("%s did not exit" % proc.label)
            time.sleep(0.005)
        self.check_exit(proc, expect)

    def check_exit(self, proc, expect):
        rc = proc.popen.returncode
        if rc != expect:
            raise Failed("%s: exit status %s, expected %s" % (proc.label, describe(rc), describe(expect)))
        if expect == 0 and (proc.tag + ": OK") not in proc.log():
            raise Failed("%s exited 0 without its OK line" % proc.label)

    def finish(self, expect, still_running=()):
        """Waits for every process of `expect` (proc -> expected exit status), failing as soon as one ends
        otherwise; every other process must have ended too, but those of still_running."""
        end = time.monotonic() + DRIVER_WAIT + ROLE_DEADLINE
        pending = dict(expect)
        while pending:
            for proc, status in list(pending.items()):
                if proc.popen.poll() is not None:
                    self.check_exit(proc, status)
                    del pending[proc]
            if pending and time.monotonic() > end:
                raise Failed("%s still running after the scenario's deadline" % ", ".join(p.label for p in pending))
            time.sleep(0.005)
        for p in self.procs:
            if p not in expect and p not in still_running and p.popen.poll() is None:
                raise Failed("%s still running at the end" % p.label)

    def kill_all(self):
        for p in self.procs:
            if p.popen.poll() is None:
                try:
                    p.popen.kill()
                except OSError:
                    pass
        for p in self.procs:
            try:
                p.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def print_logs(self):
        for p in self.procs:
            print("----- %s (pid %d, exit %s) -----" % (p.label, p.pid, describe(p.popen.returncode)))
            sys.stdout.write(p.log())
        sys.stdout.flush()


def describe(rc):
    if rc is None:
        return "running"
    if rc < 0:
        try:
            return "killed by %s" % signal.Signals(-rc).name
        except ValueError:
            return "killed by signal %d" % -rc
    return str(rc)


# ------------------------------------------------------------------------------------------ scenarios

def sc_write(s):
    b = s.start("target", "recv-B", peer="send-A")
    a = s.start("initiator", "send-A", peer="recv-B")
    s.finish({a: 0, b: 0})


def sc_read(s):
    b = s.start("target", "src-B", peer="reader-A")
    a = s.start("initiator", "reader-A", peer="src-B")
    s.finish({a: 0, b: 0})


def sc_order(s):
    b = s.start("target", "order-B", peer="order-A", count=10000)
    a = s.start("initiator", "order-A", peer="order-B", count=10000)
    s.finish({a: 0, b: 0})


def sc_joinleave(s):
    b = s.start("target", "stay-B", peer="init-A", rounds=10, timeout=10)
    c = s.start("target", "leave-C", peer="init-A", rounds=10, leave_after=5, timeout=10)
    a = s.start("initiator", "init-A", stay="stay-B", leave="leave-C", join="join-D", timeout=10)
    s.wait_file("init-A.phase1", "init-A's first 5 rounds")
    d = s.start("target", "join-D", peer="init-A", rounds=5, timeout=10)  # a process that did not exist before
    s.finish({a: 0, b: 0, c: 0, d: 0})


def sc_forged(s):
    b = s.start("target", "auth-B", peer="init-A")
    x = s.start("publisher", "other-X", secret="other")
    a = s.start("initiator", "init-A", peer="auth-B", other="other-X")
    s.finish({a: 0, b: 0, x: 0})


def sc_stale(s):
    # The restarted target must come back on the address its old blob names (as a restarted pod or service
    # would): only then does a transfer through the old blob reach the new incarnation, which must refuse it.
    listen = "127.0.0.1:%d" % free_port()
    b1 = s.start("target", "restart-B", label="restart-B.1", peer="init-A", listen=listen, incarnation=1)
    a = s.start("initiator", "init-A", peer="restart-B", timeout=10)
    s.wait_exit(b1, 0)
    b2 = s.start("target", "restart-B", label="restart-B.2", peer="init-A", listen=listen, incarnation=2)
    s.wait_exit(b2, 0)
    b3 = s.start("target", "restart-B", label="restart-B.3", peer="init-A", listen=listen, incarnation=3)
    s.finish({a: 0, b3: 0})


def sc_envsecret(s):
    # The write scenario with the target's secret from HETCCL_SECRET (the hex digits of the test secret) and the
    # initiator's from options.secret (its bytes): one deployment secret, given two documented ways.
    b = s.start("target", "env-B", peer="opt-A", scenario="write", secret="env", env={"HETCCL_SECRET": SECRET.hex()})
    a = s.start("initiator", "opt-A", peer="env-B", scenario="write")
    s.finish({a: 0, b: 0})


def kill_or_stop(s, mode, timeout):
    b = s.start("sink", "victim-B", timeout=timeout, scenario="kill")
    c = s.start("target", "live-C", peer="init-A", timeout=timeout, scenario="kill")
    a = s.start("initiator", "init-A", victim="victim-B", live="live-C", mode=mode, timeout=timeout, scenario="kill")
    s.wait_file("init-A.streaming", "init-A's first 10 writes to victim-B")
    if mode == "kill":
        os.kill(b.pid, signal.SIGKILL)
        s.write_file("victim-B.killed", "%.6f" % time.time())
        print("SIGKILL victim-B (pid %d)" % b.pid, flush=True)
        s.finish({a: 0, c: 0, b: -signal.SIGKILL})
    else:
        os.kill(b.pid, signal.SIGSTOP)
        print("SIGSTOP victim-B (pid %d)" % b.pid, flush=True)
        s.finish({a: 0, c: 0}, still_running=(b,))
        os.kill(b.pid, signal.SIGKILL)
        s.wait_exit(b, -signal.SIGKILL)


def sc_kill(s):
    kill_or_stop(s, "kill", 5)


def sc_silent(s):
    kill_or_stop(s, "stop", 3)


def sc_badargs(s):
    with socket.socket() as busy:  # a port held by another socket: hetcclAgentCreate must fail to bind it
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        b = s.start("target", "bad-B", peer="init-A")
        a = s.start("initiator", "init-A", peer="bad-B", busy_port=busy.getsockname()[1])
        # hetcclAgentCreate with the secret from the environment: missing, short, not hex, good.
        checks = [("unset", None, "hetcclInvalidArgument"),
                  ("short", "ab" * 15, "hetcclInvalidArgument"),
                  ("not-hex", "zq" * 32, "hetcclInvalidArgument"),
                  ("good", SECRET.hex(), "hetcclSuccess")]
        envs = [s.start("create", "env-" + label, env={"HETCCL_SECRET": value}, expect=expect)
                for label, value, expect in checks]
        s.finish(dict([(a, 0), (b, 0)] + [(p, 0) for p in envs]))


def sc_cancel(s):
    b = s.start("target", "cancel-B", peer="init-A", timeout=10)
    a = s.start("initiator", "init-A", peer="cancel-B", timeout=10)
    s.wait_file("cancel-B.stopping", "cancel-B's first write")
    s.wait_stopped(b)
    s.write_file("cancel-B.stopped", "1")
    s.wait_file("init-A.cancelled", "init-A's cancels")
    os.kill(b.pid, signal.SIGCONT)
    print("SIGCONT cancel-B (pid %d)" % b.pid, flush=True)
    s.finish({a: 0, b: 0})


def sc_dereg(s):
    b = s.start("target", "dereg-B", peer="init-A", timeout=10)
    a = s.start("initiator", "init-A", peer="dereg-B", timeout=10)
    s.finish({a: 0, b: 0})


SCENARIOS = {
    "write": sc_write, "read": sc_read, "order": sc_order, "joinleave": sc_joinleave, "forged": sc_forged,
    "stale": sc_stale, "envsecret": sc_envsecret, "kill": sc_kill, "silent": sc_silent, "badargs": sc_badargs, "cancel": sc_cancel,
    "dereg": sc_dereg,
}


def check_ucx_logs(s):
    """The ucx path was taken: every connection an initiator made (HETCCL_DEBUG=INFO: "connected to ...")
    moved its payload over ucx, and its set-up says so on both ends ("payload with ... over ucx")."""
    lines = "".join(p.log() for p in s.procs).splitlines()
    connected = [l for l in lines if "connected to agent" in l]
    over_tcp = [l for l in connected if "over tcp" in l]
    if over_tcp:
        raise Failed("a connection's payload crossed tcp on the ucx path: %s" % over_tcp[0])
    set_up = [l for l in lines if "payload with" in l and l.endswith(" over ucx")]
    if len(set_up) < 2 * len(connected):
        raise Failed("%d connection(s) but %d ucx set-up line(s) (2 per connection expected)" % (len(connected), len(set_up)))
    if s.name not in ("forged", "badargs") and not connected:
        raise Failed("no connection was made")
    print("ucx path: %d connection(s), %d ucx set-up line(s), none over tcp" % (len(connected), len(set_up)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="the agent_peer executable")
    ap.add_argument("--path", choices=("window", "tcp", "ucx"), default="window")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("scenario", nargs="?")
    args = ap.parse_args()
    if args.list:
        print("\n".join(SCENARIOS))
        return 0
    if not args.bin or args.scenario not in SCENARIOS:
        ap.print_usage()
        print("scenarios: " + ", ".join(SCENARIOS))
        return 2
    workdir = tempfile.mkdtemp(prefix="hetccl-agent-%s-%s-" % (args.scenario, args.path))
    s = Scenario(os.path.abspath(args.bin), args.path, workdir, args.scenario)
    print("scenario %s, %s path%s, in %s" % (args.scenario, args.path,
                                             " (HETCCL_AGENT_WINDOW=off)" if args.path == "tcp" else "", workdir),
          flush=True)
    failure = None
    try:
        SCENARIOS[args.scenario](s)
        if args.path == "ucx":
            check_ucx_logs(s)
    except Failed as e:
        failure = str(e)
    finally:
        s.kill_all()
    s.print_logs()
    took = time.monotonic() - s.start_time
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    if failure:
        print("FAIL: %s (%s path): %s (%.1f s)" % (args.scenario, args.path, failure, took))
        return 1
    print("PASS: %s (%s path) in %.1f s" % (args.scenario, args.path, took))
    return 0


if __name__ == "__main__":
    sys.exit(main())
