#!/usr/bin/env python3
"""Checks the deployment examples under deploy/kubernetes: what a mixed-vendor hetccl job needs to start
and to find itself, beyond YAML syntax. Exit 0 when every check passes, 1 with one line per problem.

Per Volcano Job (batch.volcano.sh/v1alpha1):
  - schedulerName volcano; minAvailable equals the sum of the tasks' replicas (gang scheduling: a collective
    job with a missing rank only waits); the svc plugin (pods find each other by name);
  - every task: one container with image, command; restartPolicy Never or OnFailure;
  - exactly one GPU resource, nvidia.com/gpu or amd.com/gpu, and the drop-in its vendor needs in LD_PRELOAD
    (libnccl.so.2 for NVIDIA, librccl.so for AMD);
  - HETCCL_SECRET from a secretKeyRef (never a literal), the same secret and key in every task;
  - MASTER_ADDR, MASTER_PORT, NNODES equal in every task; NNODES equals the number of pods; NODE_RANKs are
    0..NNODES-1, each once; MASTER_ADDR names pod 0 of one task through the svc plugin
    (<job>-<task>-0.<job>);
  - the container exposes MASTER_PORT and MASTER_PORT+1 (hetccl's root listens there under torchrun);
  - GPUS_PER_NODE equals the GPU resource count;
  - /dev/shm mounted from a memory volume (the shm transport and the stream pipeline's rings live there).
"""
import sys
from pathlib import Path

import yaml

GPU_RESOURCES = {"nvidia.com/gpu": "libnccl.so.2", "amd.com/gpu": "librccl.so"}


def env_of(container):
    out = {}
    for e in container.get("env", []):
        out[e["name"]] = e.get("value", e.get("valueFrom"))
    return out


def check_job(job, where, problems):
    def bad(msg):
        problems.append(f"{where}: {msg}")

    name = job.get("metadata", {}).get("name")
    spec = job.get("spec", {})
    tasks = spec.get("tasks", [])
    if spec.get("schedulerName") != "volcano":
        bad("schedulerName must be volcano")
    if "svc" not in (spec.get("plugins") or {}):
        bad("the svc plugin is needed for pods to resolve each other by name")
    pods = sum(int(t.get("replicas", 0)) for t in tasks)
    if spec.get("minAvailable") != pods:
        bad(f"minAvailable {spec.get('minAvailable')} != {pods} pods: the gang must be the whole job")
    shared = {}
    node_ranks = []
    for t in tasks:
        tw = f"task {t.get('name')}"
        pod = t.get("template", {}).get("spec", {})
        containers = pod.get("containers", [])
        if len(containers) != 1:
            bad(f"{tw}: expected one container, found {len(containers)}")
            continue
        c = containers[0]
        if not c.get("image") or not c.get("command"):
            bad(f"{tw}: container needs an image and a command")
        if pod.get("restartPolicy") not in ("Never", "OnFailure"):
            bad(f"{tw}: restartPolicy must be Never or OnFailure")
        env = env_of(c)
        limits = c.get("resources", {}).get("limits", {})
        gpus = [r for r in GPU_RESOURCES if r in limits]
        if len(gpus) != 1:
            bad(f"{tw}: exactly one of {sorted(GPU_RESOURCES)} in resources.limits, found {gpus}")
        else:
            want = GPU_RESOURCES[gpus[0]]
            if not str(env.get("LD_PRELOAD", "")).endswith(want):
                bad(f"{tw}: {gpus[0]} needs LD_PRELOAD=.../{want}, found {env.get('LD_PRELOAD')!r}")
            if str(env.get("GPUS_PER_NODE")) != str(limits[gpus[0]]):
                bad(f"{tw}: GPUS_PER_NODE {env.get('GPUS_PER_NODE')} != {gpus[0]} {limits[gpus[0]]}")
        secret = env.get("HETCCL_SECRET")
        if not isinstance(secret, dict) or "secretKeyRef" not in secret:
            bad(f"{tw}: HETCCL_SECRET must come from a secretKeyRef, never a literal")
        for key in ("MASTER_ADDR", "MASTER_PORT", "NNODES"):
            shared.setdefault(key, set()).add(str(env.get(key)))
        shared.setdefault("secret", set()).add(yaml.safe_dump(secret, sort_keys=True))
        node_ranks.append(env.get("NODE_RANK"))
        ports = {p.get("containerPort") for p in c.get("ports", [])}
        try:
            mport = int(env.get("MASTER_PORT"))
            if not {mport, mport + 1} <= ports:
                bad(f"{tw}: containerPorts must include MASTER_PORT {mport} and {mport + 1} (hetccl's root)")
        except (TypeError, ValueError):
            bad(f"{tw}: MASTER_PORT {env.get('MASTER_PORT')!r} is not a port")
        mounts = {m.get("mountPath"): m.get("name") for m in c.get("volumeMounts", [])}
        vols = {v.get("name"): v for v in pod.get("volumes", [])}
        shm = vols.get(mounts.get("/dev/shm"), {})
        if shm.get("emptyDir", {}).get("medium") != "Memory":
            bad(f"{tw}: /dev/shm must be a memory emptyDir (shm transport, stream pipeline rings)")
    for key, values in shared.items():
        if len(values) != 1:
            bad(f"{key} differs between tasks: {sorted(values)}")
    nnodes = next(iter(shared.get("NNODES", {"0"})))
    if nnodes != str(pods):
        bad(f"NNODES {nnodes} != {pods} pods")
    if sorted(str(r) for r in node_ranks) != [str(i) for i in range(len(node_ranks))]:
        bad(f"NODE_RANKs {node_ranks} are not 0..{len(node_ranks) - 1} once each")
    addr = next(iter(shared.get("MASTER_ADDR", {""})))
    if addr not in {f"{name}-{t.get('name')}-0.{name}" for t in tasks}:
        bad(f"MASTER_ADDR {addr!r} is not pod 0 of a task (<job>-<task>-0.<job>)")


def main(paths):
    problems = []
    files = [Path(p) for p in paths] or sorted(Path(__file__).parent.glob("kubernetes/*.yaml"))
    if not files:
        problems.append("no manifests found")
    for f in files:
        try:
            docs = [d for d in yaml.safe_load_all(f.read_text()) if d]
        except yaml.YAMLError as e:
            problems.append(f"{f}: not YAML: {e}")
            continue
        for i, d in enumerate(docs):
            where = f"{f.name}[{i}] {d.get('kind')}/{d.get('metadata', {}).get('name')}"
            if not d.get("apiVersion") or not d.get("kind") or not d.get("metadata", {}).get("name"):
                problems.append(f"{where}: apiVersion, kind and metadata.name are required")
            if d.get("kind") == "Job" and d.get("apiVersion", "").startswith("batch.volcano.sh/"):
                check_job(d, where, problems)
    for p in problems:
        print(p)
    print(f"{len(files)} manifest file(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
