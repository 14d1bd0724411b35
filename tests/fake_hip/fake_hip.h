/* Control and statistics interface of the fake HIP runtime (libhetccl-fakehip.so), for tests.
 *
 * The fake exports the hip* / hiprtc* functions the HIP plugin resolves (src/device/hip/hip_api.hpp),
 * implemented on host memory and host threads; see tests/fake_hip/README.md. Besides its environment
 * knobs (read once, at the first call), tests reach it through these functions, looked up with dlsym on
 * the same library the plugin opened (dlopen of the same path returns the same handle).
 */
#ifndef HETCCL_TESTS_FAKE_HIP_H_
#define HETCCL_TESTS_FAKE_HIP_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint64_t compiles;          /* successful hiprtcCompileProgram calls */
  uint64_t compileFailures;   /* failed hiprtcCompileProgram calls */
  uint64_t moduleLoads;       /* successful hipModuleLoadData calls */
  uint64_t moduleLoadFailures;
  uint64_t launches;          /* kernels queued by hipModuleLaunchKernel */
  uint64_t kernelsRun;        /* kernels executed by a stream's worker */
  uint64_t waitValueOps;      /* hipStreamWaitValue64 queued (native waits) */
  uint64_t writeValueOps;     /* hipStreamWriteValue64 queued (native writes) */
  uint64_t badAccesses;       /* kernel or copy touching memory the device cannot access */
  uint64_t injectedFailures;  /* calls failed by FAKEHIP_FAIL / fakehipFailCall */
  uint64_t liveDeviceAllocs;  /* hipMalloc'ed blocks not yet freed */
  uint64_t livePinnedAllocs;  /* hipHostMalloc'ed blocks not yet freed */
  uint64_t liveRegistrations; /* hipHostRegister'ed ranges not yet unregistered */
  uint64_t liveStreams;       /* created, not destroyed */
  uint64_t liveEvents;
  uint64_t capturedOps;       /* operations queued on a capturing stream (recorded, not run) */
  uint64_t relaxedViolations; /* allocation/creation calls made while a stream captured in global mode */
  uint64_t liveIpcMappings;   /* hipIpcOpenMemHandle mappings not yet closed by hipIpcCloseMemHandle */
  uint64_t freedWhileMapped;  /* hipFree of a block another process still mapped (undefined on real runtimes) */
} fakehipStats_t;

/* Snapshot of the counters (process-wide). */
void fakehipStats(fakehipStats_t* stats);
/* Makes the `nth` next call (1 = the next one) of function `name` fail with `error` (0: the function's
 * usual failure code). Replaces FAKEHIP_FAIL. name NULL clears. */
void fakehipFailCall(const char* name, int nth, int error);
/* Number of calls made so far to `name` (every exported hip / hiprtc function counts its calls). */
uint64_t fakehipCallCount(const char* name);
/* Marks `stream` as being captured (active != 0) with capture id `id` in the given mode (0 global,
 * 1 thread-local, 2 relaxed), or ends it. Operations queued while capturing are recorded, not run.
 * Returns 0, or a hipError_t for an unknown stream. */
int fakehipSetCapturing(void* stream, int active, unsigned long long id, int mode);
/* Operations queued on `stream` (NULL: the current device's null stream) not yet executed. */
uint64_t fakehipPendingOps(void* stream);
/* Text of the last bad access, or "". */
const char* fakehipLastBadAccess(void);
/* 1 when the fake can run the kernel of that name (kernel_abi.hpp's names), else 0. */
int fakehipKnowsKernel(const char* name);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* HETCCL_TESTS_FAKE_HIP_H_ */
