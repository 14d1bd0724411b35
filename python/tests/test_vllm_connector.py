"""hetccl.vllm_connector.HetcclConnector driven as vLLM v1 drives it, without vLLM: prefill and decode engines as
separate processes over 127.0.0.1 (hetccl agents, the shared-memory windows of one host).

Each engine is a child process (this file run as `python3 test_vllm_connector.py --engine`) holding a fake
scheduler and a fake worker, each with its own HetcclConnector (role SCHEDULER / WORKER; the metadata goes from
one to the other pickled, as between vLLM's EngineCore and its workers), a paged KV cache of NumPy float16
arrays -- 4 layers x 64 blocks x 16 tokens x 2 heads x 16 dims; layers 0-2 in FlashAttention's layout
(2, blocks, 16, 2, 16) (K and V planes), layer 3 in FlashInfer's (blocks, 2, 16, 2, 16) -- and a block pool
handing out shuffled (non-contiguous) block ids. The test sends it commands (JSON lines on stdin; the spawning
and the pipe are agent_child.py's ChildProcess, as for test_agent.py's agents); between commands the engine keeps
stepping.

The order replayed, per engine step (vLLM v1's Scheduler.schedule / GPUModelRunner / update_from_output):
  scheduler.schedule():
    for each waiting request (not yet scheduled):
      connector.get_num_new_matched_tokens(request, num_computed_tokens=0) -> (n, load_async)
      allocate blocks (the prompt's on the prefill; the n external tokens' on the decode)
      connector.update_state_after_alloc(request, blocks, n)
      load_async: the request waits for its remote KV (WAITING_FOR_REMOTE_KVS), else it runs this step
    meta = connector.build_connector_meta(scheduler_output)          (pickled to the worker)
  worker (execute_model):
    connector.bind_connector_metadata(meta); connector.start_load_kv(forward_context)
    per layer: connector.wait_for_layer_load(name); attention (the prefill writes the layer's KV of its running
      requests: a pattern of (prefill engine, its seed, request, layer, plane, block position) -- only that
      prefill can produce it); connector.save_kv_layer(name, kv, attn_metadata)
    connector.wait_for_save()
    finished_sending, finished_recving = connector.get_finished(finished_req_ids of the step)
    invalid = connector.get_block_ids_with_load_errors(); connector.clear_connector_metadata()
  scheduler.update_from_output():
    finished_recving: the request's load ended; blocks in `invalid`: it failed (vLLM's kv_load_failure_policy
      "fail"), else it runs in the next step (the decode checks every byte of every block of every layer)
    finished_sending: the prefill frees the request's blocks
    requests that finished this step (prefill: FINISHED_LENGTH_CAPPED after 1 token; decode: FINISHED_STOPPED):
      (delay_free, params) = connector.request_finished(request, block_ids); blocks freed now unless delay_free
  aborts (scheduler.finish_requests, FINISHED_ABORTED): request_finished(request, block_ids) too; a decode
    request whose read was posted keeps its blocks until get_finished reports it (the read may still write them).

Every wait has a deadline. Cost on the 2-core machine: 4.7-5 s at load 2.5-3.7, ~7.5 s at load 5.5 (9 engine
processes of ~0.3 s start each; the prefill's abort timeout of 3 s is most of it).
"""

import json
import os
import pickle
import random
import select
import subprocess
import sys
import time
import zlib
from types import SimpleNamespace

import numpy as np

import hetccl
from agent_child import ChildProcess, child_env

CHILD = __name__ == "__main__" and sys.argv[1:2] == ["--engine"]
if not CHILD:
    import pytest

    pytestmark = pytest.mark.skipif(not hetccl.agent_available(),
                                    reason="the loaded libhetccl does not export the agent API of hetccl_agent.h")

LAYERS, NBLOCKS, BLOCK, HEADS, DIM = 4, 64, 16, 2, 16
AGENT_TIMEOUT = 5.0
RPC_TIMEOUT = 30.0


def layer_names():
    return [f"model.layers.{i}.self_attn.attn" for i in range(LAYERS)]


def cache_device(kind):
    """The torch device of this engine's cache ("cuda:0"...) from HETCCL_KV_TEST_DEVICES ("prefill=cuda:0,
    decode=cuda:1"; GPU runs by hand, bench/results/vllm_connector_h200x2_2026-11-29), else None: NumPy."""
    for item in filter(None, os.environ.get("HETCCL_KV_TEST_DEVICES", "").split(",")):
        k, _, dev = item.partition("=")
        if k == kind:
            return dev
    return None


def make_caches(device=None):
    out = {}
    for i, n in enumerate(layer_names()):
        shape = (2, NBLOCKS, BLOCK, HEADS, DIM) if i < LAYERS - 1 else (NBLOCKS, 2, BLOCK, HEADS, DIM)
        if device:
            import torch

            if device.startswith("cuda"):
                torch.cuda.set_device(device)  # as a vLLM worker does for its GPU
            out[n] = torch.zeros(shape, dtype=torch.float16, device=device)
        else:
            out[n] = np.zeros(shape, np.float16)
    return out


def block_planes(cache, b):
    """Block b of a layer, one view per plane (what the connector moves as ranges)."""
    if cache.shape[0] == 2 and cache.shape[1] == NBLOCKS:
        return [cache[0, b], cache[1, b]]
    return [cache[b]]


def plane_bytes(p):
    return p.numel() * 2 if hasattr(p, "numel") else p.nbytes


def write_plane(p, data):
    """Stores uint8 `data` (NumPy) into plane `p` (a NumPy view, or a torch tensor on a GPU)."""
    if hasattr(p, "numel"):
        import torch

        p.reshape(-1).view(torch.uint8).copy_(torch.from_numpy(data))
    else:
        p.reshape(-1).view(np.uint8)[:] = data


def read_plane(p):
    """Plane `p`'s bytes as a NumPy uint8 array (copied to the host for a GPU tensor)."""
    if hasattr(p, "numel"):
        import torch

        return p.reshape(-1).view(torch.uint8).cpu().numpy()
    return p.reshape(-1).view(np.uint8)


def pattern(engine, seed, rid, layer, plane, pos, n):
    key = zlib.crc32(f"{engine}/{seed}/{rid}/{layer}/{plane}/{pos}".encode())
    x = (np.arange(n, dtype=np.uint64) + np.uint64(key)) * np.uint64(0x9E3779B97F4A7C15)
    return ((x >> np.uint64(40)) % np.uint64(255) + np.uint64(1)).astype(np.uint8)  # never 0


# ---- the engine child ---------------------------------------------------------------------------------------

class Engine:
    def __init__(self, engine_id, kind, extra, seed=0):
        from hetccl.vllm_connector import HetcclConnector, KVConnectorRole

        self.id, self.kind, self.seed = engine_id, kind, seed
        vcfg = SimpleNamespace(
            kv_transfer_config=SimpleNamespace(engine_id=engine_id, kv_role="kv_both", kv_connector_extra_config=extra,
                                               is_kv_producer=True),
            cache_config=SimpleNamespace(block_size=BLOCK, num_gpu_blocks=NBLOCKS))
        self.sched = HetcclConnector(vcfg, KVConnectorRole.SCHEDULER)
        self.worker = HetcclConnector(vcfg, KVConnectorRole.WORKER)
        self.caches = make_caches(cache_device(kind))
        self.worker.register_kv_caches(self.caches)
        self.free = list(range(NBLOCKS))
        random.Random(zlib.crc32(engine_id.encode())).shuffle(self.free)
        self.reqs = {}           # rid -> request (SimpleNamespace)
        self.waiting = []        # rids not yet scheduled
        self.loading = set()     # rids waiting for their remote KV
        self.running = []        # rids computed this step (prefill: write KV; decode: check KV)
        self.held = {}           # prefill: rid -> blocks kept for a decode (delay_free)
        self.freed = []          # prefill: rids whose held blocks were freed, in order
        self.results = {}        # decode: rid -> "ok" / "failed" / "aborted" / "bad: ..."
        self.aborted_loading = set()
        self.finished_ids = set()  # finished in the previous step: the next get_finished's argument
        self.pending_abort = []  # decode: rids to abort right after their read is posted

    def alloc(self, n):
        if n > len(self.free):
            raise RuntimeError(f"out of blocks: {n} wanted, {len(self.free)} free")
        out, self.free = self.free[:n], self.free[n:]
        return out

    def release(self, blocks):
        for b in blocks:  # a freed block is zeroed: stale bytes of a failed read never pass a check
            for c in self.caches.values():
                for p in block_planes(c, b):
                    write_plane(p, np.zeros(plane_bytes(p), np.uint8))
        self.free.extend(blocks)

    def add(self, rid, ntokens, params, expect=None):
        req = SimpleNamespace(request_id=rid, prompt_token_ids=list(range(ntokens)), kv_transfer_params=params,
                              status=SimpleNamespace(name="WAITING"), block_ids=[], expect=expect, ntokens=ntokens)
        self.reqs[rid] = req
        self.waiting.append(rid)
        return req

    def abort(self, rid):
        """scheduler.finish_requests(rid, FINISHED_ABORTED)."""
        req = self.reqs[rid]
        req.status = SimpleNamespace(name="FINISHED_ABORTED")
        if rid in self.waiting:
            self.waiting.remove(rid)
        delay, _ = self.sched.request_finished(req, req.block_ids)
        assert not delay
        self.results[rid] = "aborted"
        if rid in self.loading:
            self.aborted_loading.add(rid)  # blocks kept until get_finished reports the read
        else:
            self.release(req.block_ids)
        self.finished_ids.add(rid)

    def step(self):
        running = []
        for rid in list(self.waiting):  # schedule()
            req = self.reqs[rid]
            n, load_async = self.sched.get_num_new_matched_tokens(req, 0)
            assert n >= 0 and (n > 0 or not load_async)
            ntok = n if load_async else req.ntokens
            req.block_ids = self.alloc(-(-ntok // BLOCK))
            self.sched.update_state_after_alloc(req, req.block_ids if n else [], n)
            self.waiting.remove(rid)
            if load_async:
                req.status = SimpleNamespace(name="WAITING_FOR_REMOTE_KVS")
                self.loading.add(rid)
            else:
                running.append(rid)
        meta = pickle.loads(pickle.dumps(self.sched.build_connector_meta(SimpleNamespace())))
        w = self.worker  # execute_model()
        w.bind_connector_metadata(meta)
        w.start_load_kv(SimpleNamespace())
        for rid in self.pending_abort:  # aborted while its read runs
            self.abort(rid)
        self.pending_abort = []
        for li, name in enumerate(layer_names()):
            w.wait_for_layer_load(name)
            if self.kind == "prefill":
                for rid in running:
                    for pos, b in enumerate(self.reqs[rid].block_ids):
                        for pi, p in enumerate(block_planes(self.caches[name], b)):
                            write_plane(p, pattern(self.id, self.seed, rid, li, pi, pos, plane_bytes(p)))
            w.save_kv_layer(name, self.caches[name], None)
        w.wait_for_save()
        fin, self.finished_ids = self.finished_ids, set()
        sending, recving = w.get_finished(fin)
        invalid = w.get_block_ids_with_load_errors()
        w.clear_connector_metadata()
        for rid in recving or ():  # update_from_output()
            req = self.reqs[rid]
            self.loading.discard(rid)
            if rid in self.aborted_loading:
                self.aborted_loading.discard(rid)
                self.release(req.block_ids)
            elif invalid & set(req.block_ids):
                self.results[rid] = "failed"
                self.release(req.block_ids)
                self.finished_ids.add(rid)
            else:
                self.check(req)
                req.status = SimpleNamespace(name="FINISHED_STOPPED")
                delay, _ = self.sched.request_finished(req, req.block_ids)
                assert not delay
                self.release(req.block_ids)
                self.finished_ids.add(rid)
        for rid in sending or ():
            self.release(self.held.pop(rid))
            self.freed.append(rid)
        for rid in running:  # prefill: one token, then FINISHED_LENGTH_CAPPED
            req = self.reqs[rid]
            req.status = SimpleNamespace(name="FINISHED_LENGTH_CAPPED")
            delay, params = self.sched.request_finished(req, req.block_ids)
            req.out_params = params
            if delay:
                self.held[rid] = req.block_ids
            else:
                self.release(req.block_ids)
            self.finished_ids.add(rid)

    def check(self, req):
        """Every byte of every block of every layer against the prefill's pattern."""
        eng, seed = req.expect
        for li, name in enumerate(layer_names()):
            for pos, b in enumerate(req.block_ids):
                for pi, p in enumerate(block_planes(self.caches[name], b)):
                    got = read_plane(p)
                    exp = pattern(eng, seed, req.request_id, li, pi, pos, got.size)
                    bad = np.flatnonzero(got != exp)
                    if bad.size:
                        self.results[req.request_id] = (f"bad: layer {li} plane {pi} block {b} (position {pos}): "
                                                        f"{bad.size} bytes differ, first at {int(bad[0])}")
                        return
        self.results[req.request_id] = "ok"

    # commands

    def c_prefill(self, reqs, timeout=10.0):
        for rid, n in reqs:
            self.add(rid, n, {"do_remote_decode": True})
        deadline = time.monotonic() + timeout
        while any(not hasattr(self.reqs[r], "out_params") for r, _ in reqs):
            if time.monotonic() > deadline:
                raise RuntimeError("prefill did not finish")
            self.step()
        return {r: self.reqs[r].out_params for r, _ in reqs}

    def c_submit(self, reqs):
        """reqs: [rid, ntokens, params, [prefill engine, seed], mode]; mode "normal", "abort_waiting" (aborted
        before it is scheduled), "abort_loading" (aborted right after its read was posted)."""
        for rid, n, params, expect, mode in reqs:
            self.add(rid, n, dict(params), expect)
            if mode == "abort_waiting":
                self.abort(rid)
            elif mode == "abort_loading":
                self.pending_abort.append(rid)

    def c_wait_results(self, rids, timeout):
        t0 = time.monotonic()
        while any(r not in self.results for r in rids) or self.loading:
            if time.monotonic() - t0 > timeout:
                break
            self.step()
            time.sleep(0.001)
        return {"results": {r: self.results.get(r) for r in rids}, "took": time.monotonic() - t0,
                "free_blocks": len(self.free), "loading": sorted(self.loading)}

    def c_status(self):
        return {"held": sorted(self.held), "freed": self.freed, "free_blocks": len(self.free)}

    def c_wait_freed(self, rids, timeout):
        t0 = time.monotonic()
        while any(r not in self.freed for r in rids) and time.monotonic() - t0 < timeout:
            self.step()
            time.sleep(0.002)
        return dict(self.c_status(), took=time.monotonic() - t0)


def _child_main():
    out = sys.stdout
    sys.stdout = sys.stderr
    eng = None
    buf = b""
    fd = sys.stdin.fileno()
    while True:
        r, _, _ = select.select([fd], [], [], 0.005)
        if not r:
            if eng is not None:
                eng.step()
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            cmd = json.loads(line)
            try:
                if cmd["fn"] == "create":
                    eng = Engine(**cmd["args"])
                    res = eng.worker.agent.name
                elif cmd["fn"] == "exit":
                    if eng is not None:
                        eng.worker.shutdown()
                        eng.sched.shutdown()
                    out.write(json.dumps({"ok": None}) + "\n")
                    out.flush()
                    return
                else:
                    res = getattr(eng, "c_" + cmd["fn"])(**cmd["args"])
                out.write(json.dumps({"ok": res}) + "\n")
            except Exception as e:  # noqa: BLE001 - reported to the test
                import traceback
                traceback.print_exc()
                out.write(json.dumps({"err": f"{type(e).__name__}: {e}"}) + "\n")
            out.flush()


# ---- the test side -------------------------------------------------------------------------------------------

class EngineProc(ChildProcess):
    """An engine child (this file run with --engine), spawned and spoken to as agent_child.py's ChildProcess."""

    failure = AssertionError
    log_sep = "\n"
    exited = "exited ({})"
    rpc_timeout = RPC_TIMEOUT

    def __init__(self, tmp, engine_id, kind, extra, seed=0, env_extra=None):
        super().__init__(__file__, "--engine", tmp, engine_id, f"{engine_id}.log", child_env("window", env_extra))
        self.send("create", engine_id=engine_id, kind=kind, extra=extra, seed=seed)

    def recv(self, timeout=None):
        res = self.recv_json(timeout)
        if "err" in res:
            raise AssertionError(f"{self.label}: {res['err']}\n{self.log_tail()}")
        return res["ok"]

    def close(self):
        if self.p.poll() is not None:
            return None
        try:
            self.send("exit")
            self.recv(15)
            self.p.wait(15)
        except (AssertionError, OSError, subprocess.TimeoutExpired) as e:
            self.kill()
            return f"{self.label}: closing failed: {e}"
        return None if self.p.returncode == 0 else f"{self.label}: exit status {self.p.returncode}"


if not CHILD:
    @pytest.fixture
    def engines(tmp_path):
        secret = os.urandom(32).hex()
        procs = []

        def start(engine_id, kind, seed=0, env=None, **extra):
            cfg = dict(meta_dir=str(tmp_path / "meta"), secret=secret, listen="127.0.0.1:0", timeout=AGENT_TIMEOUT,
                       num_blocks=NBLOCKS)
            cfg.update(extra)
            p = EngineProc(str(tmp_path), engine_id, kind, cfg, seed, env)
            procs.append(p)
            return p

        yield start
        problems = [why for why in (p.close() for p in procs) if why]
        for p in procs:
            tail = p.log_tail(1500).strip()
            if tail:
                print(f"--- {p.label} log:\n{tail}")
        assert not problems, "\n".join(problems)


def created(*procs):
    for p in procs:
        p.recv()


def submit_list(params, lens, expect, modes=None):
    modes = modes or {}
    return [[rid, lens[rid], params[rid], expect, modes.get(rid, "normal")] for rid in params]


@pytest.mark.parametrize("path", ["window", "tcp"]) if not CHILD else (lambda f: f)
def test_transfer_every_byte(engines, path):
    """Five requests of 1..100 tokens on shuffled blocks: the decode gets every byte of every block of every layer
    (both layouts), the prefill frees every block on the decode's notification, the decode frees its own. Through
    the shared-memory windows of one host and over tcp (HETCCL_AGENT_WINDOW=off). A sixth request checked
    against another seed's pattern must be reported wrong (the check is not vacuous)."""
    env = {"HETCCL_AGENT_WINDOW": "off"} if path == "tcp" else None
    p = engines("prefill-a", "prefill", seed=11, env=env)
    d = engines("decode-a", "decode", env=env)
    created(p, d)
    lens = {"r-40": 40, "r-16": 16, "r-100": 100, "r-1": 1, "r-64": 64}
    params = p.call("prefill", reqs=list(lens.items()) + [["r-other", 50]])
    other = {"r-other": params.pop("r-other")}
    for rid, prm in params.items():
        assert prm["do_remote_prefill"] and prm["remote_engine_id"] == "prefill-a"
        assert len(prm["remote_block_ids"]) == -(-lens[rid] // BLOCK)
    assert p.call("status")["free_blocks"] == NBLOCKS - 4 - sum(-(-n // BLOCK) for n in lens.values())
    d.call("submit", reqs=submit_list(other, {"r-other": 50}, ["prefill-a", 12]))
    res = d.call("wait_results", rids=["r-other"], timeout=15)
    assert res["results"]["r-other"].startswith("bad: layer 0 plane 0"), res
    d.call("submit", reqs=submit_list(params, lens, ["prefill-a", 11]))
    res = d.call("wait_results", rids=list(lens), timeout=15)
    assert res["results"] == {r: "ok" for r in lens}, res
    assert res["free_blocks"] == NBLOCKS
    st = p.call("wait_freed", rids=list(lens) + ["r-other"], timeout=10)
    assert sorted(st["freed"]) == sorted(list(lens) + ["r-other"]), st
    assert st["held"] == [] and st["free_blocks"] == NBLOCKS, st


def test_preemption_and_abort_timeout(engines):
    """Decode requests aborted before they are scheduled and while their read runs: the prefill still frees their
    blocks (a notification each), at once; a request no decode ever asks for is freed at the abort timeout."""
    p = engines("prefill-b", "prefill", seed=22, abort_timeout=3.0)
    d = engines("decode-b", "decode")
    created(p, d)
    lens = {"wait": 33, "load": 80, "ok": 20, "never": 17}
    params = p.call("prefill", reqs=list(lens.items()))
    t0 = time.monotonic()
    sub = {k: v for k, v in params.items() if k != "never"}
    d.call("submit", reqs=submit_list(sub, lens, ["prefill-b", 22], {"wait": "abort_waiting", "load": "abort_loading"}))
    res = d.call("wait_results", rids=list(sub), timeout=15)
    assert res["results"] == {"wait": "aborted", "load": "aborted", "ok": "ok"}, res
    assert res["free_blocks"] == NBLOCKS and not res["loading"], res
    st = p.call("wait_freed", rids=list(sub), timeout=10)
    assert sorted(st["freed"]) == sorted(sub) and st["held"] == ["never"], st
    st = p.call("wait_freed", rids=list(lens), timeout=10)
    assert st["freed"][-1] == "never" and st["held"] == [] and st["free_blocks"] == NBLOCKS, st
    assert time.monotonic() - t0 >= 2.5, "'never' was freed before the abort timeout"


def test_killed_prefill(engines):
    """A prefill engine killed (SIGKILL) after serving one request: the decode's later reads from it fail --
    reported in get_finished with their blocks in get_block_ids_with_load_errors -- within the deadline, while
    reads from a second prefill engine, at the same time, succeed byte for byte."""
    p1 = engines("prefill-c1", "prefill", seed=31)
    p2 = engines("prefill-c2", "prefill", seed=32)
    d = engines("decode-c", "decode")
    created(p1, p2, d)
    l1 = {"a1": 48, "a2": 65, "a3": 7}
    l2 = {"b1": 30, "b2": 99}
    pa = p1.call("prefill", reqs=list(l1.items()))
    pb = p2.call("prefill", reqs=list(l2.items()))
    d.call("submit", reqs=submit_list({"a1": pa["a1"]}, l1, ["prefill-c1", 31])
           + submit_list({"b1": pb["b1"]}, l2, ["prefill-c2", 32]))
    res = d.call("wait_results", rids=["a1", "b1"], timeout=15)
    assert res["results"] == {"a1": "ok", "b1": "ok"}, res
    p1.kill()
    d.call("submit", reqs=submit_list({"a2": pa["a2"], "a3": pa["a3"]}, l1, ["prefill-c1", 31])
           + submit_list({"b2": pb["b2"]}, l2, ["prefill-c2", 32]))
    res = d.call("wait_results", rids=["a2", "a3", "b2"], timeout=AGENT_TIMEOUT + 10)
    assert res["results"] == {"a2": "failed", "a3": "failed", "b2": "ok"}, res
    assert res["took"] < AGENT_TIMEOUT + 2, f"failing the reads from the killed prefill took {res['took']:.1f} s"
    assert res["free_blocks"] == NBLOCKS and not res["loading"], res
    st = p2.call("wait_freed", rids=list(l2), timeout=10)
    assert st["held"] == [] and st["free_blocks"] == NBLOCKS, st


def test_module_without_vllm():
    """The module imports without vLLM (stand-in base classes) and keeps vLLM's method names."""
    import hetccl.vllm_connector as vc

    for m in ("get_num_new_matched_tokens", "update_state_after_alloc", "build_connector_meta", "request_finished",
              "register_kv_caches", "start_load_kv", "wait_for_layer_load", "save_kv_layer", "wait_for_save",
              "get_finished", "get_block_ids_with_load_errors", "shutdown", "bind_connector_metadata",
              "clear_connector_metadata"):
        assert callable(getattr(vc.HetcclConnector, m)), m
    assert issubclass(vc.HetcclConnector, vc.KVConnectorBase_V1)
    assert issubclass(vc.HetcclConnectorMetadata, vc.KVConnectorMetadata)


if CHILD:
    _child_main()
