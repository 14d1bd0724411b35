// coll_check: every collective x type x operator x size x in/out-of-place on the ranks started by a
// launcher (hetccl-run), each result compared exactly with the reference of values.hpp. Prints one line
// per rank and exits non-zero when anything was wrong on this rank or failed: each rank's verdict is its
// own comparison, reported through its exit status (hetccl-run fails when any rank does, naming it);
// the count over all ranks is an all-reduce through hetccl, printed as a summary only.
//   coll_check [--sizes 0,1,7,...] [--colls all_reduce,...] [--types int8,...] [--ops sum,...]
// runCollCheck is shared by the host program (coll_check_host.cc) and the GPU one (tests/gpu).
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.hpp"
#include "common/launch_env.hpp"

using namespace hetccl::test;

namespace {

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

struct Options {
  std::vector<size_t> sizes{0, 1, 7, 1000, 65537};
  std::vector<std::string> colls;  // empty: all
  std::vector<hetcclDataType_t> types;
  std::vector<hetcclRedOp_t> ops;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--sizes") {
      o.sizes.clear();
      for (auto& s : splitList(value())) o.sizes.push_back(std::stoull(s));
    } else if (a == "--colls") {
      o.colls = splitList(value());
    } else if (a == "--types") {
      for (auto& s : splitList(value())) o.types.push_back(parseType(s));
    } else if (a == "--ops") {
      for (auto& s : splitList(value())) o.ops.push_back(parseOp(s));
    } else {
      throw std::runtime_error("unknown argument " + a);
    }
  }
  if (o.types.empty())
    for (int t = 0; t < hetcclNumTypes; ++t) o.types.push_back(static_cast<hetcclDataType_t>(t));
  if (o.ops.empty())
    for (int op = 0; op <= hetcclNumOps; ++op) o.ops.push_back(static_cast<hetcclRedOp_t>(op));  // NumOps = PreMulSum
  return o;
}

bool wanted(const Options& o, const std::string& coll) {
  if (o.colls.empty()) return true;
  for (auto& c : o.colls)
    if (c == coll) return true;
  return false;
}

}  // namespace

int hetccl::test::runCollCheck(int argc, char** argv, BufferSpace& space) {
  hetcclComm_t comm = nullptr;
  int rank = -1;
  try {
    Options opt = parse(argc, argv);
    auto env = hetccl::tools::readLaunchEnv();
    rank = env.rank;
    HETCCL_CHECK(hetcclCommInitRank(&comm, env.size, env.id, env.rank), comm);
    Checker check(comm, env.rank, env.size, space);
    for (size_t count : opt.sizes) {
      for (auto type : opt.types) {
        for (bool inPlace : {false, true}) {
          if (wanted(opt, "all_gather")) check.allGather(type, count, inPlace);
          if (wanted(opt, "broadcast")) check.broadcast(type, count, (count + 1) % env.size, inPlace);
          for (auto op : opt.ops) {
            if (wanted(opt, "all_reduce")) check.allReduce(type, op, count, inPlace);
            if (wanted(opt, "reduce_scatter")) check.reduceScatter(type, op, count, inPlace);
            if (wanted(opt, "reduce")) check.reduce(type, op, count, count % env.size, inPlace);
          }
        }
        if (wanted(opt, "alltoall")) check.allToAll(type, count);
        if (wanted(opt, "alltoallv")) check.allToAllv(type, count);
        if (wanted(opt, "sendrecv")) check.sendRecvRing(type, count);
        if (wanted(opt, "group")) check.fusedGroup(type, count);
      }
    }
    const long long here = check.wrongHere();  // the verdict: never through hetccl
    const long long summary = check.totalWrong();
    std::printf("coll_check: rank %d of %d: %lld cases, %lld wrong elements on this rank (%lld over all ranks by "
                "all-reduce)\n",
                env.rank, env.size, check.cases(), here, summary);
    hetcclComm_t done = comm;
    comm = nullptr;  // destroyed even when destroy reports an error: never abort it afterwards
    HETCCL_CHECK(hetcclCommDestroy(done), nullptr);
    if (here) std::fprintf(stderr, "coll_check: rank %d: FAILED: %lld wrong elements\n", env.rank, here);
    return here == 0 && summary == 0 ? 0 : 1;  // a summary that is not 0 fails too (another rank's, or its own)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coll_check: rank %d: %s\n", rank, e.what());
    if (comm) hetcclCommAbort(comm);
    return 2;
  }
}
