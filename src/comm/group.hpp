// GroupStart / GroupEnd: operations issued between them (on any communicators of this thread) are
// queued and run together at the outermost GroupEnd, each communicator's operations as one fused
// schedule. Several communicators in one group run concurrently (one thread each), so a single thread
// may drive several ranks (hetcclCommInitAll) without deadlock.
#pragma once

#include "algo/coll_op.hpp"

namespace hetccl {

class Communicator;

namespace group {

void start();
/// Runs everything queued when the outermost group ends. Throws the first failure; the queue is
/// emptied either way. Throws InvalidUsage without a matching start().
void end();
/// True while this thread is inside a group.
bool active();
/// Runs `op` now (outside a group) or queues it. `op` must already be validated. `stream` orders
/// operations on device buffers (a group uses the stream of its communicator's first operation).
void submit(Communicator& comm, algo::CollOp op, void* stream);
/// Drops queued operations of `comm` (it is being destroyed inside a group).
void forget(const Communicator& comm);

}  // namespace group
}  // namespace hetccl
