"""Exceptions: one class per hetcclResult_t code, all subclasses of HetcclError."""

from __future__ import annotations

# hetcclResult_t values (include/hetccl/hetccl.h)
SUCCESS = 0
UNHANDLED_CUDA_ERROR = 1
SYSTEM_ERROR = 2
INTERNAL_ERROR = 3
INVALID_ARGUMENT = 4
INVALID_USAGE = 5
REMOTE_ERROR = 6
IN_PROGRESS = 7

_RESULT_NAMES = {
    0: "hetcclSuccess",
    1: "hetcclUnhandledCudaError",
    2: "hetcclSystemError",
    3: "hetcclInternalError",
    4: "hetcclInvalidArgument",
    5: "hetcclInvalidUsage",
    6: "hetcclRemoteError",
    7: "hetcclInProgress",
}


class HetcclError(RuntimeError):
    """A hetccl call failed. ``result`` is the hetcclResult_t code, ``result_name`` its C name and the
    message is hetcclGetLastError()'s text (it names the peer for remote failures)."""

    result = -1

    def __init__(self, message: str, result: int | None = None):
        if result is not None:
            self.result = result
        super().__init__(message)

    @property
    def result_name(self) -> str:
        return _RESULT_NAMES.get(self.result, f"result {self.result}")


class UnhandledCudaError(HetcclError):
    """hetcclUnhandledCudaError: the GPU runtime failed."""

    result = UNHANDLED_CUDA_ERROR


class HetcclSystemError(HetcclError):
    """hetcclSystemError: sockets, shared memory, the operating system."""

    result = SYSTEM_ERROR


class InternalError(HetcclError):
    """hetcclInternalError."""

    result = INTERNAL_ERROR


class InvalidArgumentError(HetcclError, ValueError):
    """hetcclInvalidArgument, also raised by the Python layer for buffers it cannot pass (dtype,
    layout, sizes). Nothing was changed; the communicator stays usable."""

    result = INVALID_ARGUMENT


class DtypeError(InvalidArgumentError, TypeError):
    """A buffer whose element type the call cannot use: a reducing collective on a type hetccl cannot
    reduce (complex, bool, int16, structured records, other buffer formats), or an array of Python
    objects anywhere (its elements are pointers into this process). Also a TypeError. Nothing was
    changed; the communicator stays usable."""


class ArgumentOverflowError(InvalidArgumentError, OverflowError):
    """An integer argument (offset, size, count, tag, rank) outside what its C type holds: refused before it
    reaches C, where ctypes would wrap it silently (a put at offset 2**64 + 8 landed at offset 8). Also an
    OverflowError. Negative values where C takes a size raise InvalidArgumentError (a ValueError)."""


class InvalidUsageError(HetcclError):
    """hetcclInvalidUsage: a call not allowed in this state (e.g. barrier inside a group)."""

    result = INVALID_USAGE


class RemoteError(HetcclError):
    """hetcclRemoteError: a peer failed (died, closed its connection, no progress within
    HETCCL_TIMEOUT) or the communicator was aborted. The message names the peer's rank and host. The
    communicator is unusable afterwards: abort or destroy it."""

    result = REMOTE_ERROR


class InProgressError(HetcclError):
    """hetcclInProgress."""

    result = IN_PROGRESS


_CLASSES = {
    UNHANDLED_CUDA_ERROR: UnhandledCudaError,
    SYSTEM_ERROR: HetcclSystemError,
    INTERNAL_ERROR: InternalError,
    INVALID_ARGUMENT: InvalidArgumentError,
    INVALID_USAGE: InvalidUsageError,
    REMOTE_ERROR: RemoteError,
    IN_PROGRESS: InProgressError,
}


def error_class(result: int) -> type:
    return _CLASSES.get(result, HetcclError)


def make_error(result: int, message: str) -> HetcclError:
    cls = error_class(result)
    err = cls(message, result)
    return err
