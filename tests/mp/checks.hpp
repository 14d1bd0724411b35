// The per-collective checks of coll_check, run on every rank with the same arguments.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "hetccl/hetccl.h"
#include "values.hpp"

/// Throws std::runtime_error with the call, the code and hetcclGetLastError's message.
#define HETCCL_CHECK(call, comm)                                                                     \
  do {                                                                                               \
    hetcclResult_t r_ = (call);                                                                      \
    if (r_ != hetcclSuccess)                                                                         \
      throw std::runtime_error(std::string(#call) + " failed: " + hetcclGetErrorString(r_) + ": " +  \
                               hetcclGetLastError(comm));                                            \
  } while (0)

namespace hetccl::test {

hetcclDataType_t parseType(const std::string& name);
/// "sum", "prod", "max", "min", "avg", "premulsum" (returned as hetcclNumOps).
hetcclRedOp_t parseOp(const std::string& name);

/// Where the library sees the test's buffers: host memory itself, or device copies (tests/gpu).
class BufferSpace {
 public:
  using Bytes = std::vector<unsigned char>;
  virtual ~BufferSpace() = default;
  /// The pointer to pass for `b` (device spaces copy its current contents in now).
  virtual void* place(Bytes& b) = 0;
  /// Stream to pass to the library (nullptr for host memory).
  virtual void* stream() = 0;
  /// Waits for the stream, copies every placed buffer back into its vector and forgets them.
  virtual void finish() = 0;
};

/// Host memory: the vectors themselves, nothing to copy.
class HostSpace final : public BufferSpace {
 public:
  void* place(Bytes& b) override { return b.data(); }
  void* stream() override { return nullptr; }
  void finish() override {}
};

class Checker {
 public:
  Checker(hetcclComm_t comm, int rank, int nranks, BufferSpace& space)
      : comm_(comm), rank_(rank), n_(nranks), space_(space) {}

  void allReduce(hetcclDataType_t t, hetcclRedOp_t op, size_t count, bool inPlace);
  void reduce(hetcclDataType_t t, hetcclRedOp_t op, size_t count, int root, bool inPlace);
  void reduceScatter(hetcclDataType_t t, hetcclRedOp_t op, size_t count, bool inPlace);
  void allGather(hetcclDataType_t t, size_t count, bool inPlace);
  void broadcast(hetcclDataType_t t, size_t count, int root, bool inPlace);
  void allToAll(hetcclDataType_t t, size_t count);
  void allToAllv(hetcclDataType_t t, size_t count);
  /// Every rank sends to rank+1 and receives from rank-1 in one group.
  void sendRecvRing(hetcclDataType_t t, size_t count);
  /// An all-reduce, an all-gather and a send/recv ring fused in one group.
  void fusedGroup(hetcclDataType_t t, size_t count);

  long long cases() const { return cases_; }
  /// Wrong elements this rank found in its own results: the verdict of this rank (its exit status),
  /// which never passes through the library under test.
  long long wrongHere() const { return wrong_; }
  /// Wrong elements summed over all ranks through a hetccl all-reduce (collective): for printed
  /// summaries only, never the verdict.
  long long totalWrong();

 private:
  using Bytes = std::vector<unsigned char>;
  /// Element i of rank r's input for `op` (PreMulSum uses Sum's inputs).
  void fillInput(Bytes& buf, hetcclDataType_t t, hetcclRedOp_t op, int r, size_t offset, size_t count) const;
  /// Compares element-wise; counts and reports (first few) mismatches.
  void compare(const char* what, hetcclDataType_t t, const Bytes& got, const Bytes& want, size_t gotOffset = 0);
  /// The operator handle to pass (creates this rank's PreMulSum op when op == hetcclNumOps).
  hetcclRedOp_t opHandle(hetcclDataType_t t, hetcclRedOp_t op);
  void releaseOp(hetcclRedOp_t handle, hetcclRedOp_t op);

  hetcclComm_t comm_;
  int rank_, n_;
  BufferSpace& space_;
  long long cases_ = 0, wrong_ = 0;
  int reported_ = 0;
};

/// Test-only fault injection (tests/mp/verdict): with HETCCL_TEST_WRONG_RANK=R, the process whose
/// HETCCL_RANK (hetccl-run's world rank) is R corrupts one element of the first non-empty result it
/// checks and contributes 0 to every totalWrong() all-reduce: a rank with wrong data whose summary says
/// that all is well. Its verdict must still fail.
bool wrongRankInjectedHere();

/// The whole coll_check run on this rank (arguments as coll_check's); returns the process exit code.
int runCollCheck(int argc, char** argv, BufferSpace& space);

}  // namespace hetccl::test
