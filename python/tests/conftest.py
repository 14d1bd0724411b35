"""Fixtures: `comm` is the job's communicator under a launcher (hetccl.init(): hetccl-run, torchrun, ...),
or a 1-rank communicator when pytest runs alone. Every rank runs the same tests in the same order, so
the collectives inside them match.

HETCCL_PYTEST_SUMMARY_DIR: each rank writes rank<r>.json there (counts of passed/failed/skipped/errors)
for the CI driver (python/ci/run_pytest_job.sh), which fails when any rank failed or did not report."""

import json
import os
import sys

import pytest

import hetccl

_COMM = None


def _get_comm():
    global _COMM
    if _COMM is None:
        try:  # on a GPU machine with torch: init() binds the rank to GPU local_rank % count (test_gpu_torch.py)
            import torch  # noqa: F401
        except ImportError:
            pass
        if hetccl.launched():
            _COMM = hetccl.init()
        else:
            _COMM = hetccl.Communicator(hetccl.get_unique_id(), 1, 0)
    return _COMM


@pytest.fixture(scope="session")
def comm():
    return _get_comm()


@pytest.fixture(scope="session")
def job_rank():
    """This process's rank in the job (0 when pytest runs alone), without creating a communicator."""
    return hetccl.launch_env().rank if hetccl.launched() else 0


def pytest_report_header(config):
    return [f"hetccl {hetccl.version()} from {hetccl.library_path()} ({hetccl.library_source()}); "
            f"rma_available={hetccl.rma_available()}; python {sys.version.split()[0]}"]


def pytest_sessionfinish(session, exitstatus):
    global _COMM
    if _COMM is not None:
        try:
            if exitstatus == 0:
                _COMM.destroy()
            else:
                _COMM.abort()  # a failed rank may be out of step with the others: do not wait for them
        except hetccl.HetcclError:
            pass
        _COMM = None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = {k: len(terminalreporter.stats.get(k, [])) for k in ("passed", "failed", "skipped", "error", "xfailed")}
    rank = hetccl.launch_env().rank if hetccl.launched() else 0
    line = " ".join(f"{k}={v}" for k, v in stats.items())
    terminalreporter.write_line(f"hetccl pytest rank {rank}: {line} (exit {int(exitstatus)})")
    out = os.environ.get("HETCCL_PYTEST_SUMMARY_DIR")
    if out:
        with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
            json.dump({"rank": rank, "exit": int(exitstatus), **stats}, f)
