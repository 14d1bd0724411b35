"""Clusters of network namespaces for hetccl's fault tests: every rank is a separate host.

A cluster is one "switch" namespace holding a bridge, and one namespace per rank joined to the bridge by
a veth pair (eth0 inside the rank's namespace, 10.99.0.<rank+1>/24). Addresses exist only inside these
namespaces, so nothing touches the machine's own network. Faults act on a rank's eth0 from inside its
namespace: link down, drop everything (nftables), degrade (random loss + rate limit, or netem where the
kernel has it). Needs root and iproute2; nftables for the drop/degrade faults.
"""
import os
import shutil
import subprocess

SUBNET = "10.99.0."


def run(*args, check=True, stdin=None):
    """Runs a command; raises RuntimeError with its stderr when it fails and `check` is set."""
    p = subprocess.run(list(args), input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def unavailable_reason():
    """Why network-namespace tests cannot run here, or None when they can."""
    if os.geteuid() != 0:
        return "not root (network namespaces need CAP_NET_ADMIN)"
    if not shutil.which("ip"):
        return "`ip` (iproute2) is not installed"
    probe = f"hcprobe{os.getpid()}"
    p = run("ip", "netns", "add", probe, check=False)
    if p.returncode != 0:
        return f"`ip netns add` failed: {p.stderr.strip()}"
    run("ip", "netns", "del", probe, check=False)
    return None


def has_netem():
    """True when the kernel has the netem qdisc (many CI kernels do not)."""
    probe = f"hcnetem{os.getpid()}"
    run("ip", "netns", "add", probe)
    try:
        return run("ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
                   check=False).returncode == 0
    finally:
        run("ip", "netns", "del", probe, check=False)


class Cluster:
    """`nranks` rank namespaces behind one bridge. Names carry `tag`, so clusters can coexist."""

    def __init__(self, tag, nranks):
        self.tag = tag
        self.nranks = nranks
        self.switch = f"hcsw{tag}"
        self.ns = [f"hcr{tag}r{i}" for i in range(nranks)]
        self.extra = []

    @staticmethod
    def addr(rank):
        return f"{SUBNET}{rank + 1}"

    def create(self):
        self.destroy()  # leftovers of an interrupted run with the same tag
        run("ip", "netns", "add", self.switch)
        run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.switch, "link", "set", "br0", "up")
        for i, ns in enumerate(self.ns):
            run("ip", "netns", "add", ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", self.switch, "link", "add", f"p{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            run("ip", "-n", self.switch, "link", "set", f"p{i}", "master", "br0", "up")
            run("ip", "-n", ns, "addr", "add", f"{self.addr(i)}/24", "dev", "eth0")
            run("ip", "-n", ns, "link", "set", "eth0", "up")

    def add_host(self, name, host_number):
        """One more namespace on the bridge (e.g. an attacker) at 10.99.0.<host_number>; returns its name."""
        ns = f"hcr{self.tag}{name}"
        run("ip", "netns", "add", ns)
        run("ip", "-n", ns, "link", "set", "lo", "up")
        port = f"x{name}"[:15]
        run("ip", "-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
        run("ip", "-n", self.switch, "link", "set", port, "master", "br0", "up")
        run("ip", "-n", ns, "addr", "add", f"{SUBNET}{host_number}/24", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "eth0", "up")
        self.extra.append(ns)
        return ns

    def listening_ports(self, rank):
        """TCP ports listening in the rank's namespace."""
        out = run("ip", "netns", "exec", self.ns[rank], "ss", "-ltnH").stdout
        ports = set()
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 4 and ":" in fields[3]:
                ports.add(int(fields[3].rsplit(":", 1)[1]))
        return sorted(ports)

    def destroy(self):
        for ns in self.ns + getattr(self, "extra", []) + [self.switch]:
            run("ip", "netns", "del", ns, check=False)

    def prefix(self, rank):
        """Command prefix that runs a program inside the rank's namespace (same pid: ip execs it)."""
        return ["ip", "netns", "exec", self.ns[rank]]

    # ---- faults (each undone by restore) ----

    def link_down(self, rank):
        run("ip", "-n", self.ns[rank], "link", "set", "eth0", "down")

    def drop_all(self, rank):
        rules = ("table inet hetccl_fault {\n"
                 " chain in { type filter hook input priority 0; iifname \"eth0\" drop; }\n"
                 " chain out { type filter hook output priority 0; oifname \"eth0\" drop; }\n"
                 "}\n")
        run("ip", "netns", "exec", self.ns[rank], "nft", "-f", "-", stdin=rules)

    def degrade(self, rank, loss_percent, delay_ms, netem):
        """Random loss both ways and added delay: netem when available, else nftables loss + a tbf rate
        limit (its queue adds the delay)."""
        if netem:
            run("ip", "netns", "exec", self.ns[rank], "tc", "qdisc", "add", "dev", "eth0", "root", "netem",
                "loss", f"{loss_percent}%", "delay", f"{delay_ms}ms")
            return
        rules = ("table inet hetccl_fault {\n"
                 f" chain in {{ type filter hook input priority 0; iifname \"eth0\" numgen random mod 100 < {loss_percent} drop; }}\n"
                 f" chain out {{ type filter hook output priority 0; oifname \"eth0\" numgen random mod 100 < {loss_percent} drop; }}\n"
                 "}\n")
        run("ip", "netns", "exec", self.ns[rank], "nft", "-f", "-", stdin=rules)
        run("ip", "netns", "exec", self.ns[rank], "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "100mbit",
            "burst", "32kb", "latency", f"{delay_ms}ms")

    def restore(self, rank):
        ns = self.ns[rank]
        run("ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "hetccl_fault", check=False)
        run("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "eth0", "root", check=False)
        run("ip", "-n", ns, "link", "set", "eth0", "up")
