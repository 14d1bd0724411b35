// shm specifics: the segment's name, mode and lifetime; header validation; timeouts; nothing leaks.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "transport/shm/process_liveness.hpp"
#include "transport/shm/shm_transport.hpp"
#include "transport_harness.hpp"

namespace hetccl::transport::testing {
namespace {

/// Names in /dev/shm that contain `needle`.
std::vector<std::string> shmEntriesContaining(const std::string& needle) {
  std::vector<std::string> found;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir))
      if (std::string(e->d_name).find(needle) != std::string::npos) found.emplace_back(e->d_name);
    closedir(dir);
  }
  return found;
}

std::string tokenHex(uint64_t token) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(token));
  return buf;
}

/// After every test of this binary: no segment with this process's tokens is left in /dev/shm.
class NoShmLeftBehind : public ::testing::Environment {
 public:
  void TearDown() override {
    char pidHex[10];
    std::snprintf(pidHex, sizeof pidHex, "-%08x", static_cast<unsigned>(getpid()));
    EXPECT_TRUE(shmEntriesContaining(pidHex).empty()) << "shm segments leaked into /dev/shm";
  }
};
const auto* const kLeakCheck = ::testing::AddGlobalTestEnvironment(new NoShmLeftBehind);

TEST(Shm, SegmentIsPrivateAndGoneOnceAccepted) {
  auto t = makeShmTransport();
  PeerInfo a = localRank(0), b = localRank(1);
  uint64_t token = freshToken();
  auto listener = t->listen(b);
  auto send = t->connect(listener->handle(), ConnectInfo{a, b, token, nullptr}, Deadline::afterMs(5000));
  auto entries = shmEntriesContaining(tokenHex(token));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].rfind("hetccl-", 0), 0u) << entries[0];
  struct stat st {};
  ASSERT_EQ(stat(("/dev/shm/" + entries[0]).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto recv = t->accept(*listener, ConnectInfo{b, a, token, nullptr}, Deadline::afterMs(5000));
  EXPECT_TRUE(shmEntriesContaining(tokenHex(token)).empty()) << "accept must unlink the name at once";
}

TEST(Shm, SenderDestroyedBeforeAcceptLeavesNothing) {
  auto t = makeShmTransport();
  PeerInfo a = localRank(0), b = localRank(1);
  uint64_t token = freshToken();
  auto listener = t->listen(b);
  t->connect(listener->handle(), ConnectInfo{a, b, token, nullptr}, Deadline::afterMs(5000)).reset();
  EXPECT_TRUE(shmEntriesContaining(tokenHex(token)).empty());
}

TEST(Shm, AcceptTimesOutNamingThePeer) {
  auto t = makeShmTransport();
  PeerInfo a = localRank(3), b = localRank(1);
  auto listener = t->listen(b);
  try {
    t->accept(*listener, ConnectInfo{b, a, freshToken(), nullptr}, Deadline::afterMs(100));
    FAIL() << "accept without a sender must time out";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(e.peer(), 3);
    EXPECT_NE(std::string(e.what()).find("rank 3"), std::string::npos) << e.what();
  }
}

TEST(Shm, WrongTokenIsNotAccepted) {
  auto t = makeShmTransport();
  PeerInfo a = localRank(0), b = localRank(1);
  auto listener = t->listen(b);
  uint64_t token = freshToken();
  auto send = t->connect(listener->handle(), ConnectInfo{a, b, token, nullptr}, Deadline::afterMs(5000));
  EXPECT_THROW(t->accept(*listener, ConnectInfo{b, a, token + 1, nullptr}, Deadline::afterMs(100)), TimeoutError);
}

TEST(Shm, ForeignHandleIsRejected) {
  auto t = makeShmTransport();
  Handle garbage;
  garbage.bytes.fill(0x41);
  EXPECT_THROW(t->connect(garbage, ConnectInfo{localRank(0), localRank(1), freshToken(), nullptr},
                          Deadline::afterMs(100)),
               InvalidArgument);
}

TEST(Shm, CanConnectOnlyOnTheSameHost) {
  auto t = makeShmTransport();
  PeerInfo a = localRank(0), b = localRank(1);
  EXPECT_TRUE(t->canConnect(a, b));
  b.hostId = "elsewhere";
  EXPECT_FALSE(t->canConnect(a, b));
}

TEST(Shm, ClosedSenderIsReportedToAWaitingReceiver) {
  auto t = makeShmTransport();
  Link link = connectPair(*t, 0, 1);
  std::vector<unsigned char> buf(100);
  Request r = link.recv->irecv(buf.data(), buf.size());
  link.send.reset();
  EXPECT_THROW(link.recv->test(r), PeerError);
}

TEST(Shm, SizeMismatchIsAPeerError) {
  auto t = makeShmTransport();
  Link link = connectPair(*t, 0, 1);
  std::vector<unsigned char> out(10), in(20);
  Request s = link.send->isend(out.data(), out.size());
  ASSERT_TRUE(waitDone(*link.send, s));
  Request r = link.recv->irecv(in.data(), in.size());
  EXPECT_THROW(link.recv->test(r), PeerError);
}

TEST(ShmLiveness, OwnProcessIsAliveAndAnExitedChildIsNot) {
  EXPECT_TRUE(shm::ProcessLiveness(getpid()).alive());
  EXPECT_TRUE(shm::ProcessLiveness(0).alive()) << "pid 0 means unknown: never report it dead";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  shm::ProcessLiveness watch(child);
  EXPECT_TRUE(watch.alive());
  ASSERT_EQ(kill(child, SIGKILL), 0);
  Deadline d = Deadline::afterMs(5000);
  while (watch.alive() && !d.expired()) {
  }
  EXPECT_FALSE(watch.alive()) << "a killed (zombie) child must count as dead";
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_FALSE(shm::ProcessLiveness(child).alive()) << "a reaped pid must count as dead";
}

}  // namespace
}  // namespace hetccl::transport::testing
