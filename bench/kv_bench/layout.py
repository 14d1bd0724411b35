"""The benchmark's KV cache: its layout in pages, the block ids a get pulls and their ranges, buffers, the
cache's fill (every 8-byte word a function of its index) and the checks of pulled bytes against it."""

from __future__ import annotations

import numpy as np

TOKENS = 16
K_MUL, SEED = 2654435761, 0x5EED  # cache word i holds i * K_MUL + SEED (indices < 2^31: no int64 overflow)


class CacheLayout:
    """Buffers, pages and checks of a Bench (mixed into runner.Bench)."""

    # ---- buffers -------------------------------------------------------------------------------------
    def words(self, n):  # n int64 words of zeros-or-garbage on this rank's device / host
        if self.cuda:
            return self.torch.empty(n, dtype=self.torch.int64, device=self.dev)
        return np.empty(n, np.uint64)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.dev)

    def units(self, sel, n):
        """(local page index, remote page index) of every page a get of block ids `sel` moves, in local order."""
        L, B = self.a.layers, self.a.blocks
        sel = np.asarray(sel, np.int64)
        if self.a.layout == "layer":
            local = np.arange(L * n, dtype=np.int64)
            remote = (np.arange(L, dtype=np.int64)[:, None] * B + sel[None, :]).reshape(-1)
        else:
            local = np.arange(n * L, dtype=np.int64)
            remote = (sel[:, None] * L + np.arange(L, dtype=np.int64)[None, :]).reshape(-1)
        return local, remote

    def ranges(self, sel):
        n, L, pg = len(sel), self.a.layers, self.page
        if self.a.layout == "layer":
            loc, rem = self.units(sel, n)
            r = np.empty((len(loc), 3), np.uint64)
            r[:, 0] = loc * pg
            r[:, 1] = rem * pg
            r[:, 2] = pg
            return r
        r = np.empty((n, 3), np.uint64)
        r[:, 0] = np.arange(n, dtype=np.uint64) * np.uint64(L * pg)
        r[:, 1] = np.asarray(sel, np.uint64) * np.uint64(L * pg)
        r[:, 2] = L * pg
        return r

    def select(self, n):
        rng = np.random.default_rng(self.a.seed * 1000 + n)
        return rng.permutation(self.a.blocks)[:n]  # random order, the same on both ranks

    def verify(self, buf, sel):
        """Wrong 8-byte words in buf's first len(sel) blocks (packed in local order)."""
        n = len(sel)
        loc, rem = self.units(sel, n)
        W, bad, chunk = self.W, 0, max(1, (64 << 20) // self.page)
        for s in range(0, len(loc), chunk):
            lo, re = loc[s:s + chunk], rem[s:s + chunk]
            if self.cuda:
                t = self.torch
                idx = t.as_tensor(re, device=self.dev)[:, None] * W + t.arange(W, device=self.dev)[None, :]
                got = buf[int(lo[0]) * W:(int(lo[-1]) + 1) * W].view(len(lo), W)
                bad += int((got != idx * K_MUL + SEED).sum().item())
            else:
                idx = (re.astype(np.uint64)[:, None] * np.uint64(W) + np.arange(W, dtype=np.uint64)[None, :])
                idx *= np.uint64(K_MUL)
                idx += np.uint64(SEED)
                got = buf[int(lo[0]) * W:(int(lo[-1]) + 1) * W].reshape(len(lo), W)
                bad += int(np.count_nonzero(got != idx))
        return bad

    # ---- rank 0: the cache -----------------------------------------------------------------------------
    def fill_cache(self):
        n = self.cache_bytes // 8
        if self.cuda:
            t = self.torch
            self.cache = t.arange(n, dtype=t.int64, device=self.dev)
            self.cache.mul_(K_MUL).add_(SEED)
        else:
            self.cache = np.arange(n, dtype=np.uint64)
            self.cache *= np.uint64(K_MUL)
            self.cache += np.uint64(SEED)
        if self.a.corrupt:  # one word of every page
            self.cache[self.W // 3::self.W] += 1
        self.sync()

    def gather(self, sel, out_flat):
        """The ceiling's gather: the same pages as a get of `sel`, from the cache into out_flat (packed)."""
        L, B, W, n = self.a.layers, self.a.blocks, self.W, len(sel)
        if self.a.layout == "layer":
            src, axis, shape = (L, B, W), 1, (L, n, W)
        else:
            src, axis, shape = (B, L * W), 0, (n, L * W)
        out = out_flat[:L * n * W]
        if self.cuda:
            t = self.torch
            t.index_select(self.cache.view(*src), axis, t.as_tensor(np.asarray(sel, np.int64), device=self.dev),
                           out=out.view(*shape))
        else:
            np.take(self.cache.reshape(src), sel, axis=axis, out=out.reshape(shape), mode="clip")
