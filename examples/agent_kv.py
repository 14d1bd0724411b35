#!/usr/bin/env python3
"""Disaggregated inference with hetccl agents (include/hetccl/hetccl_agent.h): no communicator, no job. A
"prefill" process writes a paged KV cache -- layers x blocks x 16 tokens x heads x head_dim -- into a NumPy array,
registers it with its agent and publishes the agent's metadata blob (here through a pipe; a key-value store or
an HTTP endpoint in a real deployment). Each "decode" process, started on its own, loads that blob, pulls its
selected block ids of every layer with ONE read of many ranges followed by a notification ("done": the
prefill may reuse the blocks), and verifies every byte. This script starts them all (multiprocessing, spawn)
and prints PASS when every decode got the right bytes.

    python3 examples/agent_kv.py
    python3 examples/agent_kv.py --decoders 3 --layers 8 --blocks 256 --pull 32
    python3 examples/agent_kv.py --window off      # over tcp instead of the shared-memory windows of one host
"""

import argparse
import multiprocessing as mp
import multiprocessing.connection
import os
import sys
import time

import numpy as np

import hetccl

TOKENS_PER_BLOCK = 16


def block_pattern(layer, block, block_bytes, seed):
    """The bytes of one block of one layer (what the prefill writes, what a decode expects)."""
    i = np.arange(block_bytes, dtype=np.uint64)
    return ((i * np.uint64(2654435761) + np.uint64((layer * 1_000_003 + block * 7919 + seed) * 97)) >> np.uint64(8)
            ).astype(np.uint8)


def shape_of(a, nblocks):
    return (a.layers, nblocks, TOKENS_PER_BLOCK, a.heads, a.head_dim)


def prefill(a, secret, conns):
    """Fills and registers the cache, sends (blob, region id) to each decode, waits for each one's "done"."""
    with hetccl.Agent("prefill", secret=secret, listen="127.0.0.1:0") as agent:
        kv = np.empty(shape_of(a, a.blocks), np.float16)
        flat = kv.reshape(-1).view(np.uint8)
        bb = flat.nbytes // (a.layers * a.blocks)
        for layer in range(a.layers):
            for b in range(a.blocks):
                off = (layer * a.blocks + b) * bb
                flat[off:off + bb] = block_pattern(layer, b, bb, a.seed)
        if a.corrupt:  # one byte of every block: whatever a decode pulls is wrong
            flat[bb // 3::bb] ^= 0xFF
        mem = agent.register(kv)
        blob = agent.metadata()  # after register: the blob lists the registration
        for c in conns:
            c.send((blob, mem.id))
        waiting = {f"decode-{i}" for i in range(len(conns))}
        deadline = time.monotonic() + a.timeout
        while waiting and time.monotonic() < deadline:
            for peer, msg in agent.get_notifs():
                if msg == b"done":
                    waiting.discard(peer)
            time.sleep(0.001)
        if waiting:
            print(f"agent_kv: prefill: no 'done' from {sorted(waiting)} within {a.timeout} s", flush=True)
            sys.exit(1)
        print(f"agent_kv: prefill: cache {a.layers} layers x {a.blocks} blocks x {shape_of(a, 1)[2:]} float16 = "
              f"{kv.nbytes / 2**20:.2f} MiB ({mem.kind} memory, region {mem.id}), served {len(conns)} decode(s)",
              flush=True)
        mem.deregister()


def decode(a, secret, index, conn):
    """Loads the prefill's blob, reads its blocks in one transfer with a notification, checks every byte."""
    name = f"decode-{index}"
    with hetccl.Agent(name, secret=secret, listen="127.0.0.1:0") as agent:
        rng = np.random.default_rng(a.seed * 100 + index)
        pull = min(a.pull, a.blocks)
        sel = np.sort(rng.choice(a.blocks, pull, replace=False))
        local = np.zeros(shape_of(a, pull), np.float16)
        lmem = agent.register(local)
        bb = local.nbytes // (a.layers * pull)
        blob, region = conn.recv()
        peer = agent.load_remote(blob)
        # one range per (layer, selected block): a hetcclAgentRange_t array, handed to C without a copy
        layer = np.repeat(np.arange(a.layers, dtype=np.uint64), pull)
        slot = np.tile(np.arange(pull, dtype=np.uint64), a.layers)
        ranges = np.zeros(a.layers * pull, hetccl.range_dtype())
        ranges["localRegion"], ranges["remoteRegion"] = lmem.id, region
        ranges["localOffset"] = (layer * np.uint64(pull) + slot) * np.uint64(bb)
        block = sel[slot.astype(np.intp)].astype(np.uint64)
        ranges["remoteOffset"] = (layer * np.uint64(a.blocks) + block) * np.uint64(bb)
        ranges["bytes"] = bb
        t0 = time.perf_counter()
        with agent.prep_xfer("read", peer, ranges, notif=b"done") as x:
            x.post()
            x.wait()  # the data is here and the prefill has the notification
        dt = time.perf_counter() - t0
        got = local.reshape(-1).view(np.uint8)
        bad = []
        for layer_ in range(a.layers):
            for i, b in enumerate(sel):
                off = (layer_ * pull + i) * bb
                diff = np.flatnonzero(got[off:off + bb] != block_pattern(layer_, int(b), bb, a.seed))
                if diff.size:
                    bad.append((layer_, int(b), int(diff[0]), diff.size))
        if bad:
            layer_, b, first, n = bad[0]
            print(f"agent_kv: {name}: {len(bad)} block(s) wrong; first: layer {layer_} block {b}, byte {first} ({n} "
                  "bytes differ)", flush=True)
            sys.exit(1)
        print(f"agent_kv: {name}: read blocks {sel.tolist()[:8]}{' ...' if pull > 8 else ''} of {a.layers} layers "
              f"from {peer!r} ({len(ranges)} ranges, one transfer): {got.nbytes / 2**20:.2f} MiB in {dt * 1e3:.2f} "
              "ms, every byte checked", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--blocks", type=int, default=64, help="blocks of 16 tokens per layer in the prefill cache")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--pull", type=int, default=16, help="block ids each decode reads (default 16)")
    ap.add_argument("--decoders", type=int, default=2)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--window", default="auto", choices=["auto", "off"],
                    help="HETCCL_AGENT_WINDOW: auto (shared memory between agents of one host) or off (tcp)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds the prefill waits for the decodes")
    ap.add_argument("--corrupt", action="store_true", help=argparse.SUPPRESS)  # tests: the check must fail
    a = ap.parse_args()
    if not hetccl.agent_available():
        print(f"agent_kv: SKIPPED: {hetccl.library_path()} does not export the agent API (hetccl_agent.h)")
        return 77
    os.environ["HETCCL_AGENT_WINDOW"] = a.window  # inherited by the processes started below
    secret = os.urandom(32)  # every agent of this deployment gets it (here: from the parent, as an argument)
    ctx = mp.get_context("spawn")
    pipes = [ctx.Pipe() for _ in range(a.decoders)]
    procs = [ctx.Process(target=prefill, args=(a, secret, [p[0] for p in pipes]), name="prefill")]
    procs += [ctx.Process(target=decode, args=(a, secret, i, pipes[i][1]), name=f"decode-{i}")
              for i in range(a.decoders)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    deadline = time.monotonic() + a.timeout + 30
    running = list(procs)
    while running and time.monotonic() < deadline:  # one failing process ends the others
        mp.connection.wait([p.sentinel for p in running], timeout=max(0.0, deadline - time.monotonic()))
        running = [p for p in running if p.exitcode is None]
        if any(p.exitcode for p in procs):
            break
    for p in running:
        p.kill()
        p.join()
    failed = [f"{p.name} (exit {p.exitcode})" for p in procs if p.exitcode != 0]
    if failed:
        print(f"agent_kv: FAIL: {', '.join(failed)}", flush=True)
        return 1
    print(f"agent_kv: PASS ({a.decoders} decode(s), window={a.window}, {time.perf_counter() - t0:.2f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
