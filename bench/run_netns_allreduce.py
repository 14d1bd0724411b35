#!/usr/bin/env python3
"""CPU all-reduce between "hosts": every rank in its own Linux network namespace (tests/netns/netns.py: a
bridge, eth0 = 10.99.0.<rank+1>/24 in each rank's namespace), float32 sum, comparing
  hetccl tcp   hetccl-perf, HETCCL_UCX=off (tcp between hosts)
  hetccl ucx   hetccl-perf, HETCCL_UCX=on UCX_TLS=tcp HETCCL_NET_DEVICES=eth0 (UCX's tcp over eth0)
  MPI          bench/mpi_allreduce under Open MPI's mpirun, started in rank 0's namespace; its rsh agent
               (a generated script) runs `ip netns exec <namespace of the host> sh -c '<orted command>'`;
               --mca pml ob1, btl tcp,self, btl/oob_tcp_if_include eth0
  MPI ucx      the same with Open MPI's UCX pml: --mca pml ucx, UCX_TLS=tcp,self, UCX_NET_DEVICES=eth0
  Gloo         bench/gloo_allreduce --hostname 10.99.0.<rank+1>, FileStore in a shared temporary directory
with run_cpu_allreduce.sh's programs, sweep flags, exact check and summarizer. The veth pairs between
namespaces of one machine are memory copies in the kernel, not a NIC: the numbers measure each library's
path through the kernel's TCP stack (and its own copies and threads), not a network. --rate shapes every
eth0 with a tbf qdisc (egress) so that the link has a finite bandwidth.

Every program must exit 0 and print one row per size with #wrong 0 (out-of-place and in-place);
otherwise the script fails (exit 1), after writing the report. Writes
bench/results/netns_allreduce_<N>r_<date>.md and the raw outputs in netns_allreduce_<N>r_<date>_raw/
(load.tsv: per program run the load average before it and the CPU time that other processes took during
it, so that a run disturbed by other jobs on the machine can be told apart).

usage: run_netns_allreduce.py [--nranks 2] [--runs 3] [--iters 20] [--warmup 5] [--min-bytes 1K]
                              [--max-bytes 64M] [--factor 2] [--rate 10gbit] [--build DIR] [--no-build]
                              [--programs hetccl_tcp,hetccl_ucx,mpi,mpi_ucx,gloo] [--timeout 600]
Root only. Exit status: 0 passed, 1 a run failed or a check found wrong elements, 77 network namespaces
are unavailable (skipped).
"""
import argparse
import datetime
import os
import re
import resource
import secrets
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "netns"))
import netns  # noqa: E402

PROGRAMS = {"hetccl_tcp": "hetccl tcp", "hetccl_ucx": "hetccl ucx", "mpi": "Open MPI", "mpi_ucx": "Open MPI ucx",
            "gloo": "Gloo"}
CLEAN_PREFIXES = ("HETCCL_", "NCCL_", "OMPI_", "PMIX_", "SLURM_", "UCX_")
CLEAN_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r}")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def base_env():
    """This process's environment without any launcher's or library's variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith(CLEAN_PREFIXES) and k not in CLEAN_NAMES}


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


def show(env_diff, args):
    """A command line as one would type it: VAR=value ... program args (the job secret not shown)."""
    env = [f"{k}={'<fresh 64 hex digits>' if k == 'HETCCL_SECRET' else shlex.quote(v)}" for k, v in env_diff.items()]
    return " ".join(env + [shlex.quote(a) for a in args])


class Bench:
    def __init__(self, opts):
        self.o = opts
        self.build = Path(opts.build).resolve()
        self.perf = self.build / "tools" / "hetccl-perf"
        self.mpi = self.build / "bench" / "mpi_allreduce"
        self.gloo = self.build / "bench" / "gloo_allreduce"
        self.sweep = ["-b", str(opts.min_bytes), "-e", str(opts.max_bytes), "-f", f"{opts.factor:g}",
                      "-n", str(opts.iters), "-w", str(opts.warmup), "-c", "1"]
        self.nsizes = 0
        s = opts.min_bytes
        while s <= opts.max_bytes:
            self.nsizes += 1
            s = int(s * opts.factor)
        self.cluster = netns.Cluster(f"nb{os.getpid() % 10000}", opts.nranks)
        self.tmp = Path(tempfile.mkdtemp(prefix="hetccl_netns_bench_"))
        self.port = 29500
        self.commands = {}  # program -> list of command lines (one run's), for the report

    # ---- setup ----

    def setup(self):
        c = self.cluster
        c.create()
        if self.o.rate:
            rate_bps = parse_rate(self.o.rate)
            burst = max(rate_bps // 8 // 1000, 128 * 1024)  # 1 ms at the rate, at least 128 KiB
            for r in range(self.o.nranks):
                netns.run("ip", "netns", "exec", c.ns[r], "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate",
                          self.o.rate, "burst", str(burst), "latency", "20ms")
        # Open MPI: the hostfile names every host by its eth0 address; the rsh agent maps it to a namespace.
        self.hostfile = self.tmp / "hostfile"
        self.hostfile.write_text("".join(f"{c.addr(r)} slots=1\n" for r in range(self.o.nranks)))
        self.agent = self.tmp / "netns_rsh_agent.sh"
        cases = "".join(f"  {c.addr(r)}) ns={c.ns[r]} ;;\n" for r in range(self.o.nranks))
        self.agent_text = (
            "#!/bin/sh\n"
            "# plm_rsh_agent for mpirun: $1 = host (its eth0 address), the rest = the command for the remote\n"
            "# shell; runs it in that host's network namespace, as ssh would on that host.\n"
            "host=$1; shift\n"
            f"case $host in\n{cases}  *) echo \"netns_rsh_agent: unknown host $host\" >&2; exit 255 ;;\nesac\n"
            "exec ip netns exec \"$ns\" sh -c \"$*\"\n")
        self.agent.write_text(self.agent_text)
        self.agent.chmod(0o755)

    def cleanup(self):
        self.kill_leftovers()
        self.cluster.destroy()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def kill_leftovers(self):
        """Processes still in the rank namespaces were started by this script (after a timeout): kill them."""
        for ns in self.cluster.ns:
            for pid in netns.run("ip", "netns", "pids", ns, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass

    # ---- one run of one program ----

    def launches(self, prog):
        """[(rank, env additions, argv)] of one run: the processes to start, each in its namespace."""
        c, n = self.cluster, self.o.nranks
        self.port += 1
        if prog.startswith("hetccl"):
            secret = secrets.token_hex(32)
            out = []
            for r in range(n):
                env = {"OMPI_COMM_WORLD_RANK": str(r), "OMPI_COMM_WORLD_SIZE": str(n),
                       "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
                       "HETCCL_COMM_ID": f"{c.addr(0)}:{self.port}", "HETCCL_SECRET": secret,
                       "HETCCL_HOST_ID": f"node{r}", "HETCCL_SOCKET_IFNAME": "=eth0",
                       "HETCCL_DEBUG": "INFO"}  # init only: shows the transport each link took (checked)
                if prog == "hetccl_ucx":
                    env.update({"HETCCL_UCX": "on", "UCX_TLS": "tcp", "HETCCL_NET_DEVICES": "eth0"})
                else:
                    env["HETCCL_UCX"] = "off"
                out.append((r, env, c.prefix(r) + [str(self.perf), "all_reduce"] + self.sweep))
            return out
        if prog in ("mpi", "mpi_ucx"):
            argv = ["mpirun", "--bind-to", "none", "-np", str(n), "--hostfile", str(self.hostfile),
                    "--mca", "plm_rsh_agent", str(self.agent), "--mca", "oob_tcp_if_include", "eth0"]
            if prog == "mpi":  # the ob1 pml over the TCP BTL
                argv += ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "eth0"]
            else:  # the UCX pml over UCX's tcp transport on eth0, as hetccl_ucx
                argv += ["--mca", "pml", "ucx", "--mca", "osc", "ucx", "--mca", "btl", "^openib,uct,tcp",
                         "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any",
                         "-x", "UCX_TLS=tcp,self", "-x", "UCX_NET_DEVICES=eth0"]
            if n > os.cpu_count():
                # Each "host" has one slot, so Open MPI does not know that its busy-polling ranks share fewer
                # cores: without yielding, a rank waiting for a peer holds a core the peer needs.
                argv += ["--mca", "mpi_yield_when_idle", "1"]
            if os.geteuid() == 0:
                argv.insert(1, "--allow-run-as-root")
            return [(0, {}, c.prefix(0) + argv + [str(self.mpi)] + self.sweep)]
        if prog == "gloo":
            store = self.tmp / f"gloo_store_{self.port}"
            store.mkdir()
            return [(r, {}, c.prefix(r) + [str(self.gloo), "--rank", str(r), "--size", str(n), "--store", str(store),
                                           "--hostname", c.addr(r)] + self.sweep) for r in range(n)]
        raise ValueError(prog)

    def run_once(self, prog, log):
        """Runs one program once; rank 0's output goes to `log`, other ranks' to `log`.rank<k>. Returns a list
        of problems (empty: passed)."""
        launches = self.launches(prog)
        self.commands.setdefault(prog, [show(env, argv) for _, env, argv in launches])
        procs, files = [], []
        # Higher ranks first (rank 0 hosts hetccl's rendezvous root; the others retry until it listens).
        for rank, env, argv in sorted(launches, key=lambda x: -x[0]):
            path = log if rank == 0 else log.with_name(f"{log.stem}.rank{rank}.txt")
            f = open(path, "w")
            files.append(f)
            full_env = base_env()
            full_env.update(env)
            procs.append((rank, subprocess.Popen(argv, env=full_env, stdout=f, stderr=subprocess.STDOUT,
                                                 start_new_session=True)))
        problems = []
        deadline = time.time() + self.o.timeout
        for rank, p in procs:
            try:
                rc = p.wait(max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                problems.append(f"rank {rank}: no exit within {self.o.timeout} s (killed)")
                for _, q in procs:
                    try:
                        os.killpg(q.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.kill_leftovers()
                rc = p.wait()
            if rc != 0:
                problems.append(f"rank {rank} ({'mpirun' if prog == 'mpi' else 'process'}): exit status {rc}")
        for f in files:
            f.close()
        problems += check_table(log, self.nsizes)
        if prog.startswith("hetccl"):  # every link of rank 0 took the transport under test
            want = prog.split("_")[1]
            text = log.read_text(errors="replace")
            for k in range(1, self.o.nranks):
                if not re.search(rf"rank 0 <-> rank {k} \(host node{k}, .*\) via {want}\b", text):
                    problems.append(f"rank 0's log does not show 'rank 0 <-> rank {k} ... via {want}'")
        return problems

    def mpi_placement(self, path):
        """Open MPI puts rank k in namespace k (10.99.0.<k+1>); the output is kept in `path`. Returns problems."""
        launches = self.launches("mpi")
        _, _, argv = launches[0]
        argv = argv[:argv.index(str(self.mpi))] + [
            "sh", "-c", 'echo "rank $OMPI_COMM_WORLD_RANK ns $(ip netns identify $$) eth0 '
                        '$(ip -4 -o addr show dev eth0 | awk \'{print $4}\')"']
        p = subprocess.run(argv, env=base_env(), capture_output=True, text=True, timeout=120)
        path.write_text(show({}, argv) + "\n" + p.stdout + p.stderr)
        problems = [] if p.returncode == 0 else [f"mpirun exit status {p.returncode}"]
        for k in range(self.o.nranks):
            if f"rank {k} ns {self.cluster.ns[k]} eth0 {self.cluster.addr(k)}/24" not in p.stdout:
                problems.append(f"MPI rank {k} is not in namespace {self.cluster.ns[k]}")
        return problems


def parse_rate(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)(bit|bps)", text.lower())
    if not m:
        raise argparse.ArgumentTypeError(f"bad rate {text!r} (e.g. 10gbit, 1000mbit)")
    v = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return int(v * (8 if m.group(3) == "bps" else 1))


def check_table(log, nsizes):
    """The exact check: one row per size, #wrong 0 out-of-place and in-place."""
    rows, problems = 0, []
    for line in log.read_text(errors="replace").splitlines():
        f = line.split()
        if line.startswith("#") or len(f) < 13 or not f[0].isdigit():
            continue
        rows += 1
        if f[8] != "0" or f[12] != "0":
            problems.append(f"size {f[0]}: #wrong {f[8]} (out-of-place), {f[12]} (in-place)")
    if rows != nsizes:
        problems.append(f"{rows} result rows, expected {nsizes}")
    return problems


def versions(repo):
    commit = sh(f"git -C {shlex.quote(str(repo))} rev-parse --short HEAD") or "unknown"
    dirty = sh(f"git -C {shlex.quote(str(repo))} status --porcelain --untracked-files=no")
    cpu = sh("lscpu | sed -n 's/^Model name:[[:space:]]*//p'")
    mem = sh("free -g | awk '/^Mem:/{print $2}'")
    pkgs = sh("dpkg-query -W -f='${Package} ${Version}; ' openmpi-bin libopenmpi-dev libgloo-dev libucx0 2>/dev/null")
    return [
        f"- CPU: {cpu}",
        f"- cores: {os.cpu_count()} online; memory: {mem} GiB",
        f"- kernel: {sh('uname -sr')}",
        f"- compiler: {sh('g++ --version | head -1')}",
        f"- hetccl: {commit}{' (working tree modified)' if dirty else ''}, Release build",
        f"- UCX: {sh('ucx_info -v | head -1').lstrip('# ')}",
        f"- Open MPI: {sh('mpirun --version 2>/dev/null | head -1')}",
        f"- packages: {pkgs}",
    ]


HZ = os.sysconf("SC_CLK_TCK")


def cpu_times():
    """(busy seconds of the whole machine in user/nice/system, steal seconds, CPU seconds of this script and
    its waited-for children) -- differences over a run give the CPU other processes took meanwhile."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    mine = sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_CHILDREN),
                                                  resource.getrusage(resource.RUSAGE_SELF)))
    return (f[0] + f[1] + f[2]) / HZ, (f[7] if len(f) > 7 else 0) / HZ, mine


class NsCpu(threading.Thread):
    """CPU seconds of every process inside the rank namespaces, polled every 0.2 s (last value seen per
    process). Open MPI's remote daemons and ranks are not this script's waited-for children, so rusage
    alone misses them."""

    def __init__(self, namespaces):
        super().__init__(daemon=True)
        self.inodes = {os.stat(f"/run/netns/{ns}").st_ino for ns in namespaces}
        self.seen = {}
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(0.2):
            for pid in os.listdir("/proc"):
                try:
                    if not pid.isdigit() or os.stat(f"/proc/{pid}/ns/net").st_ino not in self.inodes:
                        continue
                    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    self.seen[(pid, f[19])] = (int(f[11]) + int(f[12])) / HZ  # utime + stime; key: pid, starttime
                except (OSError, IndexError, ValueError):
                    pass

    def total(self):
        self.stop.set()
        self.join()
        return sum(self.seen.values())


def loadavg():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--nranks", type=int, default=2, help="ranks = namespaces (default 2)")
    ap.add_argument("--runs", type=int, default=3, help="runs of every program; the table takes the median (3)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--min-bytes", type=parse_size, default=parse_size("1K"))
    ap.add_argument("--max-bytes", type=parse_size, default=parse_size("64M"))
    ap.add_argument("--factor", type=float, default=2)
    ap.add_argument("--rate", help="shape every eth0 (egress) with tbf at this rate, e.g. 10gbit (default: off)")
    ap.add_argument("--build", default=str(REPO / "build-bench"), help="build directory (default build-bench)")
    ap.add_argument("--no-build", action="store_true", help="use the build directory as it is")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help="subset of " + ",".join(PROGRAMS))
    ap.add_argument("--timeout", type=int, default=600, help="seconds per program run (600)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results"), help="report directory")
    o = ap.parse_args()
    if o.rate:
        parse_rate(o.rate)
    progs = [p for p in o.programs.split(",") if p]
    if any(p not in PROGRAMS for p in progs) or o.nranks < 2:
        ap.error(f"--programs takes {','.join(PROGRAMS)}; --nranks >= 2")
    why = netns.unavailable_reason()
    if why:
        print(f"run_netns_allreduce: skipped: {why}", file=sys.stderr)
        return 77

    if not o.no_build:
        print(f"== building in {o.build}", flush=True)
        subprocess.run(["cmake", "-S", str(REPO), "-B", o.build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                        "-DHETCCL_BUILD_BENCH=ON", "-DHETCCL_BUILD_TESTS=OFF", "-DHETCCL_BUILD_CUDA=OFF"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["ninja", "-C", o.build, "-j2", "hetccl-perf", "hetccl-run", "mpi_allreduce", "gloo_allreduce"],
                       check=True, stdout=subprocess.DEVNULL)
    b = Bench(o)
    for p in progs:
        exe = {"hetccl_tcp": b.perf, "hetccl_ucx": b.perf, "mpi": b.mpi, "mpi_ucx": b.mpi, "gloo": b.gloo}[p]
        if not exe.exists():
            print(f"run_netns_allreduce: {exe} was not built (library missing?)", file=sys.stderr)
            return 1
    if {"mpi", "mpi_ucx"} & set(progs) and not shutil.which("mpirun"):
        print("run_netns_allreduce: mpirun not found (HETCCL_BENCH_DEPS=1 scripts/install-deps.sh)", file=sys.stderr)
        return 1

    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H%M")
    out_md = Path(o.out) / f"netns_allreduce_{o.nranks}r_{stamp}.md"
    raw = Path(o.out) / f"netns_allreduce_{o.nranks}r_{stamp}_raw"
    raw.mkdir(parents=True, exist_ok=True)
    load_start = loadavg()
    t_start = time.time()
    failures = []
    loads = [load_start]  # before every program run (also in the raw dir's load.tsv)
    others = []  # per program run: share of the machine's CPU time used by processes not of this benchmark
    with open(raw / "load.tsv", "w") as f:
        f.write("run\tloadavg before (1/5/15 min)\twall s\tbenchmark CPU s\tother processes' CPU s\tsteal s\n")
    try:
        b.setup()
        if {"mpi", "mpi_ucx"} & set(progs):
            failures += [f"mpi_placement.txt: {x}" for x in b.mpi_placement(raw / "mpi_placement.txt")]
        for run in range(1, o.runs + 1):
            for p in progs:
                log = raw / f"{p}_run{run}.txt"
                loads.append(loadavg())
                print(f"== run {run}/{o.runs}: {PROGRAMS[p]} ({o.nranks} ranks, load {loads[-1]})", flush=True)
                watch = NsCpu(b.cluster.ns)
                watch.start()
                t0, c0 = time.time(), cpu_times()
                problems = b.run_once(p, log)
                wall, c1 = time.time() - t0, cpu_times()
                mine, steal = max(c1[2] - c0[2], watch.total()), c1[1] - c0[1]
                other = max(0.0, (c1[0] - c0[0]) - mine)
                others.append(other / (wall * os.cpu_count()))
                with open(raw / "load.tsv", "a") as f:
                    f.write(f"{log.name}\t{loads[-1]}\t{wall:.1f}\t{mine:.1f}\t{other:.1f}\t{steal:.1f}\n")
                print(f"   {wall:.1f} s, CPU: benchmark {mine:.1f} s, other processes {other:.1f} s" +
                      (": FAILED: " + "; ".join(problems) if problems else ""), flush=True)
                failures += [f"{log.name}: {x}" for x in problems]
    finally:
        b.cleanup()
    load_end = loadavg()
    loads.append(load_end)
    peak = max(float(x.split()[0]) for x in loads)

    summary = subprocess.run(
        [sys.executable, str(REPO / "bench" / "summarize_allreduce.py"), str(raw), str(o.runs), "--nranks",
         str(o.nranks), "--programs", ",".join(f"{p}={PROGRAMS[p]}" for p in progs),
         "--ratios", ",".join(f"{p}=ratio {PROGRAMS[p]}" for p in progs if p.startswith("hetccl"))],
        capture_output=True, text=True, check=True).stdout
    loaded = float(load_start.split()[0]) > 2.5 or max(others, default=0) > 0.1
    with open(out_md, "w") as f:
        w = lambda s="": print(s, file=f)  # noqa: E731
        w(f"# CPU all-reduce between network namespaces: hetccl (tcp, ucx) vs Open MPI vs Gloo "
          f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC})")
        w()
        w(f"{o.nranks} ranks, each a separate \"host\": its own network namespace, eth0 = 10.99.0.<rank+1>/24, all "
          "joined by a bridge (tests/netns/netns.py). float32 sum. **The veth links between namespaces of one "
          "machine are memory copies in the kernel, not a NIC**: these numbers compare the libraries' paths "
          "through the kernel TCP stack (every library here uses TCP sockets over eth0) on one machine, with all "
          f"ranks sharing its {os.cpu_count()} cores; they are not network measurements.")
        w()
        w("Link shaping: " + (f"tbf at {o.rate} on every rank's eth0 (egress), burst 1 ms of the rate (>= 128 KiB), "
                              "latency 20 ms." if o.rate else "none (veth at memory speed, MTU 1500)."))
        w()
        w(f"Each cell: bus bandwidth in GB/s (busbw = algbw * 2(n-1)/n) from the median out-of-place time of "
          f"{o.runs} runs, and that time per iteration (us, max over ranks, mean of {o.iters} iterations after "
          f"{o.warmup} warm-up). Every result is checked exactly (#wrong must be 0, out-of-place and in-place; "
          "the script fails otherwise). Ratio = hetccl busbw / max(Open MPI busbw (either pml), Gloo busbw): above 1, "
          "hetccl is faster than the best baseline at that size.")
        w()
        w("## Machine")
        w()
        for line in versions(REPO):
            w(line)
        w(f"- load average (1/5/15 min) at start: {load_start}; at end: {load_end}; highest 1-min value before a "
          f"program run: {peak:.2f} (the benchmark's own ranks and their threads count in it: a run raises the "
          f"load by about its number of busy threads); wall time {time.time() - t_start:.0f} s")
        w(f"- CPU time of other processes (machine busy time in user/nice/system minus that of this script, its "
          f"children and every process in the rank namespaces) during the program runs: "
          f"at most {100 * max(others, default=0):.0f}% of the machine, median "
          f"{100 * statistics.median(others) if others else 0:.0f}% (per run: `load.tsv` in the raw directory)")
        if loaded:
            w(f"- **the machine was loaded (1-min load average above 2.5 at the start, or other processes took "
              f"more than 10% of the {os.cpu_count()} cores during a run): they competed with the ranks for the "
              "cores; re-run before trusting the numbers**")
        w()
        w("## Results")
        w()
        w(summary.rstrip())
        w()
        w("## Commands")
        w()
        w(f"`{' '.join(shlex.quote(a) for a in sys.argv)}`, as root. Every run of a program starts these "
          "processes (base environment: this script's, without HETCCL_/NCCL_/OMPI_/PMIX_/SLURM_/UCX_ variables; "
          "HETCCL_SECRET is a fresh `secrets.token_hex(32)` per run and the root port goes up by one per run; "
          "`hcr<tag>r<k>` is rank k's namespace):")
        w()
        w("```")
        for p in progs:
            w(f"# {PROGRAMS[p]}")
            for line in b.commands.get(p, []):
                w(line)
        w("```")
        w()
        w("Open MPI's rsh agent (the hostfile lists `10.99.0.<k> slots=1`, one line per rank):")
        w()
        w("```sh")
        w(b.agent_text.rstrip())
        w("```")
        w()
        w(f"Raw outputs: `{raw.name}/` (`<program>_run<r>.txt` is rank 0's or mpirun's output, `.rank<k>.txt` the "
          f"other ranks'). Failed checks: {len(failures)}.")
        for x in failures:
            w(f"- {x}")
    print(f"== wrote {out_md}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
