/* The GPU device runtime plugin interface: what a vendor runtime (CUDA today, HIP later) offers hetccl.
 *
 * A plugin is a shared object (libhetccl-cuda.so) that the core opens with dlopen and never links. It
 * exports one symbol, `hetcclGpuPlugin_v4` of type `hetcclGpuPlugin_v4_t`, a struct of function pointers
 * (shaped like NCCL's net plugin v-structs). The core checks `version` before touching anything else.
 * Versions: each appends entry points at the end, so an older struct is a newer one's prefix:
 * v2 = v1 + batched stream operations on 64-bit words with call-stamp checks, capture queries, device
 * addresses; v3 = v2 + device memory shared with other processes of the host (IPC handles), batched copies;
 * v4 = v3 + the latency path's all-reduce kernel (llAllReduce). Older symbols were `hetcclGpuPlugin_v1` ..
 * `hetcclGpuPlugin_v3`. This core needs v4 and refuses an older plugin, naming both versions. `hetcclGpuPlugin_t` is the current version (the core uses only that name).
 *
 * Conventions of every function:
 *  - returns 0 (HETCCL_GPU_OK) on success, a nonzero HETCCL_GPU_ERR_* code on failure; after a failure
 *    `lastError()` returns a text naming the failed call and the vendor's error string (thread-local,
 *    valid until the next call on the same thread);
 *  - streams and events are opaque `void*`; the null stream is the vendor's default (legacy) stream;
 *  - "device" pointers are vendor device memory; "pinned" pointers are page-locked host memory mapped
 *    into the device address space (usable by copies and kernels on every device);
 *  - every function is thread-safe; device-scoped calls act on the calling thread's current device;
 *  - allocation, free, stream and event creation calls are legal while a stream is being captured in
 *    the global capture mode (the plugin relaxes the calling thread's capture mode around them).
 * Pure C so that a plugin built with another compiler (hipcc) or outside this tree can implement it.
 */
#ifndef HETCCL_DEVICE_BASE_GPU_PLUGIN_H_
#define HETCCL_DEVICE_BASE_GPU_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HETCCL_GPU_PLUGIN_VERSION 4
#define HETCCL_GPU_PLUGIN_SYMBOL "hetcclGpuPlugin_v4"

/* Error codes. */
#define HETCCL_GPU_OK 0
#define HETCCL_GPU_ERR_RUNTIME 1     /* the vendor runtime failed (out of memory, launch failure, ...) */
#define HETCCL_GPU_ERR_NO_DEVICE 2   /* no device or no usable driver: a normal case on CPU-only hosts */
#define HETCCL_GPU_ERR_ARGUMENT 3    /* bad argument: null pointer, unknown type/op, ... */
#define HETCCL_GPU_ERR_NOT_READY 4   /* eventQuery / streamQuery: work still pending (not a failure) */

/* Log levels passed to the logger (values of hetccl::log::Level). */
#define HETCCL_GPU_LOG_WARN 2
#define HETCCL_GPU_LOG_INFO 3
#define HETCCL_GPU_LOG_TRACE 4

/* The core's logger: one formatted line, no trailing newline. May be called from any thread. */
typedef void (*hetcclGpuLogger_v1_t)(int level, const char* file, int line, const char* message);

/* What a pointer is (pointerQuery). */
#define HETCCL_GPU_MEM_HOST 0     /* ordinary host memory unknown to the runtime */
#define HETCCL_GPU_MEM_PINNED 1   /* page-locked host memory (allocPinned or hostRegister) */
#define HETCCL_GPU_MEM_DEVICE 2   /* device memory */
#define HETCCL_GPU_MEM_MANAGED 3  /* managed (unified) memory */

/* Flags of streamWaitFlag / streamWriteFlag. */
#define HETCCL_GPU_FLAG_FORCE_KERNEL 1u  /* use the polling/writing kernel even where stream memory ops work */

/* Stream operations on 64-bit words (streamOps, v2): constant values only, so that work captured into
 * a CUDA graph does the same on every replay. `word` and `report` are device-accessible addresses
 * (devicePointer()) of pinned host or device memory, 8-byte aligned.
 *   WAIT_GEQ     later work waits until (int64_t)(*word - value) >= 0
 *   WAIT_EQ      later work waits until *word == value
 *   WRITE        *word = value, after every earlier write of the stream is visible system-wide
 *   STAMP_CHECK  compares word[0..3] with expect[0..3] (a call stamp, see exec/pipeline/gpu_stamp.hpp); on the
 *                first mismatch (report[0] still 0) stores report[1..4] = what was found, report[5..8] =
 *                expect, then report[0] = 1. Never waits; the stream goes on either way (the host reports
 *                the error and releases the streams).
 * Operations of one call run in order. CUDA: waits and writes are stream memory operations
 * (cuStreamBatchMemOp) where the device supports them, else kernels; STAMP_CHECK is a one-thread kernel
 * (the stream pipeline no longer queues it: it waits for the expected stamp words instead). */
#define HETCCL_GPU_OP_WAIT_GEQ 1
#define HETCCL_GPU_OP_WAIT_EQ 2
#define HETCCL_GPU_OP_WRITE 3
#define HETCCL_GPU_OP_STAMP_CHECK 4
#define HETCCL_GPU_REPORT_WORDS 9
/* streamOps takes at most this many operations per call. */
#define HETCCL_GPU_MAX_STREAM_OPS 8

typedef struct {
  uint32_t kind;   /* HETCCL_GPU_OP_* */
  uint32_t flags;  /* 0, or HETCCL_GPU_FLAG_FORCE_KERNEL: run it in the kernel even where memory ops work */
  uint64_t* word;
  uint64_t value;      /* WAIT_*, WRITE */
  uint64_t expect[4];  /* STAMP_CHECK */
  uint64_t* report;    /* STAMP_CHECK */
} hetcclGpuStreamOp_t;

/* The latency path (llAllReduce, v4): an all-reduce of a few KiB among the GPU ranks of one host in ONE kernel
 * per rank, through *boards*: pinned host memory (a shared-memory segment per rank, mapped and registered
 * by every rank of the host) that kernels write and poll directly. Each rank owns one board and writes
 * only its own; it reads every peer's. A board holds two sets (the call's sequence number's parity picks
 * one) of HETCCL_GPU_LL_HEADER_WORDS header words (the call stamp) and then data lines; every 64-bit word
 * is 32 bits of payload | the call's 32-bit sequence number << 32, so a reader that sees the sequence
 * number in a word has that word's payload: no separate flag, no fence between data and flag
 * (the protocol: src/device/gpu/ll_protocol.cuh). The sequence number lives in device memory (`seq`),
 * advanced by the kernel itself, so a call captured into a CUDA graph is right on every replay. */
#define HETCCL_GPU_LL_MAX_RANKS 16
#define HETCCL_GPU_LL_HEADER_WORDS 8

typedef struct {
  /* Every rank's board as kernels address it (devicePointer); boards[rank] is the caller's own. */
  uint64_t* boards[HETCCL_GPU_LL_MAX_RANKS];
  uint64_t setWords;   /* 64-bit words of one set: HETCCL_GPU_LL_HEADER_WORDS + 2 per 8 bytes of data */
  int32_t nranks;      /* 2 .. HETCCL_GPU_LL_MAX_RANKS */
  int32_t rank;
  const void* send;    /* device memory, count elements */
  void* recv;          /* device memory, count elements (may equal send) */
  uint64_t count;
  int32_t dataType;    /* hetccl::DataType */
  int32_t op;          /* sum, prod, max, min, avg (the sum divided by nranks) */
  uint64_t stamp[4];   /* the call stamp every rank must agree on (word 1 is replaced by the sequence number) */
  uint64_t* seq;       /* device memory, 16 bytes, 0 at the first call: the last sequence number this rank used,
                          then a counter of the kernel's finished blocks (0 between calls) */
  const uint64_t* abortWord;  /* pinned: once nonzero the kernel stops waiting and ends (outputs undefined) */
  uint64_t* report;    /* pinned, HETCCL_GPU_REPORT_WORDS: the first stamp mismatch the kernel found (as
                          STAMP_CHECK reports it: [1..4] found on the peer's board, [5..8] expected) */
  uint64_t* startedWord;   /* pinned, may be NULL: set to callNumber when the kernel starts */
  uint64_t* finishedWord;  /* pinned, may be NULL: set to callNumber when it ends */
  uint64_t callNumber;
  uint64_t* doneWord;      /* pinned, may be NULL: set to doneValue when it ends (after the outputs) */
  uint64_t doneValue;
} hetcclGpuLlAllReduce_t;

/* Reduction operators (values of hetccl::RedOpKind; Avg and PreMulSum accumulate as Sum). Data types are
 * hetccl::DataType values (NCCL's ncclDataType_t: int8=0 ... bfloat16=9). */

typedef struct {
  /* HETCCL_GPU_PLUGIN_VERSION of the interface this struct implements. Read first. */
  int version;
  /* Short name for logs, e.g. "cuda". */
  const char* name;

  /* Initialises the plugin once per process (later calls return the first result). Fails with
   * HETCCL_GPU_ERR_NO_DEVICE when there is no driver or no device. `logger` may be NULL (no logging). */
  int (*init)(hetcclGpuLogger_v1_t logger);
  /* Text of the calling thread's last failure ("" when none). Never NULL. */
  const char* (*lastError)(void);
  /* Runtime and driver versions as 1000*major + 10*minor (0 when unknown). */
  int (*versions)(int* runtimeVersion, int* driverVersion);

  /* Devices. */
  int (*deviceCount)(int* count);
  int (*getDevice)(int* device);
  int (*setDevice)(int device);

  /* Device memory of the current device; allocDevice never returns NULL on success. bytes > 0. */
  int (*allocDevice)(void** ptr, size_t bytes);
  int (*freeDevice)(void* ptr);
  /* Pinned, mapped, portable host memory. */
  int (*allocPinned)(void** ptr, size_t bytes);
  int (*freePinned)(void* ptr);
  /* Pins existing host memory (e.g. a shared-memory segment) as mapped and portable. */
  int (*hostRegister)(void* ptr, size_t bytes);
  int (*hostUnregister)(void* ptr);
  /* What `ptr` is (HETCCL_GPU_MEM_*) and, for device/managed memory, its device ordinal (else -1).
   * Unknown host pointers are not an error. */
  int (*pointerQuery)(const void* ptr, int* memType, int* device);

  /* Streams (non-blocking with respect to the null stream). */
  int (*streamCreate)(void** stream);
  int (*streamDestroy)(void* stream);
  int (*streamSynchronize)(void* stream);
  /* HETCCL_GPU_OK when all work queued on the stream is done, HETCCL_GPU_ERR_NOT_READY when not. */
  int (*streamQuery)(void* stream);

  /* Events (timing disabled). eventQuery: HETCCL_GPU_OK when reached, HETCCL_GPU_ERR_NOT_READY when not. */
  int (*eventCreate)(void** event);
  int (*eventDestroy)(void* event);
  int (*eventRecord)(void* event, void* stream);
  int (*eventQuery)(void* event);
  int (*eventSynchronize)(void* event);
  /* Later work on `stream` waits until `event` (as last recorded) is reached. */
  int (*streamWaitEvent)(void* stream, void* event);

  /* Copies between any two of host, pinned and device memory (unified addressing decides the direction).
   * The async forms are ordered on `stream`; with ordinary (pageable) host memory they may block. */
  int (*memcpyAsync)(void* dst, const void* src, size_t bytes, void* stream);
  int (*memsetAsync)(void* dst, int byteValue, size_t bytes, void* stream);
  /* Synchronous forms: complete (and visible to the host) when they return. */
  int (*memcpySync)(void* dst, const void* src, size_t bytes);
  int (*memsetSync)(void* dst, int byteValue, size_t bytes);

  /* Later work on `stream` does not start until the 64-bit word at `flag` (pinned host memory, 8-byte
   * aligned) satisfies (int64_t)(*flag - value) >= 0, i.e. reaches `value` for an increasing counter.
   * Uses the driver's stream memory operations where supported, else a one-thread kernel polling the flag
   * with volatile loads (which occupies the stream and a little of one multiprocessor while it waits). The
   * host must eventually write the flag (also on abort), or the stream never proceeds. */
  int (*streamWaitFlag)(void* stream, const uint64_t* flag, uint64_t value, unsigned flags);
  /* When `stream` reaches this point (after all earlier work on it, whose memory effects are then
   * visible to the host), the 64-bit word at `flag` (pinned host memory) becomes `value`. */
  int (*streamWriteFlag)(void* stream, uint64_t* flag, uint64_t value, unsigned flags);
  /* 1 in *native when streamWaitFlag/streamWriteFlag use stream memory operations on the current device,
   * 0 when they use kernels. */
  int (*flagMethod)(int* native);

  /* Reduction kernels, asynchronous on `stream`; dst and src are device (or mapped pinned) memory, the
   * same buffer or not overlapping. Results are bit-identical to hetccl's host kernels for finite inputs.
   *   reduce:  dst[i] = dst[i] (op) src[i]          (op: sum, prod, max, min; avg/premulsum as sum)
   *   scale:   dst[i] = src[i] * scalar             (scalar: one element of dataType, host bytes)
   *   divide:  buf[i] = buf[i] / n                  (n >= 1; integers truncate toward zero) */
  int (*reduce)(void* dst, const void* src, size_t count, int dataType, int op, void* stream);
  int (*scale)(void* dst, const void* src, size_t count, int dataType, const void* scalar, void* stream);
  int (*divide)(void* buf, size_t count, int dataType, uint64_t n, void* stream);

  /* ---- v2 ---- */
  /* Queues `count` (1..HETCCL_GPU_MAX_STREAM_OPS) operations on `stream`, run in order (see
   * HETCCL_GPU_OP_*). Capturable into a graph. */
  int (*streamOps)(void* stream, const hetcclGpuStreamOp_t* ops, unsigned count);
  /* *capturing = 1 while `stream` is being captured into a graph (an origin stream, or one that joined a
   * capture), else 0; *captureId identifies the capture (0 when none). */
  int (*streamCaptureInfo)(void* stream, int* capturing, uint64_t* captureId);
  /* The address kernels use for `ptr` (device memory, pinned host memory, registered host memory). */
  int (*devicePointer)(const void* ptr, void** devicePtr);

  /* ---- v3: device memory shared with other processes of the host (IPC) ---- */
  /* Exports the device allocation that holds `ptr` to other processes of this host: HETCCL_GPU_IPC_HANDLE_BYTES
   * opaque bytes in `handle`, the offset of `ptr` in that allocation and the allocation's size. Fails
   * (HETCCL_GPU_ERR_RUNTIME) for memory the runtime cannot share this way -- host, managed, memory-pool
   * (stream-ordered) or virtual-memory allocations: the caller then moves the data another way. Entries
   * of a plugin without IPC may be NULL (the core then never shares device memory). */
  int (*ipcExport)(const void* ptr, void* handle, size_t* offset, size_t* allocBytes);
  /* Maps an allocation another process exported (ipcExport) into this one, for the current device:
   * *base is its first byte here, *bytes its size. A handle of this very process is refused. Close with
   * ipcClose(*base). Copies between the mapping and any memory take memcpyAsync / memcpySync. */
  int (*ipcOpen)(const void* handle, void** base, size_t* bytes);
  int (*ipcClose)(void* base);
  /* `count` copies (any directions, as memcpyAsync) queued on `stream` as one batch: the copies run after
   * earlier work of the stream and before later work, in no order among themselves -- destinations must not
   * overlap each other. Where the runtime has batched copies (CUDA 12.8+: cudaMemcpyBatchAsync) one call,
   * else one memcpyAsync each; the CUDA plugin copies a batch whose sources and destinations lie in one
   * device allocation each as one kernel over the range list. Copies of 0 bytes are skipped. May be NULL
   * (the core then loops). */
  int (*memcpyBatchAsync)(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, void* stream);

  /* ---- v4: the latency path ---- */
  /* Queues the all-reduce `args` describes (copied: the caller may reuse it) on `stream` as one kernel
   * (capturable; one block for a few lines, more for more). Every rank of args->boards runs the same calls in the same order. The kernel writes this
   * rank's contribution to its board, then waits for every peer's words of this call and reduces them in
   * rank order (identical results on every rank). It waits until the call's words arrive, a peer's stamp
   * differs (it records the report and ends) or *abortWord becomes nonzero. NULL in a plugin without it
   * (the core then never takes the latency path). */
  int (*llAllReduce)(const hetcclGpuLlAllReduce_t* args, void* stream);
  /* The PCI bus id of `device` as the vendor writes it ("0000:3b:00.0"), NUL-terminated in `busId` (`length`
   * bytes; 32 suffice). The core tells ranks that share a GPU by it (the latency path, whose kernels poll,
   * is not taken there). NULL where unknown. */
  int (*deviceBusId)(int device, char* busId, int length);
} hetcclGpuPlugin_v4_t;

/* Size of an IPC handle (CUDA's and HIP's are 64 bytes). */
#define HETCCL_GPU_IPC_HANDLE_BYTES 64

/* The interface version this core uses. */
typedef hetcclGpuPlugin_v4_t hetcclGpuPlugin_t;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* HETCCL_DEVICE_BASE_GPU_PLUGIN_H_ */
