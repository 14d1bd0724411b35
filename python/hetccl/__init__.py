"""hetccl for Python: one collective communicator over GPUs and CPUs of different vendors.

    import numpy as np, hetccl
    with hetccl.init() as comm:                 # under hetccl-run / torchrun / mpirun / srun
        x = np.full(4, comm.rank, np.float32)
        comm.all_reduce(x)                      # in place, on x's memory (any __dlpack__ object)

torch.distributed backend: `import hetccl.torch_backend`, then dist.init_process_group("hetccl") (imports torch;
`import hetccl` alone does not).

Binding: ctypes over the C API of libhetccl.so (no compiled extension; see python/README.md for the
measured per-call overhead). library_path() says which libhetccl.so was loaded.
"""

from ._agent import Agent, Xfer
from ._agent_api import READ, WRITE, AgentUnavailableError, agent_available
from ._agent_memory import AgentMemory
from ._agent_ranges import range_dtype
from ._comm import (AVG, MAX, MIN, PROD, SUM, Communicator, DataType, PreMulSumOp, ReduceOp, get_unique_id, group,
                    init, library_path, library_source, version)
from ._errors import (ArgumentOverflowError, DtypeError, HetcclError, HetcclSystemError, InProgressError, InternalError,
                      InvalidArgumentError, InvalidUsageError, RemoteError, UnhandledCudaError)
from ._launch import LaunchEnv, launch_env, launched
from ._rma import Memory, RemoteMemory, Request, RmaUnavailableError, notify_on_stream, rma_available, wait_all

__version__ = "0.1.0"
try:  # as installed: "0.1.0+bundled" when the package ships libhetccl.so (python/setup.py)
    from ._build_info import VERSION as __version__  # noqa: F811
except ImportError:  # running from the checkout, or a package built before VERSION was recorded
    pass
SPLIT_NOCOLOR = -1

__all__ = [
    "AVG", "MAX", "MIN", "PROD", "SUM", "SPLIT_NOCOLOR", "Communicator", "DataType", "PreMulSumOp", "ReduceOp",
    "get_unique_id", "group", "init", "library_path", "library_source", "version", "ArgumentOverflowError",
    "DtypeError", "HetcclError",
    "HetcclSystemError", "InProgressError", "InternalError", "InvalidArgumentError", "InvalidUsageError",
    "RemoteError", "UnhandledCudaError", "LaunchEnv", "launch_env", "launched", "Memory", "RemoteMemory",
    "Request", "RmaUnavailableError", "notify_on_stream", "rma_available", "wait_all", "Agent", "AgentMemory",
    "AgentUnavailableError", "Xfer", "READ", "WRITE", "agent_available", "range_dtype",
]
