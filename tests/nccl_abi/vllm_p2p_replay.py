#!/usr/bin/env python3
"""vLLM's P2P NCCL route, replayed against the drop-in libnccl.so.2 (issue 29).

vLLM's P2pNcclConnector (P2pNcclEngine) moves KV caches between a prefill and a decode instance with the
NCCL API through ctypes (vllm's pynccl_wrapper; the library named by VLLM_NCCL_SO_PATH): the prefill side
makes a unique id (ncclGetUniqueId), sends it to the decode side over its own socket ("NEW"), and both make
a 2-rank communicator (ncclCommInitRank: the side that connects is rank 0) with NCCL_MAX_NCHANNELS /
NCCL_MIN_NCHANNELS / NCCL_CUMEM_ENABLE set around the call; one communicator per (prefill, decode) pair,
so a prefill instance serving two decode instances holds two. Then every tensor of a request (one per
layer: the request's blocks of the layer's KV cache, made contiguous) goes as one ncclSend on the sender's
send stream, followed by a stream synchronize, against one ncclRecv into a fresh tensor of the announced
shape and dtype on the receiver's recv stream, also synchronized. This program does the same calls in the
same order (ctypes over the library, torch tensors), one process per instance, the ids passed through files
instead of ZMQ, with each instance in its own domain (HETCCL_DOMAIN): every transfer crosses domains.

Roles: one prefill instance and two decode instances (`--decoders`); requests alternate between the
decoders; each decode instance checks every byte it receives against the pattern the prefill side wrote
(computed here from the request, layer and element index, not from anything the library returns). The
verdict is each process's exit status. On CPU (`--device cpu`, HETCCL_DEVICE=host: host tensors, no
stream) it runs in CI; on a GPU (`--device cuda`, the ranks may share GPU 0: different domains) on the
device machine.

Usage: vllm_p2p_replay.py --lib PATH/libnccl.so.2 [--device cpu|cuda] [--requests 8] [--layers 4]
       [--decoders 2] [--heads 2] [--head-dim 64] [--timeout 120]
Cost: about 3 s on 2 CPU cores (8 requests x 4 layers, 4 dtypes, 4 - 104 KiB per tensor).
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

# NCCL's data types (nccl.h) for the dtypes vLLM's KV caches use; fp8 caches are uint8 storage in vLLM's
# pynccl mapping, the NCCL fp8 types are sent as themselves too (ncclSend of fp8 is accepted by NCCL 2.28).
NCCL_TYPES = {"float16": 6, "bfloat16": 9, "uint8": 1, "float8_e4m3": 10}


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def load(lib):
    nccl = ctypes.CDLL(lib)
    nccl.ncclGetErrorString.restype = ctypes.c_char_p
    nccl.ncclGetLastError.restype = ctypes.c_char_p
    return nccl


def check(nccl, rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: {nccl.ncclGetErrorString(rc).decode()} ({rc}): "
                           f"{(nccl.ncclGetLastError(None) or b'').decode()}")


def kv_shape(a, request, layer):
    """(2, blocks, block_size, heads, head_dim) of one request's KV in one layer: 1-13 blocks."""
    return (2, 1 + (request * 5 + layer * 3) % 13, 16, a.heads, a.head_dim)


def dtype_of(request):
    return ("bfloat16", "float16", "uint8", "float8_e4m3")[request % 4]


def pattern(torch, request, layer, shape, dtype, device):
    """The bytes the prefill side sends: a function of (request, layer, element) only, as raw bytes."""
    nbytes = 2 if dtype in ("bfloat16", "float16") else 1
    count = 1
    for s in shape:
        count *= s
    idx = torch.arange(count * nbytes, dtype=torch.int64)
    raw = ((idx * 2654435761 + request * 97 + layer * 31) >> 7) % 251
    return raw.to(torch.uint8).to(device)


def torch_dtype(torch, name):
    return {"bfloat16": torch.bfloat16, "float16": torch.float16, "uint8": torch.uint8,
            "float8_e4m3": torch.uint8}[name]  # fp8 bytes carried in uint8 storage (as vLLM's cache)


def make_comm(nccl, uid, rank, nchannels="8"):
    """ncclCommInitRank(2, uid, rank) under vLLM's set_p2p_nccl_context (its variables set, then restored)."""
    saved = {v: os.environ.get(v) for v in ("NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_CUMEM_ENABLE")}
    os.environ.update(NCCL_MAX_NCHANNELS=nchannels, NCCL_MIN_NCHANNELS=nchannels, NCCL_CUMEM_ENABLE="1")
    try:
        comm = ctypes.c_void_p()
        check(nccl, nccl.ncclCommInitRank(ctypes.byref(comm), 2, uid, rank), f"ncclCommInitRank(rank {rank})")
        return comm
    finally:
        for v, old in saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old


def wait_file(path, deadline):
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {path} before the deadline")
        time.sleep(0.01)
    with open(path, "rb") as f:
        return f.read()


def prefill(a, torch, nccl, device):
    stream = torch.cuda.Stream() if device == "cuda" else None
    comms = []
    for d in range(a.decoders):  # create_connect: a new id per decode instance, sent with "NEW"
        uid = UniqueId()
        check(nccl, nccl.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        tmp = os.path.join(a.dir, f"id{d}.tmp")
        with open(tmp, "wb") as f:
            f.write(bytes(uid.internal))
        os.rename(tmp, os.path.join(a.dir, f"id{d}"))
        comms.append(make_comm(nccl, uid, 0))
    sent = 0
    for r in range(a.requests):
        comm = comms[r % a.decoders]
        for layer in range(a.layers):
            shape, dt = kv_shape(a, r, layer), dtype_of(r)
            data = pattern(torch, r, layer, shape, dt, device)
            count = data.numel() // (2 if dt in ("bfloat16", "float16") else 1)
            handle = stream.cuda_stream if stream is not None else None
            check(nccl, nccl.ncclSend(ctypes.c_void_p(data.data_ptr()), ctypes.c_size_t(count), NCCL_TYPES[dt], 1,
                                      comm, ctypes.c_void_p(handle)), f"ncclSend request {r} layer {layer}")
            if stream is not None:
                stream.synchronize()
            sent += data.numel()
    for comm in comms:
        check(nccl, nccl.ncclCommDestroy(comm), "ncclCommDestroy")
    print(f"prefill: sent {a.requests * a.layers} tensors, {sent} bytes, to {a.decoders} decode instances")


def decode(a, torch, nccl, device, index):
    stream = torch.cuda.Stream() if device == "cuda" else None
    uid = UniqueId()
    raw = wait_file(os.path.join(a.dir, f"id{index}"), time.monotonic() + a.timeout)
    ctypes.memmove(uid.internal, raw, 128)
    comm = make_comm(nccl, uid, 1)
    wrong = checked = 0
    for r in range(index, a.requests, a.decoders):
        for layer in range(a.layers):
            shape, dt = kv_shape(a, r, layer), dtype_of(r)
            out = torch.empty(shape, dtype=torch_dtype(torch, dt), device=device)
            handle = stream.cuda_stream if stream is not None else None
            check(nccl, nccl.ncclRecv(ctypes.c_void_p(out.data_ptr()), ctypes.c_size_t(out.numel()), NCCL_TYPES[dt], 0,
                                      comm, ctypes.c_void_p(handle)), f"ncclRecv request {r} layer {layer}")
            if stream is not None:
                stream.synchronize()
            got = out.view(torch.uint8).reshape(-1).cpu()
            want = pattern(torch, r, layer, shape, dt, "cpu")
            bad = int((got != want).sum())
            if bad:
                print(f"decode {index}: request {r} layer {layer} ({dt}, {list(shape)}): {bad} wrong bytes")
            wrong += bad
            checked += got.numel()
    check(nccl, nccl.ncclCommDestroy(comm), "ncclCommDestroy")
    print(f"decode {index}: {checked} bytes checked, {wrong} wrong")
    return 1 if wrong else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--decoders", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)  # KV heads and head size: 4 KiB per 16-token block of
    ap.add_argument("--head-dim", type=int, default=64)  # 16-bit values by default; 8 x 128: 64 KiB (a real model)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--role", default="")  # set for the instances this program starts
    ap.add_argument("--dir", default="")
    a = ap.parse_args()
    if a.role:
        import torch
        if a.device == "cuda" and not torch.cuda.is_available():
            print("vllm_p2p_replay: no CUDA device")
            return 77
        nccl = load(a.lib)
        if a.role == "prefill":
            prefill(a, torch, nccl, a.device)
            return 0
        return decode(a, torch, nccl, a.device, int(a.role[len("decode"):]))

    try:
        import torch  # noqa: F401
    except ImportError:
        print("vllm_p2p_replay: torch is not installed: skipped")
        return 77
    with tempfile.TemporaryDirectory() as d:
        roles = ["prefill"] + [f"decode{i}" for i in range(a.decoders)]
        procs = []
        for role in roles:
            env = dict(os.environ, HETCCL_DOMAIN=role, HETCCL_TIMEOUT=str(int(a.timeout)))
            if a.device == "cpu":
                env["HETCCL_DEVICE"] = "host"
            procs.append(subprocess.Popen([sys.executable, __file__, "--role", role, "--dir", d] + sys.argv[1:], env=env))
        deadline = time.monotonic() + a.timeout + 30
        status = 0
        for role, p in zip(roles, procs):
            try:
                rc = p.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                print(f"vllm_p2p_replay: {role} did not finish within {a.timeout + 30:.0f} s: killed")
                return 1
            if rc == 77:
                return 77
            if rc:
                print(f"vllm_p2p_replay: {role} exited with {rc}")
                status = 1
        print("vllm_p2p_replay: " + ("FAIL" if status else "PASS: every byte of every tensor arrived"))
        return status


if __name__ == "__main__":
    sys.exit(main())
