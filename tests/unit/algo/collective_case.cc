#include "unit/algo/collective_case.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/error.hpp"
#include "exec/host/run_group.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {
namespace {

using algo::CollKind;
using algo::CollOp;

constexpr size_t kGuardBytes = 64;
constexpr unsigned char kGuard = 0xCD, kGarbage = 0xAB;

int64_t inputValue(const CollCase& c, int rank, size_t i) {
  const auto shift = static_cast<size_t>(c.round) * 11;  // 0 in round 0
  if (c.op == RedOpKind::Prod) {
    if ((rank + i + shift) % 3 == 0) return 2;
    return (!isUnsigned(c.type) && (rank * 5 + i + shift) % 7 == 0) ? -1 : 1;
  }
  if (isUnsigned(c.type)) return static_cast<int64_t>((rank * 7 + i * 3 + shift) % 4);
  return static_cast<int64_t>((rank * 7 + i * 3 + shift) % 5) - 1;
}

int64_t scalarOf(const CollCase& c, int rank) {
  if (isUnsigned(c.type)) return rank % 2 ? 3 : 2;
  return rank % 2 ? -1 : 2;
}

/// This rank's contribution to a reduction (PreMulSum scaled).
int64_t contribution(const CollCase& c, int rank, size_t i) {
  const int64_t v = inputValue(c, rank, i);
  return c.op == RedOpKind::PreMulSum ? v * scalarOf(c, rank) : v;
}

/// The reduction over ranks of element i of each rank's input, stored as one element at dst.
void storeReduced(const CollCase& c, size_t i, void* dst) {
  const int n = static_cast<int>(c.layout.domainOf.size());
  int64_t acc = contribution(c, 0, i);
  for (int r = 1; r < n; ++r) {
    const int64_t v = contribution(c, r, i);
    switch (c.op) {
      case RedOpKind::Prod: acc *= v; break;
      case RedOpKind::Max: acc = std::max(acc, v); break;
      case RedOpKind::Min: acc = std::min(acc, v); break;
      default: acc += v; break;
    }
  }
  if (c.op == RedOpKind::Avg) {
    storeQuotient(c.type, acc, static_cast<uint64_t>(n), dst);
  } else {
    storeElement(c.type, acc, dst);
  }
}

/// AllToAllv: elements rank `from` sends to rank `to`.
size_t vCount(const CollCase& c, int from, int to) { return c.count * static_cast<size_t>((from + 2 * to) % 3) / 2; }

}  // namespace

struct RankBuffers {
  std::vector<uint64_t> send, recv;  // uint64_t for alignment
  size_t sendAlloc = 0, recvAlloc = 0;  ///< bytes before the guard of each (0: unused)
  size_t sendElems = 0;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t recvBytes = 0;  ///< bytes of output checked (from recvbuff)
  size_t guardAt = 0;    ///< offset of the guard bytes in `recv`
  CollOp op;
  std::vector<CollOp> group;
};

namespace {

unsigned char* bytesOf(std::vector<uint64_t>& v) { return reinterpret_cast<unsigned char*>(v.data()); }

/// `bytes` of `fill` followed by kGuardBytes of kGuard.
size_t allocate(std::vector<uint64_t>& v, size_t bytes, unsigned char fill) {
  v.assign((bytes + kGuardBytes + 7) / 8, 0);
  std::memset(v.data(), kGuard, v.size() * 8);
  std::memset(v.data(), fill, bytes);
  return bytes;
}

void writeInputs(const CollCase& c, int r, RankBuffers& b) {
  const size_t es = dataTypeSize(c.type);
  auto* in = static_cast<unsigned char*>(const_cast<void*>(b.sendbuff));
  for (size_t i = 0; i < b.sendElems; ++i) storeElement(c.type, inputValue(c, r, i), in + i * es);
}

/// Builds rank r's buffers and operation(s).
RankBuffers prepare(const CollCase& c, int r) {
  const int n = static_cast<int>(c.layout.domainOf.size());
  const size_t es = dataTypeSize(c.type), cnt = c.count;
  RankBuffers b;
  CollOp& op = b.op;
  op.kind = c.kind == kSendRecvRing ? CollKind::Send : c.kind;
  op.count = cnt;
  op.type = c.type;
  op.op.kind = c.op;
  op.root = c.root;
  if (c.op == RedOpKind::PreMulSum) storeElement(c.type, scalarOf(c, r), op.op.scalar);
  size_t sendElems = cnt, recvElems = cnt;
  // Where input element i lives relative to the send buffer (AllToAllv leaves a gap after each block).
  std::vector<size_t> inputIndex;
  switch (c.kind) {
    case CollKind::AllGather: recvElems = n * cnt; break;
    case CollKind::ReduceScatter: sendElems = n * cnt; break;
    case CollKind::AllToAll: sendElems = recvElems = n * cnt; break;
    case CollKind::AllToAllv: {
      size_t s = 0, q = 0;
      for (int p = 0; p < n; ++p) {
        op.sendcounts.push_back(vCount(c, r, p));
        op.sdispls.push_back(s);
        s += op.sendcounts.back() + 1;
        op.recvcounts.push_back(vCount(c, p, r));
        op.rdispls.push_back(q);
        q += op.recvcounts.back() + 1;
      }
      sendElems = s;
      recvElems = q;
      break;
    }
    default: break;
  }
  const bool inPlace = c.inPlace && c.kind != kSendRecvRing;
  if (!inPlace) {
    b.sendAlloc = allocate(b.send, sendElems * es, kGarbage);
    b.guardAt = allocate(b.recv, recvElems * es, kGarbage);
    b.sendbuff = b.send.data();
    b.recvbuff = b.recv.data();
  } else if (c.kind == CollKind::AllGather) {
    b.guardAt = allocate(b.recv, recvElems * es, kGarbage);
    b.recvbuff = b.recv.data();
    b.sendbuff = bytesOf(b.recv) + r * cnt * es;
  } else if (c.kind == CollKind::ReduceScatter) {
    b.guardAt = allocate(b.recv, sendElems * es, kGarbage);
    b.sendbuff = b.recv.data();
    b.recvbuff = bytesOf(b.recv) + r * cnt * es;
  } else {
    b.guardAt = allocate(b.recv, std::max(sendElems, recvElems) * es, kGarbage);
    b.sendbuff = b.recvbuff = b.recv.data();
  }
  b.recvAlloc = b.guardAt;
  b.recvBytes = recvElems * es;
  b.sendElems = sendElems;
  writeInputs(c, r, b);
  op.sendbuff = b.sendbuff;
  op.recvbuff = b.recvbuff;
  if (c.kind == kSendRecvRing) {
    op.peer = (r + 1) % n;
    CollOp recv = op;
    recv.kind = CollKind::Recv;
    recv.peer = (r + n - 1) % n;
    b.group = {recv, op};  // receive listed first on purpose: group order must not matter
  } else {
    b.group = {op};
  }
  return b;
}

/// Expected output bytes of rank r (empty: output not significant, must be left untouched).
std::vector<unsigned char> expected(const CollCase& c, int r, const RankBuffers& b) {
  const int n = static_cast<int>(c.layout.domainOf.size());
  const size_t es = dataTypeSize(c.type), cnt = c.count;
  std::vector<unsigned char> out(b.recvBytes, kGarbage);
  auto at = [&](size_t i) { return out.data() + i * es; };
  switch (c.kind) {
    case CollKind::AllReduce:
      for (size_t i = 0; i < cnt; ++i) storeReduced(c, i, at(i));
      break;
    case CollKind::Reduce:
      if (r != c.root) {
        if (c.inPlace) for (size_t i = 0; i < cnt; ++i) storeElement(c.type, inputValue(c, r, i), at(i));
        break;
      }
      for (size_t i = 0; i < cnt; ++i) storeReduced(c, i, at(i));
      break;
    case CollKind::Broadcast:
      for (size_t i = 0; i < cnt; ++i) storeElement(c.type, inputValue(c, c.root, i), at(i));
      break;
    case CollKind::AllGather:
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < cnt; ++i) storeElement(c.type, inputValue(c, q, i), at(q * cnt + i));
      break;
    case CollKind::ReduceScatter:
      for (size_t i = 0; i < cnt; ++i) storeReduced(c, r * cnt + i, at(i));
      break;
    case CollKind::AllToAll:
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < cnt; ++i) storeElement(c.type, inputValue(c, q, r * cnt + i), at(q * cnt + i));
      break;
    case CollKind::AllToAllv:
      for (int q = 0; q < n; ++q) {
        size_t qDispl = 0;  // where q's block for r starts in q's send buffer
        for (int p = 0; p < r; ++p) qDispl += vCount(c, q, p) + 1;
        for (size_t i = 0; i < b.op.recvcounts[q]; ++i)
          storeElement(c.type, inputValue(c, q, qDispl + i), at(b.op.rdispls[q] + i));
      }
      break;
    default:  // send/recv ring
      for (size_t i = 0; i < cnt; ++i) storeElement(c.type, inputValue(c, (r + n - 1) % n, i), at(i));
      break;
  }
  return out;
}

std::string compare(const CollCase& c, int r, const RankBuffers& b) {
  const size_t es = dataTypeSize(c.type);
  const auto* got = static_cast<const unsigned char*>(b.recvbuff);
  std::vector<unsigned char> want = expected(c, r, b);
  if (c.kind == CollKind::AllToAllv && c.inPlace) {  // the gaps hold leftover input: check the blocks
    for (int q = 0; q < static_cast<int>(b.op.recvcounts.size()); ++q)
      for (size_t i = b.op.rdispls[q] * es; i < (b.op.rdispls[q] + b.op.recvcounts[q]) * es; ++i)
        if (got[i] != want[i]) return concat("rank ", r, ": byte ", i, " (element ", i / es, ") differs");
    return "";
  }
  const bool untouched = c.kind == CollKind::Reduce && r != c.root && !c.inPlace;
  for (size_t i = 0; i < b.recvBytes; ++i) {
    if (untouched ? got[i] != kGarbage : got[i] != want[i]) {
      std::ostringstream os;
      os << "rank " << r << ": element " << i / es << " byte " << i % es << " is 0x" << std::hex << int(got[i])
         << ", expected 0x" << int(untouched ? kGarbage : want[i]);
      return os.str();
    }
  }
  const auto* guard = reinterpret_cast<const unsigned char*>(b.recv.data()) + b.guardAt;
  for (size_t i = 0; i < kGuardBytes; ++i)
    if (guard[i] != kGuard)
      return concat("rank ", r, ": wrote past the end of the output (guard byte ", i, ")");
  return "";
}

}  // namespace

CollCaseRounds::CollCaseRounds(const CollCase& c) : c_(c) {
  const int n = static_cast<int>(c.layout.domainOf.size());
  for (int r = 0; r < n; ++r) bufs_.push_back(std::make_unique<RankBuffers>(prepare(c_, r)));
}

CollCaseRounds::~CollCaseRounds() = default;

std::span<const CollOp> CollCaseRounds::group(int rank) const { return bufs_.at(rank)->group; }

void CollCaseRounds::refill(int round) {
  c_.round = round;
  for (size_t r = 0; r < bufs_.size(); ++r) {
    RankBuffers& b = *bufs_[r];
    const uint64_t *send = b.send.data(), *recv = b.recv.data();
    if (b.sendAlloc) allocate(b.send, b.sendAlloc, kGarbage);  // same size: the vector keeps its storage
    allocate(b.recv, b.recvAlloc, kGarbage);
    if (b.send.data() != send || b.recv.data() != recv) throw std::logic_error("CollCaseRounds: a buffer moved");
    writeInputs(c_, static_cast<int>(r), b);
  }
}

std::string CollCaseRounds::check() const {
  for (size_t r = 0; r < bufs_.size(); ++r) {
    std::string diff = compare(c_, static_cast<int>(r), *bufs_[r]);
    if (!diff.empty()) return concat("round ", c_.round, ": ", diff);
  }
  return "";
}

std::string CollCase::describe() const {
  return concat(kind == kSendRecvRing ? "sendrecv-ring" : algo::collKindName(kind), " layout=", layout.name,
                " count=", count, " type=", dataTypeName(type), " op=", redOpName(op), inPlace ? " in-place" : "",
                " algo=", algo::algoChoiceName(algo), " chunk=", chunkBytes, " root=", root);
}

std::string runCollCase(const CollCase& c) {
  const int n = static_cast<int>(c.layout.domainOf.size());
  MemWorld world(n, c.eagerBytes);
  algo::Tuning tuning;
  tuning.algo = c.algo;
  tuning.chunkBytes = c.chunkBytes;
  tuning.smallBytes = 1024;
  return runCollCaseWith(c, [&](int r, std::span<const CollOp> group) {
    auto links = world.linksFor(r);
    engine::ExecContext ctx;
    ctx.timeoutMs = 10'000;
    algo::Topology topo{r, n, c.layout.domainOf};
    engine::runGroup(topo, group, *links, ctx, tuning);
  });
}

std::string runCollCaseWith(const CollCase& c, const GroupRunner& runGroup) {
  const int n = static_cast<int>(c.layout.domainOf.size());
  std::vector<RankBuffers> bufs(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) bufs[r] = prepare(c, r);
  auto errors = runRanks(n, [&](int r) { runGroup(r, bufs[r].group); });
  for (int r = 0; r < n; ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const std::exception& e) {
      return concat("rank ", r, " threw: ", e.what());
    }
  }
  for (int r = 0; r < n; ++r) {
    std::string diff = compare(c, r, bufs[r]);
    if (!diff.empty()) return diff;
  }
  return "";
}

}  // namespace hetccl::test
