// Domain communicators over the fake NCCL: the vendor id travels over a threads-as-ranks bootstrap,
// every call reaches the library with exactly the arguments given (types, ops, roots, peers, streams),
// PreMulSum, vendor errors with their text, asynchronous errors, abort and destroy.
#include <gtest/gtest.h>

#include <cstring>

#include "bootstrap_harness.hpp"
#include "core/error.hpp"
#include "domain/nccl/id_exchange.hpp"
#include "domain/nccl/nccl_comm.hpp"
#include "domain/nccl/nccl_vendor.hpp"
#include "fake_control.hpp"

namespace hetccl::domain::nccl {
namespace {

using bootstrap::createUniqueId;
using bootstrap::testing::joinAll;
using bootstrap::testing::JoinResult;
using bootstrap::testing::ScopedEnv;

class DomainCommTest : public ::testing::Test {
 protected:
  ScopedEnv timeout_{"HETCCL_TIMEOUT", "20"};  // a bug becomes a failure, not a hang
  testing::FakeControl fake_{FAKE_NCCL_FULL};
  std::unique_ptr<NcclVendor> vendor_ = openNccl(FAKE_NCCL_FULL);

  static void expectJoined(const std::vector<JoinResult>& ranks) {
    for (size_t r = 0; r < ranks.size(); ++r) ASSERT_TRUE(ranks[r].bootstrap) << "rank " << r << ": " << ranks[r].error;
  }
  /// A one-rank domain for call-translation tests.
  std::unique_ptr<NcclComm> soloComm() {
    solo_ = joinAll(createUniqueId(), 1);
    expectJoined(solo_);
    auto comm = vendor_->createComm(*solo_[0].bootstrap, {0});
    return std::unique_ptr<NcclComm>(static_cast<NcclComm*>(comm.release()));
  }
  FakeNcclCall lastCall(const NcclComm& c) {
    FakeNcclCall call{};
    fake_.lastCall(c.native(), &call);
    return call;
  }
  std::vector<JoinResult> solo_;
};

void* fakePointer(uintptr_t v) { return reinterpret_cast<void*>(v); }

TEST_F(DomainCommTest, UniqueIdReachesEveryMemberOfASubsetDomain) {
  auto ranks = joinAll(createUniqueId(), 4);
  ASSERT_NO_FATAL_FAILURE(expectJoined(ranks));
  const std::vector<int> members{2, 3, 1};  // rank 0 is not in this domain; rank 2 creates the id
  std::vector<FakeNcclCommInfo> info(4);
  const int idsBefore = fake_.snapshot().getUniqueId;
  std::vector<std::thread> threads;
  for (int r : members)
    threads.emplace_back([&, r] {
      try {
        auto comm = vendor_->createComm(*ranks[r].bootstrap, members);
        fake_.commInfo(static_cast<NcclComm&>(*comm).native(), &info[r]);
        EXPECT_EQ(comm->size(), 3);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << ": " << e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(fake_.snapshot().getUniqueId, idsBefore + 1);  // created once, by members[0]
  EXPECT_EQ(std::memcmp(info[2].id, "FAKE", 4), 0);
  for (int i = 0; i < 3; ++i) {
    int r = members[i];
    EXPECT_EQ(info[r].rank, i) << "rank " << r << " must init with its index in the domain";
    EXPECT_EQ(info[r].nranks, 3);
    EXPECT_EQ(std::memcmp(info[r].id, info[2].id, sizeof info[r].id), 0) << "rank " << r;
  }
}

TEST_F(DomainCommTest, CreatorFailureIsReportedByEveryMemberNamingTheCreator) {
  auto ranks = joinAll(createUniqueId(), 3);
  ASSERT_NO_FATAL_FAILURE(expectJoined(ranks));
  fake_.failNext("ncclGetUniqueId", abi::ncclSystemError, "no network interface found");
  std::vector<std::string> errors(3);
  std::vector<int> blamed(3, -99);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      try {
        vendor_->createComm(*ranks[r].bootstrap, {1, 0, 2});
      } catch (const PeerError& e) {
        errors[r] = e.what();
        blamed[r] = e.peer();
      } catch (const SystemError& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) EXPECT_NE(errors[r].find("no network interface found"), std::string::npos) << errors[r];
  EXPECT_NE(errors[1].find("ncclGetUniqueId"), std::string::npos) << errors[1];
  EXPECT_EQ(blamed[0], 1);
  EXPECT_EQ(blamed[2], 1);
  EXPECT_NE(errors[0].find("rank 1"), std::string::npos) << errors[0];
}

TEST_F(DomainCommTest, BadMembersAreRejectedBeforeAnyVendorCall) {
  auto ranks = joinAll(createUniqueId(), 1);
  ASSERT_NO_FATAL_FAILURE(expectJoined(ranks));
  auto& bs = *ranks[0].bootstrap;
  const int before = fake_.snapshot().getUniqueId;
  EXPECT_THROW(vendor_->createComm(bs, {}), InvalidArgument);
  EXPECT_THROW(vendor_->createComm(bs, {0, 0}), InvalidArgument);
  EXPECT_THROW(vendor_->createComm(bs, {0, 5}), InvalidArgument);
  EXPECT_EQ(fake_.snapshot().getUniqueId, before);
}

TEST_F(DomainCommTest, CallsPassArgumentsThroughExactly) {
  auto comm = soloComm();
  void* stream = fakePointer(0x5000);
  comm->allReduce(fakePointer(0x1000), fakePointer(0x2000), 77, DataType::Bfloat16, {RedOpKind::Max}, stream);
  FakeNcclCall c = lastCall(*comm);
  EXPECT_STREQ(c.name, "ncclAllReduce");
  EXPECT_EQ(c.send, fakePointer(0x1000));
  EXPECT_EQ(c.recv, fakePointer(0x2000));
  EXPECT_EQ(c.count, 77u);
  EXPECT_EQ(c.datatype, 9);
  EXPECT_EQ(c.op, 2);
  EXPECT_EQ(c.stream, stream);

  comm->reduceScatter(fakePointer(0x1100), fakePointer(0x2100), size_t(1) << 33, DataType::Uint64, {RedOpKind::Avg},
                      nullptr);
  c = lastCall(*comm);
  EXPECT_STREQ(c.name, "ncclReduceScatter");
  EXPECT_EQ(c.count, size_t(1) << 33);  // no narrowing of large counts
  EXPECT_EQ(c.datatype, 5);
  EXPECT_EQ(c.op, 4);
  EXPECT_EQ(c.stream, nullptr);

  comm->allGather(fakePointer(0x1200), fakePointer(0x2200), 5, DataType::Float16, stream);
  c = lastCall(*comm);
  EXPECT_STREQ(c.name, "ncclAllGather");
  EXPECT_EQ(c.datatype, 6);

  comm->broadcast(fakePointer(0x1300), fakePointer(0x2300), 6, DataType::Int8, 0, stream);
  c = lastCall(*comm);
  EXPECT_STREQ(c.name, "ncclBroadcast");
  EXPECT_EQ(c.rootOrPeer, 0);
  EXPECT_EQ(c.datatype, 0);

  comm->reduce(fakePointer(0x1400), fakePointer(0x2400), 7, DataType::Float64, {RedOpKind::Prod}, 0, stream);
  c = lastCall(*comm);
  EXPECT_STREQ(c.name, "ncclReduce");
  EXPECT_EQ(c.op, 1);
  EXPECT_EQ(c.datatype, 8);

  comm->send(fakePointer(0x1500), 8, DataType::Int32, 0, stream);
  c = lastCall(*comm);
  EXPECT_STREQ(c.name, "ncclSend");
  EXPECT_EQ(c.send, fakePointer(0x1500));
  EXPECT_EQ(c.rootOrPeer, 0);
  EXPECT_EQ(c.datatype, 2);

  comm->recv(fakePointer(0x2600), 9, DataType::Uint32, 0, stream);
  c = lastCall(*comm);
  EXPECT_STREQ(c.name, "ncclRecv");
  EXPECT_EQ(c.recv, fakePointer(0x2600));
  EXPECT_EQ(c.count, 9u);
  EXPECT_EQ(c.datatype, 3);

  const auto before = fake_.snapshot();
  vendor_->groupStart();
  vendor_->groupEnd();
  EXPECT_EQ(fake_.snapshot().groupStart, before.groupStart + 1);
  EXPECT_EQ(fake_.snapshot().groupEnd, before.groupEnd + 1);
}

TEST_F(DomainCommTest, PreMulSumCreatesAnOperatorPerCallWithTheScalar) {
  auto comm = soloComm();
  ReduceOp op{RedOpKind::PreMulSum};
  const double factor = 0.25;
  std::memcpy(op.scalar, &factor, sizeof factor);
  const auto before = fake_.snapshot();
  comm->allReduce(fakePointer(0x1000), fakePointer(0x2000), 3, DataType::Float64, op, nullptr);
  const auto after = fake_.snapshot();
  EXPECT_EQ(after.opCreate, before.opCreate + 1);
  EXPECT_EQ(after.opDestroy, before.opDestroy + 1);
  EXPECT_EQ(std::memcmp(after.lastScalar, &factor, sizeof factor), 0);
  EXPECT_EQ(after.lastScalarType, 8);
  EXPECT_EQ(after.lastResidence, 1);  // ncclScalarHostImmediate
  EXPECT_EQ(lastCall(*comm).op, after.lastCreatedOp);
  EXPECT_EQ(after.lastDestroyedOp, after.lastCreatedOp);
}

TEST_F(DomainCommTest, VendorErrorsCarryTheCallTheTextAndTheDomainRank) {
  auto comm = soloComm();
  fake_.failNext("ncclAllReduce", abi::ncclInvalidArgument, "count 77 is too large");
  try {
    comm->allReduce(fakePointer(0x1000), fakePointer(0x2000), 77, DataType::Float32, {}, nullptr);
    FAIL() << "the injected failure was not reported";
  } catch (const InvalidArgument& e) {
    std::string m = e.what();
    for (const char* part : {"ncclAllReduce", "ncclInvalidArgument", "fake: invalid argument", "count 77 is too large",
                             "domain rank 0 of 1"})
      EXPECT_NE(m.find(part), std::string::npos) << "'" << part << "' missing from: " << m;
  }
  fake_.failNext("ncclGroupEnd", abi::ncclRemoteError, "peer vanished");
  EXPECT_THROW(vendor_->groupEnd(), PeerError);
}

TEST_F(DomainCommTest, AsyncErrorsAreThrownWhenReported) {
  auto comm = soloComm();
  EXPECT_NO_THROW(comm->checkAsyncError());
  fake_.setAsyncError(comm->native(), abi::ncclInProgress);  // still initialising: not an error
  EXPECT_NO_THROW(comm->checkAsyncError());
  fake_.setAsyncError(comm->native(), abi::ncclRemoteError);
  EXPECT_THROW(comm->checkAsyncError(), PeerError);
}

TEST_F(DomainCommTest, DestroyFinalizesOnceAndAbortSkipsFinalize) {
  auto before = fake_.snapshot();
  {
    auto comm = soloComm();
    comm->destroy();
    comm->destroy();  // idempotent
    EXPECT_THROW(comm->allGather(fakePointer(1), fakePointer(2), 1, DataType::Int8, nullptr), InvalidUsage);
  }
  auto after = fake_.snapshot();
  EXPECT_EQ(after.finalize, before.finalize + 1);
  EXPECT_EQ(after.destroy, before.destroy + 1);

  before = after;
  {
    auto comm = soloComm();
    comm->abort();
  }
  after = fake_.snapshot();
  EXPECT_EQ(after.abort, before.abort + 1);
  EXPECT_EQ(after.finalize, before.finalize);
  EXPECT_EQ(after.destroy, before.destroy);

  before = after;
  { auto comm = soloComm(); }  // the destructor destroys
  after = fake_.snapshot();
  EXPECT_EQ(after.destroy, before.destroy + 1);
}

TEST_F(DomainCommTest, VendorConfigIsPassedToInitRankConfig) {
  auto ranks = joinAll(createUniqueId(), 1);
  ASSERT_NO_FATAL_FAILURE(expectJoined(ranks));
  int config = 12345;  // opaque to hetccl: only the pointer matters
  auto comm = vendor_->createComm(*ranks[0].bootstrap, {0}, &config);
  FakeNcclCommInfo info{};
  fake_.commInfo(static_cast<NcclComm&>(*comm).native(), &info);
  EXPECT_EQ(info.config, &config);
}

TEST(DomainCommMinimal, OldLibraryWithoutOptionalSymbolsStillWorks) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  testing::FakeControl fake(FAKE_NCCL_MINIMAL);
  auto vendor = openNccl(FAKE_NCCL_MINIMAL);
  auto ranks = joinAll(createUniqueId(), 1);
  ASSERT_TRUE(ranks[0].bootstrap) << ranks[0].error;
  int config = 0;
  EXPECT_THROW(vendor->createComm(*ranks[0].bootstrap, {0}, &config), InvalidUsage);
  auto comm = vendor->createComm(*ranks[0].bootstrap, {0});
  EXPECT_NO_THROW(comm->checkAsyncError());  // no ncclCommGetAsyncError: nothing to report
  comm->allReduce(fakePointer(1), fakePointer(2), 1, DataType::Float32, {RedOpKind::Sum}, nullptr);
  ReduceOp premul{RedOpKind::PreMulSum};
  try {
    comm->allReduce(fakePointer(1), fakePointer(2), 1, DataType::Float32, premul, nullptr);
    FAIL() << "PreMulSum without ncclRedOpCreatePreMulSum";
  } catch (const InvalidUsage& e) {
    EXPECT_NE(std::string(e.what()).find("ncclRedOpCreatePreMulSum"), std::string::npos) << e.what();
  }
  const auto before = fake.snapshot();
  comm->destroy();  // no ncclCommFinalize: destroy alone
  EXPECT_EQ(fake.snapshot().destroy, before.destroy + 1);
  EXPECT_EQ(fake.snapshot().finalize, before.finalize);
}

}  // namespace
}  // namespace hetccl::domain::nccl
