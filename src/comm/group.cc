#include "comm/group.hpp"

#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "core/error.hpp"

namespace hetccl::group {
namespace {

struct Batch {
  Communicator* comm;
  void* stream;
  std::vector<algo::CollOp> ops;
};

struct State {
  int depth = 0;
  std::vector<Batch> batches;  // one per communicator, in order of first use
};

thread_local State state;

void runBatches(std::vector<Batch>& batches) {
  if (batches.size() == 1) {
    batches[0].comm->run(batches[0].ops, batches[0].stream);
    return;
  }
  std::vector<std::exception_ptr> errors(batches.size());
  std::vector<std::thread> threads;
  threads.reserve(batches.size());
  for (size_t i = 0; i < batches.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        batches[i].comm->run(batches[i].ops, batches[i].stream);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

void start() { ++state.depth; }

bool active() { return state.depth > 0; }

void end() {
  if (state.depth == 0) throw InvalidUsage("GroupEnd without a matching GroupStart");
  if (--state.depth > 0) return;
  std::vector<Batch> batches = std::move(state.batches);
  state.batches.clear();
  if (!batches.empty()) runBatches(batches);
}

void submit(Communicator& comm, algo::CollOp op, void* stream) {
  if (state.depth == 0) {
    comm.run({&op, 1}, stream);
    return;
  }
  for (auto& b : state.batches)
    if (b.comm == &comm) {
      b.ops.push_back(std::move(op));
      return;
    }
  state.batches.push_back({&comm, stream, {}});
  state.batches.back().ops.push_back(std::move(op));
}

void forget(const Communicator& comm) {
  std::erase_if(state.batches, [&](const Batch& b) { return b.comm == &comm; });
}

}  // namespace hetccl::group
