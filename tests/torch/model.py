"""A small causal transformer language model and its synthetic data, the same on every backend.

Data: every sequence follows t[k+1] = (t[k] + stride) % VOCAB from a random start with a random stride in
[1, 8], so the loss can fall. The global batch of each step comes from one generator seeded with
(seed, step) and is split evenly over the ranks: the averaged DDP/FSDP update equals the single-process
update whatever the number of ranks, so runs with 2 and 4 ranks follow the same loss curve."""
import os

import torch
import torch.nn as nn

VOCAB, SEQ, D_MODEL, HEADS, LAYERS, FF = 2048, 64, 256, 4, 4, 1024


def make_deterministic():
    """Bit-reproducible kernels: no TF32, math attention, deterministic algorithms."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
        if hasattr(torch.backends.cuda, name):  # leaves the math kernel, which is deterministic
            getattr(torch.backends.cuda, name)(False)
    torch.use_deterministic_algorithms(True, warn_only=True)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Parameter(torch.randn(SEQ, D_MODEL) * 0.02)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB)
        self.register_buffer("causal", torch.triu(torch.full((SEQ, SEQ), float("-inf")), diagonal=1), persistent=False)

    def forward(self, tokens):
        h = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for layer in self.layers:
            h = layer(h, src_mask=self.causal)
        return self.head(self.norm(h))


class Mlp(nn.Module):
    """MLP_LAYERS square bias-free linear layers of MLP_WIDTH with ReLU between: a gradient-heavy model for
    DDP step timing (8 x 4096^2 parameters: 256 MiB of bfloat16 gradients, about 11 buckets of DDP's 25 MB)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[m for _ in range(MLP_LAYERS)
                                      for m in (nn.Linear(MLP_WIDTH, MLP_WIDTH, bias=False), nn.ReLU())])

    def forward(self, x):
        return self.layers(x)


MLP_LAYERS, MLP_WIDTH = 8, 4096


def build_model(seed, device, kind="tinylm"):
    torch.manual_seed(seed)
    return (Mlp() if kind == "mlp" else TinyLM()).to(device)


def mlp_batch(seed, step, global_batch, rank, world, device, dtype):
    """This rank's share of step `step`'s global batch for Mlp: [global_batch/world, MLP_WIDTH]."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    x = torch.randn(global_batch, MLP_WIDTH, generator=g)
    share = global_batch // world
    return x[rank * share:(rank + 1) * share].to(device=device, dtype=dtype)


def batch(seed, step, global_batch, rank, world, device):
    """This rank's share of step `step`'s global batch: (inputs, targets), each [global_batch/world, SEQ]."""
    if global_batch % world:
        raise ValueError(f"global batch {global_batch} does not split over {world} ranks")
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    start = torch.randint(0, VOCAB, (global_batch, 1), generator=g)
    stride = torch.randint(1, 9, (global_batch, 1), generator=g)
    seq = (start + stride * torch.arange(SEQ + 1)) % VOCAB
    share = global_batch // world
    mine = seq[rank * share:(rank + 1) * share].to(device)
    return mine[:, :-1], mine[:, 1:]


def loss_fn(model, inputs, targets):
    logits = model(inputs)
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
