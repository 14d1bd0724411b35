// The simulated vendor library (sim_vendor.hpp) alone, threads as ranks on the simulated GPU: every call
// kind in and out of place on domains of 1, 2, 3 and 4 members running at the same time, compared with an
// exact reference computed here (small integers; Avg by NCCL's rule); calls take effect on the device, in
// stream order, once every member arrived; send / recv and groups; mismatched calls fail naming both;
// abort, destroy, counters, bad arguments, distinct communicators on the same members.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap_harness.hpp"
#include "core/error.hpp"
#include "sim_gpu.hpp"
#include "sim_vendor.hpp"
#include "unit/engine/harness.hpp"
#include "stream_test_support.hpp"

namespace hetccl::test::sim {
namespace {

using bootstrap::testing::ScopedEnv;

constexpr size_t kGuardBytes = 64;
constexpr unsigned char kGuard = 0xCD, kGarbage = 0xAB;

class SimVendorTest : public ::testing::Test {
 protected:
  ScopedEnv timeout_{"HETCCL_TIMEOUT", test::stallSeconds()};  // a stall fails the test instead of hanging it
};

/// Threads as ranks over a real bootstrap, each with a communicator over its domain and a stream.
class VendorWorld {
 public:
  explicit VendorWorld(std::vector<int> domainOf) : domainOf_(std::move(domainOf)) {
    const int n = size();
    ranks_ = bootstrap::testing::joinAll(bootstrap::createUniqueId(), n);
    for (int r = 0; r < n; ++r)
      if (!ranks_[r].bootstrap) throw std::runtime_error(concat("rank ", r, " did not join: ", ranks_[r].error));
    streams_.resize(n);
    for (void*& s : streams_) plugin().streamCreate(&s);
    comms_ = createComms();
  }
  ~VendorWorld() {
    comms_.clear();
    for (void* s : streams_) plugin().streamDestroy(s);
  }

  int size() const { return static_cast<int>(domainOf_.size()); }
  SimDomainComm& comm(int r) { return *comms_[r]; }
  void* stream(int r) { return streams_[r]; }

  /// One more communicator per domain (createComm on every rank at once), rank r's at index r.
  std::vector<std::unique_ptr<SimDomainComm>> createComms() {
    std::vector<std::unique_ptr<SimDomainComm>> out(size());
    bootstrap::testing::onEveryRank(ranks_, [&](int r, bootstrap::Bootstrap& boot) {
      std::vector<int> members;
      for (int p = 0; p < size(); ++p)
        if (domainOf_[p] == domainOf_[r]) members.push_back(p);
      out[r].reset(static_cast<SimDomainComm*>(vendor_.createComm(boot, members).release()));
    });
    return out;
  }
  SimVendorCcl& vendor() { return vendor_; }

 private:
  std::vector<int> domainOf_;
  std::vector<bootstrap::testing::JoinResult> ranks_;
  SimVendorCcl vendor_;
  std::vector<void*> streams_;
  std::vector<std::unique_ptr<SimDomainComm>> comms_;
};

/// Waits (10 s at most) until `stream` has nothing queued; false if it still has.
bool settles(void* stream) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (plugin().streamQuery(stream) != HETCCL_GPU_OK) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

/// A buffer of `bytes` of garbage followed by a guard.
struct Buffer {
  std::vector<uint64_t> words;
  size_t bytes = 0;
  explicit Buffer(size_t n) : words((n + kGuardBytes + 7) / 8 + 1), bytes(n) {
    std::memset(words.data(), kGuard, words.size() * 8);
    std::memset(words.data(), kGarbage, n);
  }
  unsigned char* data() { return reinterpret_cast<unsigned char*>(words.data()); }
  bool guardIntact() {
    for (size_t i = 0; i < kGuardBytes; ++i)
      if (data()[bytes + i] != kGuard) return false;
    return true;
  }
};

struct VendorCase {
  VendorCall kind = VendorCall::AllReduce;
  DataType type = DataType::Float32;
  RedOpKind op = RedOpKind::Sum;
  size_t count = 0;
  bool inPlace = false;
  int root = 0;

  std::string describe() const {
    return concat(vendorCallName(kind), " ", dataTypeName(type), " ", redOpName(op), " count ", count,
                  inPlace ? " in place" : " out of place", " root ", root);
  }
};

// --- the reference: inputs are small integers, exact in every type ---

/// Digit `m` of i in base `base`: over consecutive elements every combination of the members' values appears.
int64_t digit(size_t i, int m, int base) {
  for (int k = 0; k < m; ++k) i /= static_cast<size_t>(base);
  return static_cast<int64_t>((i + static_cast<size_t>(m) * 3) % static_cast<size_t>(base));
}
int64_t inputOf(const VendorCase& c, int member, size_t i) {
  if (c.op == RedOpKind::Prod) {
    const int64_t d = digit(i, member, 3);
    return d == 0 ? 2 : (d == 1 && !isUnsigned(c.type) ? -1 : 1);
  }
  return isUnsigned(c.type) ? digit(i, member, 4) : digit(i, member, 5) - 1;
}
int64_t scalarOf(const VendorCase& c, int member) {
  if (isUnsigned(c.type)) return member % 2 ? 3 : 2;
  return member % 2 ? -1 : 2;
}

/// NCCL's Avg of float32 (PreMulSum by float(1/n), members in order), each operation rounded to float once.
float ncclAvgFloat32(const VendorCase& c, int n, size_t i) {
  const float inverse = static_cast<float>(1.0 / n);
  float acc = 0;
  for (int m = 0; m < n; ++m) {
    const float product = static_cast<float>(static_cast<double>(inputOf(c, m, i)) * inverse);  // exact, rounded once
    acc = m == 0 ? product : static_cast<float>(static_cast<double>(acc) + product);
  }
  return acc;
}

/// The reduction over n members of element i, stored as one element of c.type at dst.
void storeReduced(const VendorCase& c, int n, size_t i, void* dst) {
  if (c.op == RedOpKind::Avg && c.type == DataType::Float32) {
    const float v = ncclAvgFloat32(c, n, i);
    std::memcpy(dst, &v, 4);
    return;
  }
  int64_t acc = 0;
  for (int m = 0; m < n; ++m) {
    const int64_t v = c.op == RedOpKind::PreMulSum ? inputOf(c, m, i) * scalarOf(c, m) : inputOf(c, m, i);
    if (m == 0) acc = v;
    else if (c.op == RedOpKind::Prod) acc *= v;
    else if (c.op == RedOpKind::Max) acc = std::max(acc, v);
    else if (c.op == RedOpKind::Min) acc = std::min(acc, v);
    else acc += v;
  }
  if (c.op == RedOpKind::Avg) storeQuotient(c.type, acc, static_cast<uint64_t>(n), dst);  // integers; 1/n exact floats
  else storeElement(c.type, acc, dst);
}

/// The bytes of one element, last byte first ("0x3f800000").
std::string hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = n; i-- > 0;) s += {digits[p[i] >> 4], digits[p[i] & 15]};
  return s;
}

/// Runs one case on one member and checks its buffers; "" when exact.
std::string runCase(SimDomainComm& comm, void* stream, const VendorCase& c) {
  const int n = comm.size(), me = comm.rank();
  const size_t es = dataTypeSize(c.type), cnt = c.count;
  size_t sendElems = cnt, recvElems = cnt;
  if (c.kind == VendorCall::ReduceScatter) sendElems = n * cnt;
  if (c.kind == VendorCall::AllGather) recvElems = n * cnt;
  // In place (NCCL's definitions): one buffer of the larger size, the smaller one at this rank's block.
  Buffer recvBuf(recvElems * es), sendBuf(c.inPlace ? 0 : sendElems * es), whole(c.inPlace ? std::max(sendElems, recvElems) * es : 0);
  unsigned char *send = sendBuf.data(), *recv = recvBuf.data();
  if (c.inPlace) {
    send = recv = whole.data();
    if (c.kind == VendorCall::ReduceScatter) recv = whole.data() + me * cnt * es;
    if (c.kind == VendorCall::AllGather) send = whole.data() + me * cnt * es;
  }
  for (size_t i = 0; i < sendElems; ++i) storeElement(c.type, inputOf(c, me, i), send + i * es);
  const std::vector<unsigned char> inputCopy(send, send + sendElems * es);
  ReduceOp op;
  op.kind = c.op;
  if (c.op == RedOpKind::PreMulSum) storeElement(c.type, scalarOf(c, me), op.scalar);

  switch (c.kind) {
    case VendorCall::AllReduce: comm.allReduce(send, recv, cnt, c.type, op, stream); break;
    case VendorCall::ReduceScatter: comm.reduceScatter(send, recv, cnt, c.type, op, stream); break;
    case VendorCall::AllGather: comm.allGather(send, recv, cnt, c.type, stream); break;
    case VendorCall::Broadcast: comm.broadcast(send, recv, cnt, c.type, c.root, stream); break;
    case VendorCall::Reduce: comm.reduce(send, recv, cnt, c.type, op, c.root, stream); break;
    default: return "not a collective";
  }
  if (!settles(stream)) return concat("domain rank ", me, ": the call never finished\n", dump());

  // Expected output bytes; none for a non-root of reduce (its recv keeps what it held).
  std::vector<unsigned char> expected(recvElems * es);
  const bool writes = c.kind != VendorCall::Reduce || me == c.root;
  for (size_t i = 0; i < recvElems; ++i) {
    unsigned char* at = expected.data() + i * es;
    switch (c.kind) {
      case VendorCall::AllReduce:
      case VendorCall::Reduce: storeReduced(c, n, i, at); break;
      case VendorCall::ReduceScatter: storeReduced(c, n, me * cnt + i, at); break;
      case VendorCall::AllGather: storeElement(c.type, inputOf(c, static_cast<int>(i / cnt), i % cnt), at); break;
      case VendorCall::Broadcast: storeElement(c.type, inputOf(c, c.root, i), at); break;
      default: break;
    }
  }
  if (!writes) {
    if (c.inPlace) std::memcpy(expected.data(), inputCopy.data(), expected.size());
    else std::memset(expected.data(), kGarbage, expected.size());
  }
  for (size_t i = 0; i < recvElems; ++i)
    if (std::memcmp(recv + i * es, expected.data() + i * es, es) != 0)
      return concat("domain rank ", me, " of ", n, ": element ", i, " differs (got ", hex(recv + i * es, es),
                    ", expected ", hex(expected.data() + i * es, es), ")");
  if (!c.inPlace && std::memcmp(send, inputCopy.data(), inputCopy.size()) != 0)
    return concat("domain rank ", me, ": the send buffer changed");
  if (!recvBuf.guardIntact() || !sendBuf.guardIntact() || !whole.guardIntact())
    return concat("domain rank ", me, ": written past a buffer");
  return "";
}

TEST_F(SimVendorTest, EveryCallInAndOutOfPlaceIsExactOnDomainsOf1To4MembersAtOnce) {
  // Domain 0 has 1 member, 1 has 2, 2 has 3, 3 has 4, interleaved; every domain runs at the same time.
  VendorWorld world({3, 1, 2, 3, 0, 2, 1, 3, 2, 3});
  struct TypeOp {
    DataType type;
    RedOpKind op;
  };
  const TypeOp typeOps[] = {{DataType::Float32, RedOpKind::Sum},     {DataType::Int32, RedOpKind::Prod},
                            {DataType::Int8, RedOpKind::Max},        {DataType::Uint8, RedOpKind::Min},
                            {DataType::Float64, RedOpKind::PreMulSum}, {DataType::Int32, RedOpKind::Avg},
                            {DataType::Float32, RedOpKind::Avg},     {DataType::Float16, RedOpKind::Avg},
                            {DataType::Bfloat16, RedOpKind::Max},    {DataType::Float8e4m3, RedOpKind::Sum},
                            {DataType::Uint64, RedOpKind::PreMulSum}};
  std::vector<std::string> failures(world.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < world.size(); ++r)
    threads.emplace_back([&, r] {
      SimDomainComm& comm = world.comm(r);
      int index = 0;
      for (VendorCall kind : {VendorCall::AllReduce, VendorCall::ReduceScatter, VendorCall::AllGather,
                              VendorCall::Broadcast, VendorCall::Reduce})
        for (const TypeOp& to : typeOps)
          for (size_t count : {size_t{1}, size_t{7}, size_t{250}})
            for (bool inPlace : {false, true}) {
              // float16 Avg by 1/3 rounds differently from the exact quotient: powers of two only.
              if (to.type == DataType::Float16 && to.op == RedOpKind::Avg && comm.size() == 3) continue;
              VendorCase c{kind, to.type, to.op, count, inPlace, index++ % comm.size()};
              const std::string got = runCase(comm, world.stream(r), c);
              if (!got.empty() && failures[r].empty()) failures[r] = concat(c.describe(), ": ", got);
            }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
}

TEST_F(SimVendorTest, Float32AvgIsNcclsPreMulSumNotTheQuotient) {
  // With 3 members NCCL scales each input by float(1/3) before summing; on some of these elements that
  // rounds differently from sum / 3, so this case tells the two rules apart (checked below).
  VendorWorld world({0, 0, 0});
  const VendorCase c{VendorCall::AllReduce, DataType::Float32, RedOpKind::Avg, 125, false, 0};
  size_t differing = 0;
  for (size_t i = 0; i < c.count; ++i) {
    float quotient = 0;
    storeQuotient(DataType::Float32, inputOf(c, 0, i) + inputOf(c, 1, i) + inputOf(c, 2, i), 3, &quotient);
    differing += ncclAvgFloat32(c, 3, i) != quotient;
  }
  EXPECT_GT(differing, 0u) << "the case does not distinguish the rules";
  std::vector<std::string> got(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) threads.emplace_back([&, r] { got[r] = runCase(world.comm(r), world.stream(r), c); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) EXPECT_EQ(got[r], "") << "rank " << r;
}

TEST_F(SimVendorTest, ACallTakesEffectOnTheDeviceOnceEveryMemberArrived) {
  VendorWorld world({0, 0});
  std::vector<float> in0(64, 100.0f), staged(64, 1.0f), in1(64, 2.0f), out0(64, -7.0f), out1(64, -7.0f);
  alignas(8) uint64_t gate = 0;
  // Rank 0's input is written by a copy queued before the call, behind a closed gate.
  ASSERT_EQ(plugin().streamWaitFlag(world.stream(0), &gate, 1, 0), HETCCL_GPU_OK);
  ASSERT_EQ(plugin().memcpyAsync(in0.data(), staged.data(), 64 * 4, world.stream(0)), HETCCL_GPU_OK);
  world.comm(0).allReduce(in0.data(), out0.data(), 64, DataType::Float32, ReduceOp{}, world.stream(0));
  world.comm(1).allReduce(in1.data(), out1.data(), 64, DataType::Float32, ReduceOp{}, world.stream(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // Rank 0 has not arrived (its stream waits at the gate): nothing may have moved, rank 1's stream waits.
  EXPECT_EQ(plugin().streamQuery(world.stream(1)), HETCCL_GPU_ERR_NOT_READY);
  EXPECT_EQ(out0[0], -7.0f);
  EXPECT_EQ(out1[0], -7.0f);
  __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
  ASSERT_TRUE(settles(world.stream(0)) && settles(world.stream(1))) << dump();
  for (size_t i = 0; i < 64; ++i) {
    ASSERT_EQ(out0[i], 3.0f) << i;  // 1 (the copied input, not the 100 there at call time) + 2
    ASSERT_EQ(out1[i], 3.0f) << i;
  }
}

TEST_F(SimVendorTest, SendAndRecvMatchPerPairInOrderAndInsideGroups) {
  VendorWorld world({0, 0, 0});
  constexpr size_t kCount = 5000;
  auto values = [](int from, int k) {
    std::vector<int32_t> v(kCount);
    for (size_t i = 0; i < kCount; ++i) v[i] = static_cast<int32_t>(from * 1'000'000 + k * 100'000 + i);
    return v;
  };
  // A ring in one group per rank (each sends to the next and receives from the previous: without the
  // group every stream would wait at its send), a message to itself, an empty message, then two
  // messages 0 -> 1 outside groups, received in order.
  std::vector<std::vector<int32_t>> in(3), fromPrev(3, std::vector<int32_t>(kCount)), self(3, std::vector<int32_t>(kCount));
  for (int r = 0; r < 3; ++r) in[r] = values(r, 0);
  for (int r = 0; r < 3; ++r) {
    SimDomainComm& c = world.comm(r);
    world.vendor().groupStart();
    c.send(in[r].data(), kCount, DataType::Int32, (r + 1) % 3, world.stream(r));
    c.recv(fromPrev[r].data(), kCount, DataType::Int32, (r + 2) % 3, world.stream(r));
    c.send(in[r].data(), kCount, DataType::Int32, r, world.stream(r));
    c.recv(self[r].data(), kCount, DataType::Int32, r, world.stream(r));
    c.send(nullptr, 0, DataType::Int32, (r + 1) % 3, world.stream(r));
    c.recv(nullptr, 0, DataType::Int32, (r + 2) % 3, world.stream(r));
    world.vendor().groupEnd();
  }
  const std::vector<int32_t> first = values(0, 1), second = values(0, 2);
  std::vector<int32_t> got1(kCount), got2(kCount);
  world.comm(1).recv(got1.data(), kCount, DataType::Int32, 0, world.stream(1));
  world.comm(1).recv(got2.data(), kCount, DataType::Int32, 0, world.stream(1));
  world.comm(0).send(first.data(), kCount, DataType::Int32, 1, world.stream(0));
  world.comm(0).send(second.data(), kCount, DataType::Int32, 1, world.stream(0));
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(settles(world.stream(r))) << dump();
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(fromPrev[r], in[(r + 2) % 3]) << "rank " << r;
    EXPECT_EQ(self[r], in[r]) << "rank " << r;
  }
  EXPECT_EQ(got1, first);
  EXPECT_EQ(got2, second);
}

TEST_F(SimVendorTest, OneThreadDrivesEveryMemberInOneGroup) {
  VendorWorld world({0, 0, 0, 0});
  std::vector<std::vector<int64_t>> buf(4, std::vector<int64_t>(1000));
  for (int r = 0; r < 4; ++r)
    for (size_t i = 0; i < 1000; ++i) buf[r][i] = r * 10 + static_cast<int64_t>(i);
  world.vendor().groupStart();
  for (int r = 0; r < 4; ++r)
    world.comm(r).allReduce(buf[r].data(), buf[r].data(), 1000, DataType::Int64, ReduceOp{}, world.stream(r));
  world.vendor().groupEnd();
  for (int r = 0; r < 4; ++r) ASSERT_TRUE(settles(world.stream(r))) << dump();
  for (int r = 0; r < 4; ++r)
    for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(buf[r][i], 60 + 4 * static_cast<int64_t>(i)) << r << " " << i;
  EXPECT_THROW(world.vendor().groupEnd(), InvalidUsage);
}

TEST_F(SimVendorTest, MismatchedCallsFailNamingBothAndReleaseTheOthers) {
  VendorWorld world({0, 0});
  ReduceOp sum, max;
  max.kind = RedOpKind::Max;
  struct Mismatch {
    const char* name;
    std::function<void(SimDomainComm&, float*, void*)> first, second;
    const char* firstText;
    const char* secondText;
  };
  const std::vector<Mismatch> cases = {
      {"count", [&](auto& c, float* b, void* s) { c.allReduce(b, b, 5, DataType::Float32, sum, s); },
       [&](auto& c, float* b, void* s) { c.allReduce(b, b, 6, DataType::Float32, sum, s); },
       "allReduce(count 5, float32, sum)", "allReduce(count 6, float32, sum)"},
      {"kind", [&](auto& c, float* b, void* s) { c.allReduce(b, b, 5, DataType::Float32, sum, s); },
       [&](auto& c, float* b, void* s) { c.broadcast(b, b, 5, DataType::Float32, 0, s); },
       "allReduce(count 5, float32, sum)", "broadcast(count 5, float32, root 0)"},
      {"type", [&](auto& c, float* b, void* s) { c.allGather(b, b, 2, DataType::Float32, s); },
       [&](auto& c, float* b, void* s) { c.allGather(b + 2, b, 2, DataType::Int32, s); },
       "allGather(count 2, float32)", "allGather(count 2, int32)"},
      {"operator", [&](auto& c, float* b, void* s) { c.reduce(b, b, 5, DataType::Float32, sum, 1, s); },
       [&](auto& c, float* b, void* s) { c.reduce(b, b, 5, DataType::Float32, max, 1, s); },
       "reduce(count 5, float32, sum, root 1)", "reduce(count 5, float32, max, root 1)"},
      {"root", [&](auto& c, float* b, void* s) { c.broadcast(b, b, 5, DataType::Float32, 0, s); },
       [&](auto& c, float* b, void* s) { c.broadcast(b, b, 5, DataType::Float32, 1, s); },
       "broadcast(count 5, float32, root 0)", "broadcast(count 5, float32, root 1)"},
      {"transfer size", [&](auto& c, float* b, void* s) { c.send(b, 5, DataType::Float32, 1, s); },
       [&](auto& c, float* b, void* s) { c.recv(b, 6, DataType::Float32, 0, s); },
       "send(count 5, float32, to 1)", "recv(count 6, float32, from 0)"},
  };
  for (const Mismatch& m : cases) {
    SCOPED_TRACE(m.name);
    auto comms = world.createComms();
    std::vector<float> a(16, 1.0f), b(16, 2.0f);
    m.first(*comms[0], a.data(), world.stream(0));
    std::string text;
    try {
      m.second(*comms[1], b.data(), world.stream(1));
      ADD_FAILURE() << "the second call did not throw";
    } catch (const InvalidUsage& e) {
      text = e.what();
    }
    EXPECT_NE(text.find(concat("domain rank 0 called ", m.firstText)), std::string::npos) << text;
    EXPECT_NE(text.find(concat("domain rank 1 called ", m.secondText)), std::string::npos) << text;
    ASSERT_TRUE(settles(world.stream(0))) << "the first member's call was not released\n" << dump();
    EXPECT_EQ(a, std::vector<float>(16, 1.0f)) << "a failed call wrote its output";
    EXPECT_THROW(comms[0]->checkAsyncError(), InvalidUsage);
    EXPECT_THROW(comms[0]->allReduce(a.data(), a.data(), 1, DataType::Float32, sum, world.stream(0)), InvalidUsage);
    EXPECT_THROW(comms[1]->destroy(), InvalidUsage);
  }
}

TEST_F(SimVendorTest, TwoCommunicatorsOnTheSameMembersAreDistinct) {
  VendorWorld world({0, 0});
  auto second = world.createComms();
  EXPECT_NE(world.comm(0).id(), second[0]->id());
  EXPECT_EQ(world.comm(0).id(), world.comm(1).id());
  EXPECT_EQ(second[0]->id(), second[1]->id());
  void* extra[2];
  for (void*& s : extra) plugin().streamCreate(&s);
  std::vector<int32_t> a0(8, 1), a1(8, 2), b0(8, 10), b1(8, 20);
  // Rank 0 calls on the first communicator, rank 1 on the second: neither call may meet the other.
  world.comm(0).allReduce(a0.data(), a0.data(), 8, DataType::Int32, ReduceOp{}, world.stream(0));
  second[1]->allReduce(b1.data(), b1.data(), 8, DataType::Int32, ReduceOp{}, world.stream(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(plugin().streamQuery(world.stream(0)), HETCCL_GPU_ERR_NOT_READY);
  EXPECT_EQ(plugin().streamQuery(world.stream(1)), HETCCL_GPU_ERR_NOT_READY);
  world.comm(1).allReduce(a1.data(), a1.data(), 8, DataType::Int32, ReduceOp{}, extra[1]);
  second[0]->allReduce(b0.data(), b0.data(), 8, DataType::Int32, ReduceOp{}, extra[0]);
  for (void* s : {world.stream(0), world.stream(1), extra[0], extra[1]}) ASSERT_TRUE(settles(s)) << dump();
  EXPECT_EQ(a0, std::vector<int32_t>(8, 3));
  EXPECT_EQ(a1, std::vector<int32_t>(8, 3));
  EXPECT_EQ(b0, std::vector<int32_t>(8, 30));
  EXPECT_EQ(b1, std::vector<int32_t>(8, 30));
  second.clear();
  for (void* s : extra) plugin().streamDestroy(s);
}

TEST_F(SimVendorTest, AbortReleasesThePeersCallsAndTheyReportIt) {
  VendorWorld world({0, 0, 0});
  std::vector<float> buf(32, 5.0f);
  world.comm(0).allReduce(buf.data(), buf.data(), 32, DataType::Float32, ReduceOp{}, world.stream(0));
  world.comm(1).abort();
  ASSERT_TRUE(settles(world.stream(0))) << dump();
  EXPECT_EQ(buf, std::vector<float>(32, 5.0f));
  try {
    world.comm(0).checkAsyncError();
    ADD_FAILURE() << "no error after a member aborted";
  } catch (const PeerError& e) {
    EXPECT_NE(std::string(e.what()).find("domain rank 1 aborted"), std::string::npos) << e.what();
  }
  EXPECT_THROW(world.comm(2).allReduce(buf.data(), buf.data(), 32, DataType::Float32, ReduceOp{}, world.stream(2)),
               PeerError);
}

TEST_F(SimVendorTest, DestroyWaitsForTheQueuedCalls) {
  VendorWorld world({0, 0});
  std::vector<int32_t> a(1000, 1), b(1000, 2);
  world.comm(0).allReduce(a.data(), a.data(), 1000, DataType::Int32, ReduceOp{}, world.stream(0));
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    world.comm(1).allReduce(b.data(), b.data(), 1000, DataType::Int32, ReduceOp{}, world.stream(1));
  });
  world.comm(0).destroy();  // returns once its call finished on the device
  EXPECT_EQ(a, std::vector<int32_t>(1000, 3));
  late.join();
  world.comm(1).destroy();
  EXPECT_EQ(b, std::vector<int32_t>(1000, 3));
  EXPECT_NO_THROW(world.comm(0).destroy());  // idempotent
}

TEST_F(SimVendorTest, CountersCountCallsAndBytesPerKind) {
  VendorWorld world({0, 0, 0});
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      SimDomainComm& c = world.comm(r);
      void* s = world.stream(r);
      std::vector<double> big(3 * 40, 1.0), small(40, 1.0);
      c.allReduce(small.data(), small.data(), 10, DataType::Float32, ReduceOp{}, s);
      c.allReduce(small.data(), small.data(), 3, DataType::Float64, ReduceOp{}, s);
      c.reduceScatter(big.data(), small.data(), 4, DataType::Int8, ReduceOp{}, s);
      c.allGather(small.data(), big.data(), 3, DataType::Float64, s);
      c.broadcast(small.data(), small.data(), 7, DataType::Int32, 2, s);
      c.reduce(small.data(), small.data(), 5, DataType::Uint64, ReduceOp{}, 0, s);
      c.allReduce(small.data(), small.data(), 0, DataType::Float32, ReduceOp{}, s);  // empty: no data
      world.vendor().groupStart();
      c.send(small.data(), 6, DataType::Int32, (r + 1) % 3, s);
      c.recv(big.data(), 6, DataType::Int32, (r + 2) % 3, s);
      world.vendor().groupEnd();
      settles(s);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) {
    const VendorCounters n = world.comm(r).counters();
    EXPECT_EQ(n.of(VendorCall::AllReduce), 3u);
    EXPECT_EQ(n.bytesOf(VendorCall::AllReduce), 10u * 4 + 3 * 8);
    EXPECT_EQ(n.of(VendorCall::ReduceScatter), 1u);
    EXPECT_EQ(n.bytesOf(VendorCall::ReduceScatter), 3u * 4);
    EXPECT_EQ(n.bytesOf(VendorCall::AllGather), 3u * 3 * 8);
    EXPECT_EQ(n.bytesOf(VendorCall::Broadcast), 7u * 4);
    EXPECT_EQ(n.bytesOf(VendorCall::Reduce), 5u * 8);
    EXPECT_EQ(n.of(VendorCall::Send), 1u);
    EXPECT_EQ(n.bytesOf(VendorCall::Send), 24u);
    EXPECT_EQ(n.bytesOf(VendorCall::Recv), 24u);
    EXPECT_EQ(n.totalCalls(), 9u);
    EXPECT_EQ(n.completed, 9u);
  }
}

TEST_F(SimVendorTest, BadArgumentsAreRejectedAndChangeNothing) {
  VendorWorld world({0, 0});
  std::vector<float> a(4, 1.0f), b(4, 2.0f);
  SimDomainComm& c0 = world.comm(0);
  EXPECT_THROW(c0.broadcast(a.data(), a.data(), 4, DataType::Float32, 2, world.stream(0)), InvalidArgument);
  EXPECT_THROW(c0.allReduce(nullptr, a.data(), 4, DataType::Float32, ReduceOp{}, world.stream(0)), InvalidArgument);
  EXPECT_THROW(c0.send(a.data(), 4, DataType::Float32, -1, world.stream(0)), InvalidArgument);
  EXPECT_THROW(c0.allReduce(a.data(), a.data(), 4, static_cast<DataType>(77), ReduceOp{}, world.stream(0)),
               InvalidArgument);
  beginCapture(world.stream(0));
  EXPECT_THROW(c0.allReduce(a.data(), a.data(), 4, DataType::Float32, ReduceOp{}, world.stream(0)), InvalidUsage);
  endCapture(world.stream(0));
  EXPECT_EQ(c0.counters().totalCalls(), 0u);
  EXPECT_EQ(plugin().streamQuery(world.stream(0)), HETCCL_GPU_OK);
  // The rejected calls took no number: the next call meets the peer's first.
  c0.allReduce(a.data(), a.data(), 4, DataType::Float32, ReduceOp{}, world.stream(0));
  world.comm(1).allReduce(b.data(), b.data(), 4, DataType::Float32, ReduceOp{}, world.stream(1));
  ASSERT_TRUE(settles(world.stream(0)) && settles(world.stream(1))) << dump();
  EXPECT_EQ(a, std::vector<float>(4, 3.0f));
}

}  // namespace
}  // namespace hetccl::test::sim
