"""The KV-block transfer benchmark's parts (bench/kv_transfer_bench.py is the command): the cache layout and
checks, timing and the copy ceiling, the torch.distributed baseline, the per-call overhead, the report, and
the run that puts them together (runner.Bench). hetccl must be importable (the command puts ../python first)."""
