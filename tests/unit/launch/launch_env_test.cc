// readLaunchEnv() under each launcher's variables, and its error messages.
#include "common/launch_env.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "bootstrap/unique_id.hpp"
#include "core/error.hpp"

namespace hetccl::tools {
namespace {

using bootstrap::UniqueId;

// Every variable readLaunchEnv may look at; each test starts with all of them unset.
constexpr const char* kLaunchVars[] = {
    "HETCCL_UNIQUE_ID", "HETCCL_RANK", "HETCCL_NRANKS", "HETCCL_LOCAL_RANK", "HETCCL_LOCAL_SIZE",
    "HETCCL_SECRET", "HETCCL_COMM_ID", "NCCL_COMM_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK",
    "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
    "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
    "SLURM_STEP_NODELIST", "SLURM_NODELIST", "SLURM_JOB_ID"};

constexpr const char* kSecret = "00112233445566778899aabbccddeeff";

class LaunchEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kLaunchVars) {
      if (const char* v = std::getenv(name)) saved_[name] = v;
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kLaunchVars) unsetenv(name);
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  static void set(const std::map<std::string, std::string>& vars) {
    for (const auto& [name, value] : vars) setenv(name.c_str(), value.c_str(), 1);
  }
  /// The message readLaunchEnv throws (fails the test when it does not throw).
  static std::string errorMessage() {
    try {
      readLaunchEnv();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "readLaunchEnv did not throw";
    return "";
  }
  static UniqueId decoded(const LaunchEnv& env) {
    return UniqueId::decode(reinterpret_cast<const unsigned char*>(env.id.internal), sizeof env.id.internal);
  }
  void setTorchrun() {
    set({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "2"},
         {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}, {"HETCCL_SECRET", kSecret}});
  }
  void setSlurm() {
    set({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "7"}, {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "2"},
         {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"}, {"SLURM_STEP_NODELIST", "localhost,other[1-3]"},
         {"SLURM_JOB_ID", "123456"}, {"HETCCL_SECRET", kSecret}});
  }

 private:
  std::map<std::string, std::string> saved_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(LaunchEnvTest, HetcclRun) {
  UniqueId id = bootstrap::makeLauncherId(net::SocketAddress::parse("127.0.0.1:4242"));
  set({{"HETCCL_RANK", "1"}, {"HETCCL_NRANKS", "3"}, {"HETCCL_LOCAL_RANK", "1"}, {"HETCCL_LOCAL_SIZE", "3"},
       {"HETCCL_UNIQUE_ID", id.toHex()}});
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.source, "hetccl-run");
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.size, 3);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.localSize, 3);
  auto bytes = id.encode();
  EXPECT_EQ(std::memcmp(env.id.internal, bytes.data(), bytes.size()), 0);
}

TEST_F(LaunchEnvTest, HetcclRunComesFirst) {
  UniqueId id = bootstrap::makeLauncherId(net::SocketAddress::parse("127.0.0.1:4242"));
  setTorchrun();
  set({{"HETCCL_RANK", "0"}, {"HETCCL_NRANKS", "1"}, {"HETCCL_LOCAL_RANK", "0"}, {"HETCCL_LOCAL_SIZE", "1"},
       {"HETCCL_UNIQUE_ID", id.toHex()}});
  EXPECT_EQ(readLaunchEnv().source, "hetccl-run");
}

TEST_F(LaunchEnvTest, Torchrun) {
  setTorchrun();
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.source, "torchrun");
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.size, 4);
  EXPECT_EQ(env.localRank, 0);
  EXPECT_EQ(env.localSize, 2);
  UniqueId id = decoded(env);
  EXPECT_EQ(id.root.toString(), "127.0.0.1:29501");  // MASTER_PORT + 1: torch's store holds MASTER_PORT
  EXPECT_TRUE(id.rank0StartsRoot);
  // Same secret, same id: every rank derives the same bytes.
  UniqueId again = decoded(readLaunchEnv());
  EXPECT_EQ(id.secret, again.secret);
}

TEST_F(LaunchEnvTest, TorchrunIpv6MasterAddr) {
  setTorchrun();
  set({{"MASTER_ADDR", "::1"}});
  EXPECT_EQ(decoded(readLaunchEnv()).root.toString(), "[::1]:29501");
}

TEST_F(LaunchEnvTest, DifferentSecretsGiveDifferentIds) {
  setTorchrun();
  UniqueId a = decoded(readLaunchEnv());
  set({{"HETCCL_SECRET", "ffeeddccbbaa99887766554433221100"}});
  UniqueId b = decoded(readLaunchEnv());
  EXPECT_NE(a.secret, b.secret);
}

TEST_F(LaunchEnvTest, OpenMpi) {
  set({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}, {"HETCCL_COMM_ID", "127.0.0.1:30000"}, {"HETCCL_SECRET", kSecret}});
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.source, "openmpi");
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.size, 8);
  EXPECT_EQ(env.localRank, 3);
  EXPECT_EQ(env.localSize, 4);
  EXPECT_EQ(decoded(env).root.toString(), "127.0.0.1:30000");
  EXPECT_TRUE(decoded(env).rank0StartsRoot);
}

TEST_F(LaunchEnvTest, OpenMpiHonoursNcclCommId) {
  set({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"NCCL_COMM_ID", "127.0.0.1:30001"}, {"HETCCL_SECRET", kSecret}});
  EXPECT_EQ(decoded(readLaunchEnv()).root.toString(), "127.0.0.1:30001");
}

TEST_F(LaunchEnvTest, OpenMpiWithoutCommIdSaysHowToSetIt) {
  set({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"HETCCL_SECRET", kSecret}});
  std::string msg = errorMessage();
  EXPECT_TRUE(contains(msg, "HETCCL_COMM_ID is not set")) << msg;
  EXPECT_TRUE(contains(msg, "mpirun -x")) << msg;
}

TEST_F(LaunchEnvTest, SlurmRootFromNodeListAndJobId) {
  setSlurm();
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.source, "slurm");
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.size, 7);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.localSize, 2);  // node 2 of "2(x3),1"
  UniqueId id = decoded(env);
  EXPECT_TRUE(id.root.isLoopback());  // "localhost", the first host of the step's node list
  EXPECT_EQ(id.root.port(), slurmRootPort(123456));
  EXPECT_EQ(slurmRootPort(123456), 15000 + 123456 % 15000);
}

TEST_F(LaunchEnvTest, SlurmCommIdWinsAndJobNodeListIsTheFallback) {
  setSlurm();
  set({{"HETCCL_COMM_ID", "127.0.0.1:31000"}});
  EXPECT_EQ(decoded(readLaunchEnv()).root.toString(), "127.0.0.1:31000");
  unsetenv("HETCCL_COMM_ID");
  unsetenv("SLURM_STEP_NODELIST");
  unsetenv("SLURM_STEP_TASKS_PER_NODE");
  set({{"SLURM_NODELIST", "localhost"}, {"SLURM_TASKS_PER_NODE", "3(x2),1"}, {"SLURM_LOCALID", "0"}});
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.localSize, 1);
  EXPECT_TRUE(decoded(env).root.isLoopback());
}

TEST_F(LaunchEnvTest, NoLauncherSaysWhatToDo) {
  std::string msg = errorMessage();
  EXPECT_TRUE(contains(msg, "no launcher found")) << msg;
  EXPECT_TRUE(contains(msg, "hetccl-run")) << msg;
}

TEST_F(LaunchEnvTest, MissingSecretExplainsHowToSetIt) {
  setTorchrun();
  unsetenv("HETCCL_SECRET");
  std::string msg = errorMessage();
  EXPECT_TRUE(contains(msg, "HETCCL_SECRET is not set")) << msg;
  EXPECT_TRUE(contains(msg, "openssl rand -hex 32")) << msg;
}

TEST_F(LaunchEnvTest, ShortOrGarbledSecret) {
  setTorchrun();
  set({{"HETCCL_SECRET", "abc"}});
  EXPECT_TRUE(contains(errorMessage(), "HETCCL_SECRET"));
  set({{"HETCCL_SECRET", "zz112233445566778899aabbccddeeff"}});
  EXPECT_TRUE(contains(errorMessage(), "HETCCL_SECRET"));
}

struct BadValue {
  const char* variable;
  const char* value;  ///< nullptr: unset it
  const char* expectedInMessage;
};

TEST_F(LaunchEnvTest, EveryMissingOrGarbledTorchrunVariableIsNamed) {
  const BadValue cases[] = {
      {"RANK", nullptr, "RANK is not set"},
      {"WORLD_SIZE", nullptr, "WORLD_SIZE is not set"},
      {"LOCAL_RANK", nullptr, "LOCAL_RANK is not set"},
      {"LOCAL_WORLD_SIZE", nullptr, "LOCAL_WORLD_SIZE is not set"},
      {"MASTER_ADDR", nullptr, "MASTER_ADDR is not set"},
      {"MASTER_PORT", nullptr, "MASTER_PORT is not set"},
      {"RANK", "4", "RANK=4 is not below WORLD_SIZE=4"},
      {"RANK", "-1", "RANK='-1' is outside"},
      {"RANK", "1x", "RANK='1x' is not a decimal integer"},
      {"RANK", " 1", "is not a decimal integer"},
      {"RANK", "0x1", "is not a decimal integer"},
      {"RANK", "", "RANK is set but empty"},
      {"WORLD_SIZE", "0", "WORLD_SIZE='0' is outside"},
      {"WORLD_SIZE", "99999999999999999999999", "is outside"},
      {"LOCAL_WORLD_SIZE", "5", "LOCAL_WORLD_SIZE=5 exceeds WORLD_SIZE=4"},
      {"LOCAL_RANK", "2", "LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2"},
      {"MASTER_PORT", "65535", "MASTER_PORT='65535' is outside"},
      {"MASTER_PORT", "http", "MASTER_PORT='http' is not a decimal integer"},
  };
  for (const BadValue& c : cases) {
    setTorchrun();
    if (c.value) setenv(c.variable, c.value, 1);
    else unsetenv(c.variable);
    std::string msg = errorMessage();
    EXPECT_TRUE(contains(msg, c.expectedInMessage)) << c.variable << "=" << (c.value ? c.value : "(unset)") << ": "
                                                    << msg;
  }
  // A launch by hand that missed LOCAL_RANK learns every variable a torchrun-style launch needs.
  setTorchrun();
  unsetenv("LOCAL_RANK");
  const std::string msg = errorMessage();
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "HETCCL_SECRET"})
    EXPECT_TRUE(contains(msg, name)) << name << " not named: " << msg;
}

TEST_F(LaunchEnvTest, GarbledHetcclRunVariables) {
  UniqueId id = bootstrap::makeLauncherId(net::SocketAddress::parse("127.0.0.1:4242"));
  std::string hex = id.toHex();
  std::string flipped = hex;
  flipped[0] = flipped[0] == '0' ? '1' : '0';  // breaks the magic
  const BadValue cases[] = {
      {"HETCCL_UNIQUE_ID", nullptr, "HETCCL_UNIQUE_ID is not set"},
      {"HETCCL_UNIQUE_ID", "abc", "HETCCL_UNIQUE_ID is not a unique id"},
      {"HETCCL_UNIQUE_ID", flipped.c_str(), "magic"},
      {"HETCCL_NRANKS", nullptr, "HETCCL_NRANKS is not set"},
      {"HETCCL_LOCAL_RANK", nullptr, "HETCCL_LOCAL_RANK is not set"},
      {"HETCCL_LOCAL_SIZE", nullptr, "HETCCL_LOCAL_SIZE is not set"},
      {"HETCCL_RANK", "3", "HETCCL_RANK=3 is not below HETCCL_NRANKS=2"},
      {"HETCCL_NRANKS", "two", "HETCCL_NRANKS='two' is not a decimal integer"},
  };
  for (const BadValue& c : cases) {
    set({{"HETCCL_RANK", "1"}, {"HETCCL_NRANKS", "2"}, {"HETCCL_LOCAL_RANK", "0"}, {"HETCCL_LOCAL_SIZE", "1"},
         {"HETCCL_UNIQUE_ID", hex}});
    if (c.value) setenv(c.variable, c.value, 1);
    else unsetenv(c.variable);
    std::string msg = errorMessage();
    EXPECT_TRUE(contains(msg, c.expectedInMessage)) << c.variable << ": " << msg;
  }
}

TEST_F(LaunchEnvTest, GarbledSlurmVariables) {
  const BadValue cases[] = {
      {"SLURM_NTASKS", nullptr, "SLURM_NTASKS is not set"},
      {"SLURM_LOCALID", "2", "SLURM_LOCALID=2 is not below SLURM_STEP_TASKS_PER_NODE=2"},
      {"SLURM_NODEID", "9", "lists 4 nodes"},
      {"SLURM_STEP_TASKS_PER_NODE", "2(3)", "COUNT(xREPEAT)"},
      {"SLURM_STEP_NODELIST", "node[1-2", "SLURM_STEP_NODELIST"},
      {"SLURM_JOB_ID", nullptr, "SLURM_JOB_ID is not set"},
  };
  for (const BadValue& c : cases) {
    setSlurm();
    if (c.value) setenv(c.variable, c.value, 1);
    else unsetenv(c.variable);
    std::string msg = errorMessage();
    EXPECT_TRUE(contains(msg, c.expectedInMessage)) << c.variable << ": " << msg;
  }
}

TEST_F(LaunchEnvTest, CommIdMustHaveAFixedPort) {
  setSlurm();
  set({{"HETCCL_COMM_ID", "127.0.0.1:0"}});
  EXPECT_TRUE(contains(errorMessage(), "fixed port"));
  set({{"HETCCL_COMM_ID", "not an address"}});
  EXPECT_TRUE(contains(errorMessage(), "HETCCL_COMM_ID"));
}

}  // namespace
}  // namespace hetccl::tools
