/* The ABI facts compared between hetccl's include/hetccl/nccl_abi.h and NVIDIA's nccl.h: every struct
 * size and field offset, enum size and value an application compiled against nccl.h relies on.
 * X(name, expression): included after one of the two headers. */
#include <stddef.h>

#define LAYOUT_FIELDS(X)                                                                                     \
  X("sizeof(ncclUniqueId)", sizeof(ncclUniqueId)) X("NCCL_UNIQUE_ID_BYTES", NCCL_UNIQUE_ID_BYTES)           \
  X("sizeof(ncclConfig_t)", sizeof(ncclConfig_t)) X("offsetof size", offsetof(ncclConfig_t, size))          \
  X("offsetof magic", offsetof(ncclConfig_t, magic)) X("offsetof version", offsetof(ncclConfig_t, version)) \
  X("offsetof blocking", offsetof(ncclConfig_t, blocking))                                                  \
  X("offsetof cgaClusterSize", offsetof(ncclConfig_t, cgaClusterSize))                                      \
  X("offsetof minCTAs", offsetof(ncclConfig_t, minCTAs)) X("offsetof maxCTAs", offsetof(ncclConfig_t, maxCTAs)) \
  X("offsetof netName", offsetof(ncclConfig_t, netName))                                                    \
  X("offsetof splitShare", offsetof(ncclConfig_t, splitShare))                                              \
  X("offsetof trafficClass", offsetof(ncclConfig_t, trafficClass))                                          \
  X("offsetof commName", offsetof(ncclConfig_t, commName))                                                  \
  X("offsetof collnetEnable", offsetof(ncclConfig_t, collnetEnable))                                        \
  X("offsetof CTAPolicy", offsetof(ncclConfig_t, CTAPolicy))                                                \
  X("offsetof shrinkShare", offsetof(ncclConfig_t, shrinkShare))                                            \
  X("offsetof nvlsCTAs", offsetof(ncclConfig_t, nvlsCTAs))                                                  \
  X("offsetof nChannelsPerNetPeer", offsetof(ncclConfig_t, nChannelsPerNetPeer))                            \
  X("offsetof nvlinkCentricSched", offsetof(ncclConfig_t, nvlinkCentricSched))                              \
  X("sizeof(ncclSimInfo_t)", sizeof(ncclSimInfo_t)) X("offsetof estimatedTime", offsetof(ncclSimInfo_t, estimatedTime)) \
  X("sizeof(ncclResult_t)", sizeof(ncclResult_t)) X("sizeof(ncclDataType_t)", sizeof(ncclDataType_t))      \
  X("sizeof(ncclRedOp_t)", sizeof(ncclRedOp_t)) X("sizeof(ncclScalarResidence_t)", sizeof(ncclScalarResidence_t)) \
  X("ncclInProgress", ncclInProgress) X("ncclNumResults", ncclNumResults) X("ncclRemoteError", ncclRemoteError) \
  X("ncclInvalidUsage", ncclInvalidUsage) X("ncclUnhandledCudaError", ncclUnhandledCudaError)               \
  X("ncclBfloat16", ncclBfloat16) X("ncclFloat8e4m3", ncclFloat8e4m3) X("ncclFloat8e5m2", ncclFloat8e5m2)  \
  X("ncclNumTypes", ncclNumTypes) X("ncclFloat16", ncclFloat16) X("ncclUint64", ncclUint64)                 \
  X("ncclAvg", ncclAvg) X("ncclNumOps", ncclNumOps) X("ncclMaxRedOp", ncclMaxRedOp)                         \
  X("ncclScalarDevice", ncclScalarDevice) X("ncclScalarHostImmediate", ncclScalarHostImmediate)             \
  X("NCCL_SPLIT_NOCOLOR", NCCL_SPLIT_NOCOLOR) X("NCCL_CONFIG_UNDEF_INT", NCCL_CONFIG_UNDEF_INT)             \
  X("NCCL_VERSION_CODE", NCCL_VERSION_CODE) X("NCCL_VERSION(2,8,4)", NCCL_VERSION(2, 8, 4))                 \
  X("NCCL_WIN_COLL_SYMMETRIC", NCCL_WIN_COLL_SYMMETRIC) X("NCCL_SHRINK_ABORT", NCCL_SHRINK_ABORT)           \
  X("NCCL_CTA_POLICY_ZERO", NCCL_CTA_POLICY_ZERO)                                                           \
  X("initializer size", layoutInitializer().size) X("initializer magic", layoutInitializer().magic)         \
  X("initializer version", layoutInitializer().version) X("initializer blocking", layoutInitializer().blocking) \
  X("initializer nvlinkCentricSched", layoutInitializer().nvlinkCentricSched)                               \
  X("sim initializer magic", layoutSimInitializer().magic)

/* Defines `name`[] = every fact above as long long, and the count. */
#define LAYOUT_TABLE(name)                                                        \
  static ncclConfig_t layoutInitializer(void) {                                   \
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;                                     \
    return c;                                                                     \
  }                                                                               \
  static ncclSimInfo_t layoutSimInitializer(void) {                               \
    ncclSimInfo_t s = NCCL_SIM_INFO_INITIALIZER;                                  \
    return s;                                                                     \
  }                                                                               \
  extern const long long name[];                                                  \
  extern const int name##Count;                                                   \
  const long long name[] = {                                                      \
      LAYOUT_FIELDS(LAYOUT_VALUE)};                                               \
  const int name##Count = sizeof(name) / sizeof(name[0]);
#define LAYOUT_VALUE(label, expr) (long long)(expr),
