#include "checks.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hetccl::test {
namespace {

const char* kTypeNames[] = {"int8",    "uint8",   "int32",    "uint32", "int64",  "uint64",
                            "float16", "float32", "float64", "bfloat16", "f8e4m3", "f8e5m2"};
static_assert(sizeof(kTypeNames) / sizeof(kTypeNames[0]) == hetcclNumTypes);
const char* kOpNames[] = {"sum", "prod", "max", "min", "avg", "premulsum"};

// memcpy that accepts empty (null) buffers.
void copyBytes(void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

bool gInjected = false;  // the one wrong element of HETCCL_TEST_WRONG_RANK is in

}  // namespace

bool wrongRankInjectedHere() {
  static const bool here = [] {
    const char* wrongRank = std::getenv("HETCCL_TEST_WRONG_RANK");
    const char* rank = std::getenv("HETCCL_RANK");
    return wrongRank && rank && *wrongRank && std::strcmp(wrongRank, rank) == 0;
  }();
  return here;
}

hetcclDataType_t parseType(const std::string& name) {
  for (int t = 0; t < hetcclNumTypes; ++t)
    if (name == kTypeNames[t]) return static_cast<hetcclDataType_t>(t);
  throw std::runtime_error("unknown type " + name);
}

hetcclRedOp_t parseOp(const std::string& name) {
  for (int op = 0; op <= hetcclNumOps; ++op)
    if (name == kOpNames[op]) return static_cast<hetcclRedOp_t>(op);
  throw std::runtime_error("unknown op " + name);
}

void Checker::fillInput(Bytes& buf, hetcclDataType_t t, hetcclRedOp_t op, int r, size_t offset, size_t count) const {
  const size_t es = typeSize(t);
  hetcclRedOp_t base = op == hetcclNumOps ? hetcclSum : op;
  for (size_t i = 0; i < count; ++i)
    storeInt(t, elementInput(t, r, offset + i, base), buf.data() + i * es);
}

void Checker::compare(const char* what, hetcclDataType_t t, const Bytes& got, const Bytes& want, size_t gotOffset) {
  ++cases_;
  const size_t es = typeSize(t);
  const Bytes* result = &got;
  Bytes corrupted;
  if (wrongRankInjectedHere() && !gInjected && want.size() >= es) {
    gInjected = true;
    corrupted = got;
    corrupted[gotOffset] = static_cast<unsigned char>(want[0] ^ 0x5A);
    result = &corrupted;
    std::fprintf(stderr, "coll_check: rank %d: HETCCL_TEST_WRONG_RANK: one element of %s made wrong\n", rank_, what);
  }
  for (size_t i = 0; i < want.size() / es; ++i) {
    if (std::memcmp(result->data() + gotOffset + i * es, want.data() + i * es, es) == 0) continue;
    ++wrong_;
    if (reported_++ < 10)
      std::fprintf(stderr, "coll_check: rank %d: %s %s: element %zu differs\n", rank_, what, kTypeNames[t], i);
  }
}

hetcclRedOp_t Checker::opHandle(hetcclDataType_t t, hetcclRedOp_t op) {
  if (op != hetcclNumOps) return op;
  unsigned char scalar[8];
  storeInt(t, premulScalar(rank_), scalar);
  hetcclRedOp_t h;
  HETCCL_CHECK(hetcclRedOpCreatePreMulSum(&h, scalar, t, hetcclScalarHostImmediate, comm_), comm_);
  return h;
}

void Checker::releaseOp(hetcclRedOp_t handle, hetcclRedOp_t op) {
  if (op == hetcclNumOps) HETCCL_CHECK(hetcclRedOpDestroy(handle, comm_), comm_);
}

void Checker::allReduce(hetcclDataType_t t, hetcclRedOp_t op, size_t count, bool inPlace) {
  const size_t es = typeSize(t);
  Bytes in(count * es), out(count * es, 0xAB), want(count * es);
  fillInput(in, t, op, rank_, 0, count);
  for (size_t i = 0; i < count; ++i) referenceReduce(t, op, n_, i, want.data() + i * es);
  hetcclRedOp_t h = opHandle(t, op);
  Bytes& dst = inPlace ? in : out;
  HETCCL_CHECK(hetcclAllReduce(space_.place(in), space_.place(dst), count, t, h, comm_, space_.stream()), comm_);
  releaseOp(h, op);
  space_.finish();
  compare(inPlace ? "all_reduce(in-place)" : "all_reduce", t, dst, want);
}

void Checker::reduce(hetcclDataType_t t, hetcclRedOp_t op, size_t count, int root, bool inPlace) {
  const size_t es = typeSize(t);
  Bytes in(count * es), out(count * es, 0xAB), want(count * es);
  fillInput(in, t, op, rank_, 0, count);
  for (size_t i = 0; i < count; ++i) referenceReduce(t, op, n_, i, want.data() + i * es);
  hetcclRedOp_t h = opHandle(t, op);
  Bytes& dst = inPlace ? in : out;
  HETCCL_CHECK(hetcclReduce(space_.place(in), space_.place(dst), count, t, h, root, comm_, space_.stream()), comm_);
  releaseOp(h, op);
  space_.finish();
  if (rank_ == root) compare("reduce", t, dst, want);
}

void Checker::reduceScatter(hetcclDataType_t t, hetcclRedOp_t op, size_t count, bool inPlace) {
  const size_t es = typeSize(t);
  Bytes in(count * n_ * es), out(count * es, 0xAB), want(count * es);
  fillInput(in, t, op, rank_, 0, count * n_);
  for (size_t i = 0; i < count; ++i) referenceReduce(t, op, n_, rank_ * count + i, want.data() + i * es);
  hetcclRedOp_t h = opHandle(t, op);
  void* dst = inPlace ? static_cast<char*>(space_.place(in)) + rank_ * count * es : space_.place(out);
  HETCCL_CHECK(hetcclReduceScatter(space_.place(in), dst, count, t, h, comm_, space_.stream()), comm_);
  releaseOp(h, op);
  space_.finish();
  if (inPlace) compare("reduce_scatter(in-place)", t, in, want, rank_ * count * es);
  else compare("reduce_scatter", t, out, want);
}

void Checker::allGather(hetcclDataType_t t, size_t count, bool inPlace) {
  const size_t es = typeSize(t);
  Bytes in(count * es), out(count * n_ * es, 0xAB), want(count * n_ * es);
  fillInput(in, t, hetcclSum, rank_, 0, count);
  for (int r = 0; r < n_; ++r) {
    Bytes block(count * es);
    fillInput(block, t, hetcclSum, r, 0, count);
    copyBytes(want.data() + r * count * es, block.data(), block.size());
  }
  if (inPlace) copyBytes(out.data() + rank_ * count * es, in.data(), in.size());
  const void* src = inPlace ? static_cast<char*>(space_.place(out)) + rank_ * count * es : space_.place(in);
  HETCCL_CHECK(hetcclAllGather(src, space_.place(out), count, t, comm_, space_.stream()), comm_);
  space_.finish();
  compare(inPlace ? "all_gather(in-place)" : "all_gather", t, out, want);
}

void Checker::broadcast(hetcclDataType_t t, size_t count, int root, bool inPlace) {
  const size_t es = typeSize(t);
  Bytes in(count * es), out(count * es, 0xAB), want(count * es);
  fillInput(in, t, hetcclSum, rank_, 0, count);
  fillInput(want, t, hetcclSum, root, 0, count);
  Bytes& dst = inPlace ? in : out;
  HETCCL_CHECK(hetcclBroadcast(space_.place(in), space_.place(dst), count, t, root, comm_, space_.stream()), comm_);
  space_.finish();
  compare(inPlace ? "broadcast(in-place)" : "broadcast", t, dst, want);
}

void Checker::allToAll(hetcclDataType_t t, size_t count) {
  const size_t es = typeSize(t);
  Bytes in(count * n_ * es), out(count * n_ * es, 0xAB), want(count * n_ * es);
  fillInput(in, t, hetcclSum, rank_, 0, count * n_);
  for (int p = 0; p < n_; ++p) {
    Bytes block(count * es);
    fillInput(block, t, hetcclSum, p, rank_ * count, count);
    copyBytes(want.data() + p * count * es, block.data(), block.size());
  }
  HETCCL_CHECK(hetcclAlltoAll(space_.place(in), space_.place(out), count, t, comm_, space_.stream()), comm_);
  space_.finish();
  compare("alltoall", t, out, want);
}

void Checker::allToAllv(hetcclDataType_t t, size_t count) {
  const size_t es = typeSize(t);
  auto cnt = [&](int from, int to) { return count * static_cast<size_t>((from + 2 * to) % 3) / 2; };
  std::vector<size_t> sc(n_), sd(n_), rc(n_), rd(n_);
  size_t sTotal = 0, rTotal = 0;
  for (int p = 0; p < n_; ++p) {
    sc[p] = cnt(rank_, p), sd[p] = sTotal, sTotal += sc[p];
    rc[p] = cnt(p, rank_), rd[p] = rTotal, rTotal += rc[p];
  }
  Bytes in(sTotal * es), out(rTotal * es, 0xAB), want(rTotal * es);
  fillInput(in, t, hetcclSum, rank_, 0, sTotal);
  for (int p = 0; p < n_; ++p) {
    size_t theirDispl = 0;  // where rank p's block for me starts in p's send buffer
    for (int q = 0; q < rank_; ++q) theirDispl += cnt(p, q);
    Bytes block(rc[p] * es);
    fillInput(block, t, hetcclSum, p, theirDispl, rc[p]);
    copyBytes(want.data() + rd[p] * es, block.data(), block.size());
  }
  HETCCL_CHECK(hetcclAlltoAllv(space_.place(in), sc.data(), sd.data(), space_.place(out), rc.data(), rd.data(), t, comm_, space_.stream()),
               comm_);
  space_.finish();
  compare("alltoallv", t, out, want);
}

void Checker::sendRecvRing(hetcclDataType_t t, size_t count) {
  const size_t es = typeSize(t);
  const int right = (rank_ + 1) % n_, left = (rank_ + n_ - 1) % n_;
  Bytes in(count * es), out(count * es, 0xAB), want(count * es);
  fillInput(in, t, hetcclSum, rank_, 0, count);
  fillInput(want, t, hetcclSum, left, 0, count);
  HETCCL_CHECK(hetcclGroupStart(), comm_);
  HETCCL_CHECK(hetcclSend(space_.place(in), count, t, right, comm_, space_.stream()), comm_);
  HETCCL_CHECK(hetcclRecv(space_.place(out), count, t, left, comm_, space_.stream()), comm_);
  HETCCL_CHECK(hetcclGroupEnd(), comm_);
  space_.finish();
  compare("sendrecv", t, out, want);
}

void Checker::fusedGroup(hetcclDataType_t t, size_t count) {
  const size_t es = typeSize(t);
  const int right = (rank_ + 1) % n_, left = (rank_ + n_ - 1) % n_;
  Bytes arIn(count * es), arOut(count * es), arWant(count * es);
  Bytes agIn(count * es), agOut(count * n_ * es), agWant(count * n_ * es);
  Bytes p2pOut(count * es), p2pWant(count * es);
  fillInput(arIn, t, hetcclMax, rank_, 0, count);
  for (size_t i = 0; i < count; ++i) referenceReduce(t, hetcclMax, n_, i, arWant.data() + i * es);
  fillInput(agIn, t, hetcclSum, rank_, 0, count);
  for (int r = 0; r < n_; ++r) {
    Bytes block(count * es);
    fillInput(block, t, hetcclSum, r, 0, count);
    copyBytes(agWant.data() + r * count * es, block.data(), block.size());
  }
  fillInput(p2pWant, t, hetcclSum, left, 0, count);
  HETCCL_CHECK(hetcclGroupStart(), comm_);
  HETCCL_CHECK(hetcclRecv(space_.place(p2pOut), count, t, left, comm_, space_.stream()), comm_);  // p2p first on purpose
  HETCCL_CHECK(hetcclAllReduce(space_.place(arIn), space_.place(arOut), count, t, hetcclMax, comm_, space_.stream()), comm_);
  HETCCL_CHECK(hetcclSend(space_.place(agIn), count, t, right, comm_, space_.stream()), comm_);
  HETCCL_CHECK(hetcclAllGather(space_.place(agIn), space_.place(agOut), count, t, comm_, space_.stream()), comm_);
  HETCCL_CHECK(hetcclGroupEnd(), comm_);
  space_.finish();
  compare("group:all_reduce", t, arOut, arWant);
  compare("group:all_gather", t, agOut, agWant);
  compare("group:sendrecv", t, p2pOut, p2pWant);
}

long long Checker::totalWrong() {
  long long w = wrongRankInjectedHere() ? 0 : wrong_;  // the injected fault: a summary that says all is well
  HETCCL_CHECK(hetcclAllReduce(&w, &w, 1, hetcclInt64, hetcclSum, comm_, nullptr), comm_);
  return w;
}

}  // namespace hetccl::test
