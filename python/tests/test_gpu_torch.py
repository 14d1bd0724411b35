"""Device buffers through torch (CUDA or ROCm builds of torch): in place on the tensor's memory, on the
producer's current stream by default or on stream=, async (enqueued), DLPack stream handoff, RMA on device
memory. Skipped without torch or a GPU, or on CPU ranks (HETCCL_DEVICE=host, no GPU plugin): run these on a
machine with a GPU, e.g. bash python/ci/run_pytest_job.sh build . 2 2 after a build with the CUDA plugin."""

import numpy as np
import pytest

import hetccl

torch = pytest.importorskip("torch", reason="needs torch (GPU tests)")


@pytest.fixture(scope="module")
def gcomm(comm):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    if comm.device < 0:
        pytest.skip("this rank is a CPU rank (HETCCL_DEVICE=host or no GPU plugin): no device buffers")
    assert torch.cuda.current_device() == comm.device
    return comm


def dev(c):
    return torch.device("cuda", c.device)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int64", "uint8"])
def test_all_reduce_device_in_place(gcomm, dtype):
    c = gcomm
    dt = getattr(torch, dtype)
    x = torch.full((1000,), c.rank + 1, dtype=dt, device=dev(c))
    ptr = x.data_ptr()
    assert c.all_reduce(x) is x and x.data_ptr() == ptr
    torch.cuda.current_stream().synchronize()
    assert (x.cpu().double() == sum(r + 1 for r in range(c.size))).all()


def test_side_stream_and_producer_order(gcomm):
    """Work queued on a side stream before the call is seen by it (stream= that stream); the result is
    ready on that stream, not necessarily on the host when the call returns."""
    c = gcomm
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.zeros(1 << 20, device=dev(c))
        torch.cuda._sleep(50_000_000)  # a long kernel ahead of the fill
        x.fill_(c.rank + 1.0)
        c.all_reduce(x, stream=s)  # default (no stream=) would also be s: torch's current stream here
    s.synchronize()
    assert (x == sum(r + 1 for r in range(c.size))).all().item()
    y = torch.full((16,), float(c.rank), device=dev(c))
    c.all_reduce(y, "max", stream=s.cuda_stream)  # an int handle
    s.synchronize()
    assert (y == c.size - 1).all().item()


def test_default_stream_is_producers_current(gcomm):
    c = gcomm
    s = torch.cuda.Stream()
    x = torch.ones(8, device=dev(c))
    with torch.cuda.stream(s):
        c.all_reduce(x)  # enqueued on s (torch's current stream)
        s.synchronize()
    assert (x == c.size).all().item()


def test_device_collectives(gcomm):
    c = gcomm
    d = dev(c)
    send = torch.full((5,), c.rank, dtype=torch.int32, device=d)
    out = torch.empty(5 * c.size, dtype=torch.int32, device=d)
    c.all_gather(send, out)
    big = torch.arange(4 * c.size, dtype=torch.float32, device=d)
    rs = torch.empty(4, dtype=torch.float32, device=d)
    c.reduce_scatter(big, rs)
    sc = [r + 1 for r in range(c.size)]
    rc = [c.rank + 1] * c.size
    a2a_send = torch.full((sum(sc),), c.rank, dtype=torch.float16, device=d)
    a2a_out = torch.empty(sum(rc), dtype=torch.float16, device=d)
    c.all_to_allv(a2a_send, sc, a2a_out, rc)
    torch.cuda.current_stream().synchronize()
    assert out.cpu().tolist() == [r for r in range(c.size) for _ in range(5)]
    np.testing.assert_array_equal(rs.cpu().numpy(), (np.arange(4) + 4 * c.rank) * c.size)
    assert a2a_out.cpu().tolist() == [float(p) for p in range(c.size) for _ in range(c.rank + 1)]


def test_wrong_device_and_grad(gcomm):
    c = gcomm
    if torch.cuda.device_count() > 1:
        other = (c.device + 1) % torch.cuda.device_count()
        with pytest.raises(hetccl.InvalidArgumentError, match="device"):
            c.all_reduce(torch.ones(4, device=torch.device("cuda", other)))
    with pytest.raises(hetccl.InvalidArgumentError, match="DLPack"):
        c.all_reduce(torch.ones(4, device=dev(c), requires_grad=True))
    with pytest.raises(hetccl.InvalidArgumentError, match="not contiguous"):
        c.all_reduce(torch.ones(4, 4, device=dev(c)).t())


def test_rma_device_memory(gcomm):
    c = gcomm
    if not hetccl.rma_available():
        pytest.skip("the library does not export hetccl_rma.h")
    if c.size < 2:
        pytest.skip("needs 2+ ranks")
    sub = c.split(0, c.rank)
    try:
        sub.rma_init()
        right, left = (sub.rank + 1) % sub.size, (sub.rank - 1) % sub.size
        target = torch.zeros(4096, dtype=torch.uint8, device=dev(c))
        src = torch.full((4096,), sub.rank + 1, dtype=torch.uint8, device=dev(c))
        torch.cuda.synchronize()  # registration and transfers are not stream-ordered
        with sub.register(target) as tmem, sub.register(src) as smem:
            assert tmem.kind in ("cuda", "hip")
            descs = np.zeros((sub.size, 128), np.uint8)
            sub.all_gather(np.frombuffer(tmem.descriptor(), np.uint8).copy(), descs)
            remote = sub.import_descriptor(bytes(descs[right]))
            smem.put(0, remote, 0, 4096).wait()
            sub.notify(right, 9)
            assert sub.wait_notification(left, 9, timeout=60)
            assert (target.cpu() == left + 1).all().item()
            sub.barrier()
            remote.release()
    finally:
        sub.destroy()


def test_rma_stream_ordered_batches(gcomm):
    """put_batch_on_stream / get_batch_on_stream on torch CUDA tensors: the put reads the source after the
    kernel queued before it and before the overwrite queued after it; the notification queued after it
    arrives with every block in place; work queued after the get sees its blocks."""
    c = gcomm
    if not hetccl.rma_available():
        pytest.skip("the library does not export hetccl_rma.h")
    if c.size < 2:
        pytest.skip("needs 2+ ranks")
    block, blocks = 4096 + 64, 96
    n = block * blocks
    perm = [(i * 37 + 11) % blocks for i in range(blocks)]
    sub = c.split(0, c.rank)
    try:
        sub.rma_init()
        right, left = (sub.rank + 1) % sub.size, (sub.rank - 1) % sub.size
        target = torch.zeros(n, dtype=torch.uint8, device=dev(c))
        src = torch.zeros(n, dtype=torch.uint8, device=dev(c))
        pub = ((torch.arange(n, device=dev(c)) * 3 + sub.rank * 29 + 5) % 251).to(torch.uint8)
        back = torch.zeros(n, dtype=torch.uint8, device=dev(c))
        torch.cuda.synchronize()
        with sub.register(target) as tmem, sub.register(src) as smem, sub.register(pub) as pmem, \
                sub.register(back) as bmem:
            descs = np.zeros((sub.size, 2, 128), np.uint8)
            mine = np.stack([np.frombuffer(tmem.descriptor(), np.uint8), np.frombuffer(pmem.descriptor(), np.uint8)])
            sub.all_gather(mine.copy(), descs)
            to_right = sub.import_descriptor(bytes(descs[right][0]))
            pub_of_left = sub.import_descriptor(bytes(descs[left][1]))
            puts = np.array([[i * block, perm[i] * block, block] for i in range(0, blocks, 2)], np.uint64)
            gets = [(i * block, perm[i] * block, block) for i in range(0, blocks, 3)]
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                torch.cuda._sleep(20_000_000)  # the put must wait for the fill behind this kernel
                src.copy_(((torch.arange(n, device=dev(c)) * 7 + sub.rank * 41 + 1) % 251).to(torch.uint8))
                smem.put_batch_on_stream(to_right, puts, stream=s)
                hetccl.notify_on_stream(sub, right, 31, stream=s)
                src.fill_(0xA7)  # after the put: must not be what arrives
                bmem.get_batch_on_stream(pub_of_left, gets, stream=s)
                out = back.clone()  # queued after the get
            assert sub.wait_notification(left, 31, timeout=60)
            got = target.cpu().numpy()  # on this rank's default stream: the data is in place already
            want_src = (np.arange(n) * 7 + left * 41 + 1) % 251
            for b in range(blocks):
                srcs = [i for i in range(0, blocks, 2) if perm[i] == b]
                want = want_src[srcs[0] * block:(srcs[0] + 1) * block] if srcs else np.zeros(block)
                assert (got[b * block:(b + 1) * block] == want).all(), f"region block {b} (from {srcs})"
            s.synchronize()
            o = out.cpu().numpy()
            want_pub = (np.arange(n) * 3 + left * 29 + 5) % 251
            for b in range(blocks):
                want = want_pub[perm[b] * block:(perm[b] + 1) * block] if b % 3 == 0 else np.zeros(block)
                assert (o[b * block:(b + 1) * block] == want).all(), f"got block {b}"
            sub.barrier()
            to_right.release()
            pub_of_left.release()
    finally:
        sub.destroy()


def _disjoint_ranges(rng, n, space, largest):
    """n ranges (offset, length) of 1..largest bytes at random unaligned offsets, no two overlapping."""
    lengths = rng.integers(1, largest, n)
    gaps = rng.integers(0, 64, n)
    assert lengths.sum() + gaps.sum() <= space
    starts = np.cumsum(gaps + np.concatenate(([0], lengths[:-1])))
    order = rng.permutation(n)
    return [(int(starts[i]), int(lengths[i])) for i in order]


def test_rma_batches_of_unaligned_ranges_are_exact(gcomm):
    """One put_batch and one get_batch of 3000 ranges each: random lengths (1 B to 96 KiB) at random unaligned
    offsets on both sides, destinations disjoint, in shuffled order (on one host through IPC the target copies
    them as one batch: a copy kernel over the range list where the device reaches every byte). Every byte of
    the destination is checked, the untouched ones too."""
    c = gcomm
    if not hetccl.rma_available():
        pytest.skip("the library does not export hetccl_rma.h")
    if c.size < 2:
        pytest.skip("needs 2+ ranks")
    n, space = 3000, 200 << 20
    sub = c.split(0, c.rank)
    try:
        sub.rma_init()
        right, left = (sub.rank + 1) % sub.size, (sub.rank - 1) % sub.size
        rng = np.random.default_rng(1234)  # the same ranges on every rank
        dsts = _disjoint_ranges(rng, n, space, 96 << 10)
        srcs = [int(rng.integers(0, space - length)) for _, length in dsts]
        pattern = lambda r: ((np.arange(space, dtype=np.int64) * 7 + 13 * r + 1) % 251).astype(np.uint8)
        mine = pattern(sub.rank)
        source = torch.from_numpy(mine).to(dev(c))
        target = torch.zeros(space, dtype=torch.uint8, device=dev(c))
        fetched = torch.zeros(space, dtype=torch.uint8, device=dev(c))
        torch.cuda.synchronize()
        with sub.register(source) as smem, sub.register(target) as tmem, sub.register(fetched) as fmem:
            descs = np.zeros((sub.size, 2, 128), np.uint8)
            own = np.stack([np.frombuffer(tmem.descriptor(), np.uint8), np.frombuffer(smem.descriptor(), np.uint8)])
            sub.all_gather(own.copy(), descs)
            remote_target = sub.import_descriptor(bytes(descs[right, 0]))
            remote_source = sub.import_descriptor(bytes(descs[right, 1]))
            # put: my source[src] -> right's target[dst]
            smem.put_batch(remote_target, [(s_, d, length) for (d, length), s_ in zip(dsts, srcs)]).wait()
            sub.notify(right, 70)
            assert sub.wait_notification(left, 70, timeout=60)
            def check(what, buf, peer):
                """Every byte of `buf`: the peer's pattern where a range landed, zero elsewhere."""
                want, theirs = np.zeros(space, np.uint8), pattern(peer)
                for (d, length), s_ in zip(dsts, srcs):
                    want[d:d + length] = theirs[s_:s_ + length]
                bad = np.flatnonzero(buf.cpu().numpy() != want)
                assert bad.size == 0, f"{what}: {bad.size} wrong bytes, first at {bad[0]}"

            check("put_batch", target, left)
            # get: right's source[src] -> my fetched[dst]
            fmem.get_batch(remote_source, [(d, s_, length) for (d, length), s_ in zip(dsts, srcs)]).wait()
            check("get_batch", fetched, right)
            sub.barrier()
            remote_target.release()
            remote_source.release()
    finally:
        sub.destroy()


def test_rma_deregistration_gives_the_memory_back(gcomm):
    """A 2 GiB tensor that the peer copied (on one host: through its IPC mapping of the allocation), then
    deregistered, deleted and its cache emptied (cudaFree), gives its memory back to the device: the peer
    closed its mapping before deregistration returned. A mapping left open keeps the allocation (freeing it
    is undefined: CUDA keeps the memory for the mapping). Both ranks share the device in these runs, so the
    device's free memory counts both, measured by both ranks between barriers. Twice: the second tensor may
    take the first one's address; the peer must copy from the new allocation."""
    c = gcomm
    if not hetccl.rma_available():
        pytest.skip("the library does not export hetccl_rma.h")
    if c.size < 2:
        pytest.skip("needs 2+ ranks")
    n = 2 << 30
    sub = c.split(0, c.rank)
    try:
        sub.rma_init()
        right, left = (sub.rank + 1) % sub.size, (sub.rank - 1) % sub.size
        target = torch.zeros(n, dtype=torch.uint8, device=dev(c))
        with sub.register(target) as tmem:
            descs = np.zeros((sub.size, 128), np.uint8)
            sub.all_gather(np.frombuffer(tmem.descriptor(), np.uint8).copy(), descs)
            remote = sub.import_descriptor(bytes(descs[right]))
            for round_ in range(2):
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                sub.barrier()
                free_before = torch.cuda.mem_get_info(dev(c))[0]
                sub.barrier()
                value = 16 * round_ + sub.rank + 1
                src = torch.full((n,), value, dtype=torch.uint8, device=dev(c))
                torch.cuda.synchronize()
                with sub.register(src) as smem:
                    smem.put(0, remote, 0, n).wait()
                    sub.notify(right, 60 + round_)
                    assert sub.wait_notification(left, 60 + round_, timeout=60)
                    want = 16 * round_ + left + 1
                    assert (target == want).all().item(), f"round {round_}: the put did not bring {want}"
                    sub.barrier()
                del src
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                sub.barrier()
                free_after = torch.cuda.mem_get_info(dev(c))[0]
                sub.barrier()
                kept = free_before - free_after
                assert kept < (512 << 20), (
                    f"round {round_}: {kept / 2**30:.2f} GiB of the device not given back after every rank "
                    f"deregistered and freed its 2 GiB source (a peer still maps it?)")
            remote.release()
    finally:
        sub.destroy()


def test_rma_puts_then_notify_on_tensor_views(gcomm):
    """Hundreds of puts from a tensor view (not at the start of its allocation: a device-to-device path must
    carry the offset), then one put of 1 GiB and a notification: at the moment it arrives the last bytes of
    the large put are in place (checked first: they are copied last), then every byte."""
    c = gcomm
    if not hetccl.rma_available():
        pytest.skip("the library does not export hetccl_rma.h")
    if c.size < 2:
        pytest.skip("needs 2+ ranks")
    n = 1 << 30
    sub = c.split(0, c.rank)
    try:
        sub.rma_init()
        right, left = (sub.rank + 1) % sub.size, (sub.rank - 1) % sub.size
        target = torch.zeros(n, dtype=torch.uint8, device=dev(c))
        backing = torch.empty(2 * n + 8192, dtype=torch.uint8, device=dev(c))
        small = backing[4096:4096 + n]  # views into one allocation, at offsets 4096 and n + 8192
        large = backing[n + 8192:]
        small.fill_(2 * sub.rank + 1)
        large.fill_(0x80 + sub.rank)
        torch.cuda.synchronize()
        rng = np.random.default_rng(sub.rank)
        with sub.register(target) as tmem, sub.register(small) as smem, sub.register(large) as lmem:
            descs = np.zeros((sub.size, 128), np.uint8)
            sub.all_gather(np.frombuffer(tmem.descriptor(), np.uint8).copy(), descs)
            remote = sub.import_descriptor(bytes(descs[right]))
            reqs = []
            for _ in range(300):
                length = int(rng.integers(1, 200_000))
                off = int(rng.integers(0, n - length))
                reqs.append(smem.put(off, remote, off, length))
            reqs.append(lmem.put(0, remote, 0, n))
            sub.notify(right, 41)
            assert sub.wait_notification(left, 41, timeout=60)
            tail = target[n - (1 << 20):].cpu().numpy()
            want = 0x80 + left
            assert (tail == want).all(), f"the last MiB at the notification: {np.unique(tail)} (want {want})"
            assert (target == want).all().item(), "a byte of the large put was not in place at the notification"
            for r in reqs:
                r.wait()
            sub.barrier()
            remote.release()
    finally:
        sub.destroy()
