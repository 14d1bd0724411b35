"""A vLLM v1 KV connector over hetccl agents (include/hetccl/hetccl_agent.h): disaggregated prefill/decode.

Pull model, as vLLM's NixlConnector: the prefill engine computes a request's prompt (max_tokens=1), keeps its
KV blocks after it finishes and returns kv_transfer_params naming them; the proxy hands those params to the
decode engine, whose worker reads every layer's blocks of the request with ONE hetccl agent read (one range per
(layer, K/V plane, block)) followed by a notification carrying the request id; the prefill worker, on that
notification, reports the request as finished sending and vLLM frees its blocks.

Use (both engines; vLLM loads the module by path, so nothing in vLLM changes):

    --kv-transfer-config '{"kv_connector": "HetcclConnector",
                           "kv_connector_module_path": "hetccl.vllm_connector",
                           "kv_role": "kv_both", "engine_id": "prefill-0",
                           "kv_connector_extra_config": {"meta_dir": "/shared/hetccl-kv",
                                                         "secret": "<64 hex digits>"}}'

  The proxy sends the prefill request with kv_transfer_params {"do_remote_decode": true} (and max_tokens=1),
  then the decode request with the kv_transfer_params the prefill returned (do_remote_prefill,
  remote_block_ids, remote_engine_id, remote_host, remote_port, remote_meta_dir).

kv_connector_extra_config keys (all optional):
  meta_dir       side channel: a directory both engines can read (a shared file system between hosts); each
                 worker writes <meta_dir>/<engine_id>.rank<r>.json: its agent's metadata blob (base64) and,
                 per layer, the region id and the block geometry (plane offsets, block stride, block bytes).
                 Default: $HETCCL_KV_META_DIR, else /tmp/hetccl-kv-<uid>. Written atomically (rename);
                 re-read when a transfer with the peer failed (a restarted prefill publishes a new blob).
  secret         the deployment's shared secret as hex (>= 32 digits); default: HETCCL_SECRET.
  listen         the agent's "ip:port" (port 0: any); default: HETCCL_SOCKET_IFNAME's interface, any port.
  timeout        seconds, the agent's deadline of every transfer/connection (default 30).
  abort_timeout  seconds a prefill keeps a finished request's blocks waiting for the decode's notification
                 before it frees them anyway (default 120; the decode never came, or died).
  num_blocks     blocks per layer in the cache (default: kv_cache_config.num_blocks, else
                 cache_config.num_gpu_blocks) -- finds the block
                 dimension of a layer's tensor: the first dimension of that size; the dimensions before it are
                 planes (FlashAttention's (2, num_blocks, ...) = K and V). Unknown: a 5-D tensor with shape[0]
                 == 2 is (2, num_blocks, ...), anything else (num_blocks, ...).
  device         the GPU ordinal of the cache tensors (default: that of the first tensor; -1: host memory).
  side_channel_host  what request_finished puts in remote_host (default: this host's name; informational: the
                 descriptor is found by remote_engine_id in remote_meta_dir, remote_port is 0).
  rank           this worker's tensor-parallel rank (default: vLLM's TP rank, else 0). Decode rank r reads from
                 prefill rank r: both engines must have the same TP size and layout (no heterogeneous TP).

Failure handling. A read that fails (prefill dead, unreachable, restarted, past the agent's timeout) ends the
request's load: get_finished() reports it in finished_recving and get_block_ids_with_load_errors() returns its
local block ids (vLLM then recomputes or fails the request, per its kv_load_failure_policy) -- the same
pass, never a hang. A decode request aborted before its blocks were allocated sends the prefill a
notification-only message so the prefill frees the blocks at once; one aborted while its read runs lets the
read finish (vLLM keeps the blocks until get_finished reports it), and the prefill is notified by the read.
A prefill whose decode never reads frees the blocks after abort_timeout.

Interface followed: vLLM's KVConnectorBase_V1 of vllm/distributed/kv_transfer/kv_connector/v1/base.py (the 2025-26
form: __init__(vllm_config, role, kv_cache_config), request_finished(request, block_ids: list[int]),
get_finished(finished_req_ids) -> (sending, recving), get_block_ids_with_load_errors()). Without vLLM
installed, minimal stand-ins with the same names are defined here so that tests can drive the connector.
Not done: heterogeneous TP, hybrid memory allocator (SupportsHMA), layer-by-layer loading (the load is whole
before the request is scheduled, as NixlConnector's), host-buffer staging (set_host_xfer_buffer_ops), metrics.
"""

from __future__ import annotations

import base64
import enum
import json
import logging
import os
import re
import threading
import time
from dataclasses import dataclass, field

import numpy as np

import hetccl

try:  # the real base classes when vLLM is installed
    from vllm.distributed.kv_transfer.kv_connector.v1.base import (KVConnectorBase_V1, KVConnectorMetadata,
                                                                   KVConnectorRole)
    HAVE_VLLM = True
except Exception:  # noqa: BLE001 - no vLLM (or a broken one): stand-ins with the same names
    HAVE_VLLM = False

    class KVConnectorRole(enum.Enum):
        SCHEDULER = 0
        WORKER = 1

    class KVConnectorMetadata:
        """Stand-in of vLLM's KVConnectorMetadata (scheduler -> worker, pickled between processes)."""

    class KVConnectorBase_V1:  # noqa: N801 - vLLM's name
        """Stand-in of vLLM's KVConnectorBase_V1: the methods vLLM calls, with its defaults."""

        def __init__(self, vllm_config, role, kv_cache_config=None):
            self._connector_metadata = None
            self._vllm_config = vllm_config
            self._kv_transfer_config = vllm_config.kv_transfer_config
            self._kv_cache_config = kv_cache_config
            self._role = role

        @property
        def role(self):
            return self._role

        def bind_connector_metadata(self, connector_metadata):
            self._connector_metadata = connector_metadata

        def clear_connector_metadata(self):
            self._connector_metadata = None

        def _get_connector_metadata(self):
            assert self._connector_metadata is not None
            return self._connector_metadata

        def has_connector_metadata(self):
            return self._connector_metadata is not None

        def register_kv_caches(self, kv_caches):
            return

        def get_finished(self, finished_req_ids):
            return None, None

        def get_block_ids_with_load_errors(self):
            return set()

        def shutdown(self):
            return None

        def update_connector_output(self, connector_output):
            return

        def request_finished(self, request, block_ids):
            return False, None


logger = logging.getLogger("hetccl.vllm_connector")

NOTIF_PREFIX = b"hetccl-kv:free:"  # + request id: "the decode has the blocks (or gave up): free them"
_NAME_BAD = re.compile(r"[^A-Za-z0-9._:-]")


def _status_name(request):
    s = getattr(request, "status", None)
    return getattr(s, "name", str(s))


def _extra(vllm_config):
    ktc = vllm_config.kv_transfer_config
    get = getattr(ktc, "kv_connector_extra_config", None)
    return dict(get or {})


def _tp_rank(extra):
    if "rank" in extra:
        return int(extra["rank"])
    try:
        from vllm.distributed.parallel_state import get_tensor_model_parallel_rank
        return int(get_tensor_model_parallel_rank())
    except Exception:  # noqa: BLE001 - no vLLM, or no TP group
        return 0


def _meta_dir(extra):
    return extra.get("meta_dir") or os.environ.get("HETCCL_KV_META_DIR") or f"/tmp/hetccl-kv-{os.getuid()}"


def _meta_path(meta_dir, engine_id, rank):
    return os.path.join(meta_dir, f"{_NAME_BAD.sub('_', str(engine_id))}.rank{rank}.json")


def _geometry(t, num_blocks):
    """(planes, block stride bytes, block bytes, nbytes, blocks) of a C-contiguous cache tensor (NumPy or torch):
    planes = byte offsets of each (K, V, ...) plane, a block of plane p at planes[p] + block * stride."""
    shape = tuple(int(d) for d in t.shape)
    item = int(t.itemsize) if hasattr(t, "itemsize") and not callable(t.itemsize) else int(t.element_size())
    if num_blocks and num_blocks in shape:
        bdim = shape.index(num_blocks)
    elif len(shape) == 5 and shape[0] == 2:
        bdim = 1
    else:
        bdim = 0
    block = item
    for d in shape[bdim + 1:]:
        block *= d
    nplanes = 1
    for d in shape[:bdim]:
        nplanes *= d
    plane_bytes = block * shape[bdim]
    return [p * plane_bytes for p in range(nplanes)], block, block, plane_bytes * nplanes, shape[bdim]


@dataclass
class RecvReq:
    """A request whose blocks the decode worker reads (local_block_ids empty: only notify the prefill)."""
    local_block_ids: list
    remote_block_ids: list
    remote_engine_id: str
    remote_host: str = ""
    remote_port: int = 0
    remote_meta_dir: str | None = None


@dataclass
class HetcclConnectorMetadata(KVConnectorMetadata):
    reqs_to_recv: dict = field(default_factory=dict)      # request id -> RecvReq
    reqs_to_send: list = field(default_factory=list)      # request ids whose blocks the prefill holds for a decode
    reqs_not_processed: list = field(default_factory=list)  # held ids that vLLM freed after all (aborted)


class HetcclConnector(KVConnectorBase_V1):
    """vLLM v1 KV connector over hetccl agents (the module docstring says how to use it)."""

    def __init__(self, vllm_config, role, kv_cache_config=None):
        try:
            super().__init__(vllm_config, role, kv_cache_config)
        except TypeError:  # vLLM before kv_cache_config was added
            super().__init__(vllm_config, role)
        self._role = role
        ktc = vllm_config.kv_transfer_config
        self.engine_id = str(getattr(ktc, "engine_id", None) or "engine")
        self.extra = _extra(vllm_config)
        self.meta_dir = _meta_dir(self.extra)
        self.rank = _tp_rank(self.extra)
        self.timeout = float(self.extra.get("timeout", 30.0))
        self.abort_timeout = float(self.extra.get("abort_timeout", 120.0))
        cache = getattr(vllm_config, "cache_config", None)
        self.block_size = int(getattr(cache, "block_size", 16) or 16)
        self.num_blocks = int(self.extra.get("num_blocks") or getattr(kv_cache_config, "num_blocks", 0)
                              or getattr(cache, "num_gpu_blocks", 0) or 0)
        self.side_host = str(self.extra.get("side_channel_host", os.uname().nodename))
        if role == KVConnectorRole.SCHEDULER:
            self._reqs_need_recv = {}   # request id -> RecvReq, for the next build_connector_meta
            self._reqs_need_send = []
            self._reqs_not_processed = []
        else:
            self.agent = None
            self._layers = {}           # layer name -> dict(region, planes, stride, block, num_blocks)
            self._peers = {}            # (engine id, meta dir) -> (agent name, descriptor)
            self._peers_lock = threading.Lock()
            self._recving = {}          # request id -> [Xfer, local ids, deadline, engine, meta dir, cancelled]
            self._done_recving = set()
            self._load_errors = set()
            self._to_send = {}          # request id -> monotonic deadline of its blocks
            self._early_free = {}       # request id -> time: notification before reqs_to_send arrived
            self._done_sending = set()
            self._notifying = []        # (request id, engine id, Xfer): notification-only posts not yet ended
            self._meta_file = None

    # ------------------------------------------------------------------ scheduler side

    def get_num_new_matched_tokens(self, request, num_computed_tokens):
        params = getattr(request, "kv_transfer_params", None) or {}
        if params.get("do_remote_prefill"):
            count = len(request.prompt_token_ids) - num_computed_tokens
            if count > 0:
                return count, True
        return 0, False

    def update_state_after_alloc(self, request, blocks, num_external_tokens):
        params = getattr(request, "kv_transfer_params", None) or {}
        if not params.get("do_remote_prefill"):
            return
        params["do_remote_prefill"] = False  # once only (a second call comes after the load)
        if not all(k in params for k in ("remote_engine_id", "remote_block_ids")):
            logger.warning("request %s: do_remote_prefill without remote_engine_id/remote_block_ids: nothing loaded",
                           request.request_id)
            return
        local = []
        if num_external_tokens > 0:
            local = _block_ids_of(blocks)
        remote = list(params["remote_block_ids"])
        if len(local) < len(remote):  # a local prefix-cache hit: read only the tail
            remote = remote[len(remote) - len(local):]
        elif len(local) > len(remote):
            local = local[:len(remote)]
        self._reqs_need_recv[request.request_id] = self._recv_req(params, local, remote)

    def _recv_req(self, params, local, remote):
        return RecvReq(list(local), list(remote), str(params["remote_engine_id"]), str(params.get("remote_host", "")),
                       int(params.get("remote_port", 0) or 0), params.get("remote_meta_dir"))

    def build_connector_meta(self, scheduler_output):
        meta = HetcclConnectorMetadata(self._reqs_need_recv, self._reqs_need_send, self._reqs_not_processed)
        self._reqs_need_recv, self._reqs_need_send, self._reqs_not_processed = {}, [], []
        return meta

    def request_finished(self, request, block_ids):
        params = getattr(request, "kv_transfer_params", None) or {}
        rid = request.request_id
        if params.get("do_remote_prefill"):
            # A decode request finished (aborted) before its blocks were allocated: the worker only tells the
            # prefill to free its blocks (no read).
            params["do_remote_prefill"] = False
            if "remote_engine_id" in params:
                self._reqs_need_recv[rid] = self._recv_req(params, [], params.get("remote_block_ids", []))
            return False, None
        if not params.get("do_remote_decode"):
            return False, None
        if _status_name(request) != "FINISHED_LENGTH_CAPPED":
            self._reqs_not_processed.append(rid)  # aborted: vLLM frees the blocks now
            return False, None
        ids = list(block_ids[0] if block_ids and isinstance(block_ids[0], (list, tuple)) else block_ids)
        delay = len(ids) > 0
        if delay:
            self._reqs_need_send.append(rid)
        return delay, dict(do_remote_prefill=True, do_remote_decode=False, remote_block_ids=ids,
                           remote_engine_id=self.engine_id, remote_host=self.side_host, remote_port=0,
                           remote_meta_dir=self.meta_dir)

    # ------------------------------------------------------------------ worker side

    def _agent_name(self):
        return (_NAME_BAD.sub("_", f"kv-{self.engine_id}")[:56] + f".r{self.rank}")[:63]

    def register_kv_caches(self, kv_caches):
        if self.agent is None:
            device = self.extra.get("device")
            if device is None:  # the GPU of the cache tensors (torch), else host memory
                first = next(iter(kv_caches.values()), None)
                dev = getattr(first, "device", None)
                device = dev.index if getattr(dev, "type", "cpu") in ("cuda", "hip") and dev.index is not None else -1
            self.agent = hetccl.Agent(self._agent_name(), secret=self.extra.get("secret"),
                                      listen=self.extra.get("listen", ""), device=int(device), timeout=self.timeout)
        for name, t in kv_caches.items():
            planes, stride, block, nbytes, nblocks = _geometry(t, self.num_blocks)
            mem = self.agent.register(t)
            if mem.nbytes != nbytes:
                raise ValueError(f"layer {name}: registered {mem.nbytes} bytes, geometry says {nbytes}")
            self._layers[name] = dict(region=mem.id, planes=planes, stride=stride, block=block, num_blocks=nblocks,
                                      mem=mem)
        self._publish()

    def _publish(self):
        desc = {"engine_id": self.engine_id, "rank": self.rank, "agent": self.agent.name,
                "blob": base64.b64encode(self.agent.metadata()).decode(),
                "layers": [[n, {k: v for k, v in d.items() if k != "mem"}] for n, d in self._layers.items()]}
        os.makedirs(self.meta_dir, exist_ok=True)
        path = _meta_path(self.meta_dir, self.engine_id, self.rank)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(desc, f)
        os.replace(tmp, path)
        self._meta_file = path

    def _peer(self, engine_id, meta_dir, reload=False):
        """(agent name, {layer: geometry}) of a remote engine, its blob loaded into our agent."""
        key = (engine_id, meta_dir or self.meta_dir)
        with self._peers_lock:
            if not reload and key in self._peers:
                return self._peers[key]
        with open(_meta_path(key[1], engine_id, self.rank)) as f:
            desc = json.load(f)
        name = self.agent.load_remote(base64.b64decode(desc["blob"]))
        peer = (name, dict((n, d) for n, d in desc["layers"]))
        with self._peers_lock:
            self._peers[key] = peer
        return peer

    def _ranges(self, remote_layers, local_ids, remote_ids):
        loc = np.asarray(local_ids, np.uint64)
        rem = np.asarray(remote_ids, np.uint64)
        parts = []
        for name, ld in self._layers.items():
            rd = remote_layers.get(name)
            if rd is None:
                raise ValueError(f"the remote engine has no layer {name!r}")
            if rd["block"] != ld["block"] or len(rd["planes"]) != len(ld["planes"]):
                raise ValueError(f"layer {name!r}: remote block geometry {rd['block']} bytes x {len(rd['planes'])} "
                                 f"planes, local {ld['block']} x {len(ld['planes'])}: different layouts")
            if rem.size and int(rem.max()) >= rd["num_blocks"] or loc.size and int(loc.max()) >= ld["num_blocks"]:
                raise ValueError(f"layer {name!r}: a block id is out of range")
            for lp, rp in zip(ld["planes"], rd["planes"]):
                r = np.empty(len(loc), hetccl.range_dtype())
                r["localRegion"], r["remoteRegion"] = ld["region"], rd["region"]
                r["localOffset"] = np.uint64(lp) + loc * np.uint64(ld["stride"])
                r["remoteOffset"] = np.uint64(rp) + rem * np.uint64(rd["stride"])
                r["bytes"] = ld["block"]
                parts.append(r)
        return np.concatenate(parts)

    def start_load_kv(self, forward_context=None, **kwargs):
        meta = self._connector_metadata
        if meta is None:
            return
        now = time.monotonic()
        for rid in meta.reqs_to_send:
            if rid in self._early_free:  # the decode was faster than this engine's step
                self._early_free.pop(rid)
                self._done_sending.add(rid)
            else:
                self._to_send[rid] = now + self.abort_timeout
        for rid in meta.reqs_not_processed:
            self._to_send.pop(rid, None)
        for rid, req in meta.reqs_to_recv.items():
            if not req.local_block_ids:
                self._notify_later(rid, req)
                continue
            try:
                self._post_read(rid, req)
            except Exception as e:  # noqa: BLE001 - no descriptor, bad blob, bad ids, refused post: the load failed
                logger.warning("request %s: reading its KV from %s failed: %s", rid, req.remote_engine_id, e)
                self._fail(rid, req.local_block_ids, req.remote_engine_id, req.remote_meta_dir)

    def _post_read(self, rid, req):
        name, layers = self._peer(req.remote_engine_id, req.remote_meta_dir)
        ranges = self._ranges(layers, req.local_block_ids, req.remote_block_ids)
        x = self.agent.prep_xfer("read", name, ranges, notif=NOTIF_PREFIX + rid.encode())
        try:
            x.post()
        except Exception:
            x.release()
            raise
        self._recving[rid] = [x, list(req.local_block_ids), time.monotonic() + self.timeout + 5.0,
                              req.remote_engine_id, req.remote_meta_dir, False]

    def _fail(self, rid, local_ids, engine_id, meta_dir):
        self._load_errors.update(int(b) for b in local_ids)
        self._done_recving.add(rid)
        with self._peers_lock:  # read the descriptor again next time (a restarted prefill publishes a new one)
            self._peers.pop((engine_id, meta_dir or self.meta_dir), None)

    def _notify_later(self, rid, req):
        """Tells the prefill that it may free the blocks of `rid` without a read (aborted before allocation):
        a notification-only transfer, posted without blocking, reaped in get_finished."""
        try:
            name, _ = self._peer(req.remote_engine_id, req.remote_meta_dir)
            x = self.agent.prep_notif(name, NOTIF_PREFIX + rid.encode())
            try:
                x.post()
            except Exception:
                x.release()
                raise
        except Exception as e:  # noqa: BLE001 - the prefill frees the blocks at its abort_timeout anyway
            logger.warning("request %s: telling %s to free its blocks failed: %s", rid, req.remote_engine_id, e)
            return
        self._notifying.append((rid, req.remote_engine_id, x))

    def _reap_notifications(self):
        still = []
        for rid, eid, x in self._notifying:
            try:
                if not x.check():
                    still.append((rid, eid, x))
                    continue
            except Exception as e:  # noqa: BLE001 - the prefill frees the blocks at its abort_timeout anyway
                logger.warning("request %s: telling %s to free its blocks failed: %s", rid, eid, e)
            self._release(x)
        self._notifying = still

    def wait_for_layer_load(self, layer_name):
        return  # loads finish between steps: vLLM schedules a request only after get_finished reported it

    def save_kv_layer(self, layer_name, kv_layer, attn_metadata, **kwargs):
        return  # pull model: the decode reads

    def wait_for_save(self):
        return

    def get_finished(self, finished_req_ids):
        now = time.monotonic()
        self._reap_notifications()
        for rid, ent in list(self._recving.items()):
            x, local, deadline, eid, mdir, cancelled = ent
            try:
                done = x.check()
            except Exception as e:  # noqa: BLE001 - RemoteError (peer dead/stale/timeout), InvalidArgument, cancelled
                if not cancelled:
                    logger.warning("request %s: reading its KV from %s failed: %s", rid, eid, e)
                done = None
            if done is False:
                if not cancelled and now > deadline:  # the agent's own deadline should have ended it: never hang
                    logger.warning("request %s: the read from %s ran past %.0f s: cancelled", rid, eid, self.timeout)
                    x.cancel()
                    ent[5] = True
                continue  # (a cancelled read is reported once it no longer touches the blocks)
            del self._recving[rid]
            if done and not cancelled:
                self._done_recving.add(rid)
            else:
                self._fail(rid, local, eid, mdir)
            self._release(x)
        if self.agent is not None:
            for _, msg in self.agent.get_notifs():
                if not msg.startswith(NOTIF_PREFIX):
                    continue
                rid = msg[len(NOTIF_PREFIX):].decode(errors="replace")
                if self._to_send.pop(rid, None) is not None:
                    self._done_sending.add(rid)
                else:
                    self._early_free[rid] = now
        for rid, deadline in list(self._to_send.items()):
            if now > deadline:
                logger.warning("request %s: no decode read its blocks within %.0f s: freed", rid, self.abort_timeout)
                del self._to_send[rid]
                self._done_sending.add(rid)
        for rid, t in list(self._early_free.items()):
            if now - t > self.abort_timeout:
                del self._early_free[rid]
        sending, recving = self._done_sending, self._done_recving
        self._done_sending, self._done_recving = set(), set()
        return sending or None, recving or None

    def _release(self, x):
        """Releases a transfer that ended; a cancelled one may still touch memory briefly: keep it till then."""
        try:
            x.release()
        except hetccl.InvalidUsageError:
            pass  # still running: dropping it makes Xfer.__del__ hand it to the agent, which releases it once ended

    def get_block_ids_with_load_errors(self):
        out, self._load_errors = self._load_errors, set()
        return out

    def shutdown(self):
        if self._role == KVConnectorRole.SCHEDULER:
            return
        for _, _, x in self._notifying:  # each ends by its deadline; waited for so that the prefill hears it
            try:
                x.wait()
            except Exception:  # noqa: BLE001 - the prefill frees the blocks at its abort_timeout anyway
                pass
            self._release(x)
        self._notifying.clear()
        for x, *_ in self._recving.values():  # closing the agent below fails them anyway
            try:
                x.cancel()
            except Exception:  # noqa: BLE001
                pass
        self._recving.clear()
        if self._meta_file:
            try:
                os.unlink(self._meta_file)
            except OSError:
                pass
        if self.agent is not None:
            self.agent.close()
            self.agent = None


def _block_ids_of(blocks):
    """Block ids of vLLM's KVCacheBlocks (the first KV cache group), or of a plain list."""
    if blocks is None:
        return []
    if hasattr(blocks, "get_unhashed_block_ids"):
        return list(blocks.get_unhashed_block_ids())
    if hasattr(blocks, "get_block_ids"):
        ids = blocks.get_block_ids()
        return list(ids[0] if ids and isinstance(ids[0], (list, tuple)) else ids)
    return [int(b) for b in blocks]
