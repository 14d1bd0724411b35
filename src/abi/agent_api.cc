// The agent entry points (include/hetccl/hetccl_agent.h) over agent::Agent. Handles are numbers looked
// up in tables (abi/handle_table.hpp); a registration or transfer handle holds its agent, so a destroyed
// agent's handles fail cleanly (InvalidUsage) instead of touching freed memory.
#include <cstring>
#include <string>

#include "abi/guard.hpp"
#include "abi/handle_table.hpp"
#include "agent/agent.hpp"
#include "core/config.hpp"
#include "hetccl/hetccl_agent.h"

using hetccl::abi::guarded;

namespace hetccl::abi {
namespace {

struct AgentHandle {
  std::shared_ptr<agent::Agent> agent;
  std::mutex mu;
  bool destroyed = false;
};

struct MemHandle {
  std::shared_ptr<AgentHandle> owner;
  agent::Agent::Registration reg;
};

struct XferHandle {
  std::shared_ptr<AgentHandle> owner;
  std::shared_ptr<agent::Xfer> xfer;
};

HandleTable<AgentHandle>& agents() {
  static HandleTable<AgentHandle> t("the agent (hetcclAgent_t)");
  return t;
}
HandleTable<MemHandle>& mems() {
  static HandleTable<MemHandle> t("the agent registration (hetcclAgentMem_t)");
  return t;
}
HandleTable<XferHandle>& xfers() {
  static HandleTable<XferHandle> t("the transfer (hetcclAgentXfer_t)");
  return t;
}

/// The live agent of `h` (InvalidUsage once destroyed).
std::shared_ptr<agent::Agent> live(const std::shared_ptr<AgentHandle>& h) {
  std::lock_guard<std::mutex> lock(h->mu);
  if (h->destroyed || !h->agent) throw InvalidUsage("the agent was destroyed (hetcclAgentDestroy)");
  return h->agent;
}

std::string nameArg(const char* name, const char* what) {
  if (!name) throw InvalidArgument(concat(what, " is NULL"));
  return std::string(name, strnlen(name, 256));
}

void copyName(const std::string& name, char* out) {
  std::memcpy(out, name.c_str(), name.size() + 1);  // <= HETCCL_AGENT_NAME_MAX + 1 (validated names)
}

/// Runs a check/wait outcome through guarded(): failures become the call's result and last error;
/// InProgress is returned without touching the last error.
template <typename Body>
hetcclResult_t outcomeCall(const char* fn, Body&& body) noexcept {
  Result r = Result::Success;
  const hetcclResult_t g = guarded(fn, [&] {
    std::string message;
    r = body(message);
    if (r != Result::Success && r != Result::InProgress) throw Error(r, message);
  });
  return g == hetcclSuccess ? static_cast<hetcclResult_t>(r) : g;
}

}  // namespace
}  // namespace hetccl::abi

using namespace hetccl;
using namespace hetccl::abi;

extern "C" {

HETCCL_API hetcclResult_t hetcclAgentOptionsInit(hetcclAgentOptions_t* options) {
  return guarded(__func__, [&] {
    if (!options) throw InvalidArgument("options is NULL");
    *options = hetcclAgentOptions_t{};
    options->device = -1;
  });
}

HETCCL_API hetcclResult_t hetcclAgentCreate(const char* name, const hetcclAgentOptions_t* options, hetcclAgent_t* out) {
  return guarded(__func__, [&] {
    if (!out) throw InvalidArgument("agent (output) is NULL");
    const std::string n = nameArg(name, "name");
    config().checkValues();
    Config::warnUnknownVariablesOnce();
    agent::AgentOptions o;
    if (options) {
      if (options->secret && options->secretBytes) {
        const auto* s = static_cast<const unsigned char*>(options->secret);
        o.secret.assign(s, s + options->secretBytes);
      } else if (options->secretBytes && !options->secret) {
        throw InvalidArgument("options.secret is NULL with options.secretBytes > 0");
      }
      if (options->listenAddress) o.listenAddress = options->listenAddress;
      if (options->device < -1) throw InvalidArgument(concat("options.device = ", options->device));
      o.device = options->device;
      o.timeoutSeconds = options->timeoutSeconds;
    }
    auto h = std::make_shared<AgentHandle>();
    h->agent = std::make_shared<agent::Agent>(n, o);
    *out = reinterpret_cast<hetcclAgent_t>(agents().add(h));
  });
}

HETCCL_API hetcclResult_t hetcclAgentDestroy(hetcclAgent_t a) {
  return guarded(__func__, [&] {
    std::shared_ptr<AgentHandle> h = agents().get(a);
    agents().erase(a);
    std::shared_ptr<agent::Agent> ag;
    {
      std::lock_guard<std::mutex> lock(h->mu);
      h->destroyed = true;
      ag = std::move(h->agent);
    }
    if (ag) ag->stop();  // the memory goes with the last handle holding it
  });
}

HETCCL_API hetcclResult_t hetcclAgentGetMetadata(hetcclAgent_t a, void* blob, size_t* bytes) {
  return guarded(__func__, [&] {
    if (!bytes) throw InvalidArgument("bytes is NULL");
    const std::vector<unsigned char> m = live(agents().get(a))->metadata();
    const size_t cap = *bytes;
    *bytes = m.size();
    if (!blob) return;
    if (cap < m.size()) throw InvalidArgument(concat("the blob needs ", m.size(), " bytes; the buffer has ", cap));
    std::memcpy(blob, m.data(), m.size());
  });
}

HETCCL_API hetcclResult_t hetcclAgentLoadRemote(hetcclAgent_t a, const void* blob, size_t bytes, char* name) {
  return guarded(__func__, [&] {
    if (!blob) throw InvalidArgument("blob is NULL");
    if (!name) throw InvalidArgument("name (output) is NULL");
    auto ag = live(agents().get(a));
    copyName(ag->loadRemote({static_cast<const unsigned char*>(blob), bytes}), name);
  });
}

HETCCL_API hetcclResult_t hetcclAgentForgetRemote(hetcclAgent_t a, const char* name) {
  return guarded(__func__, [&] { live(agents().get(a))->forgetRemote(nameArg(name, "name")); });
}

HETCCL_API hetcclResult_t hetcclAgentRegister(hetcclAgent_t a, void* buf, size_t bytes, hetcclAgentMem_t* mem, uint32_t* id) {
  return guarded(__func__, [&] {
    if (!mem) throw InvalidArgument("mem (output) is NULL");
    auto h = agents().get(a);
    auto m = std::make_shared<MemHandle>();
    m->owner = h;
    m->reg = live(h)->registerMemory(buf, bytes);
    *mem = reinterpret_cast<hetcclAgentMem_t>(mems().add(m));
    if (id) *id = m->reg.id;
  });
}

HETCCL_API hetcclResult_t hetcclAgentDeregister(hetcclAgentMem_t mem) {
  return guarded(__func__, [&] {
    std::shared_ptr<MemHandle> m = mems().get(mem);
    mems().erase(mem);
    std::shared_ptr<agent::Agent> ag;
    {
      std::lock_guard<std::mutex> lock(m->owner->mu);
      ag = m->owner->agent;
    }
    if (ag) ag->deregister(m->reg.id, m->reg.generation);  // a destroyed agent: only the handle goes
  });
}

HETCCL_API hetcclResult_t hetcclAgentMemQuery(hetcclAgentMem_t mem, uint32_t* id, int* kind, size_t* bytes) {
  return guarded(__func__, [&] {
    if (!id) throw InvalidArgument("id is NULL");
    std::shared_ptr<MemHandle> m = mems().get(mem);
    *id = m->reg.id;
    if (kind) *kind = static_cast<int>(m->reg.kind);
    if (bytes) *bytes = m->reg.bytes;
  });
}

HETCCL_API hetcclResult_t hetcclAgentStridedRanges(hetcclAgentRange_t* ranges, size_t count, uint32_t localRegion,
                                                   uint64_t localOffset, uint64_t localStride, uint32_t remoteRegion,
                                                   uint64_t remoteOffset, uint64_t remoteStride, uint64_t bytes) {
  return guarded(__func__, [&] {
    if (!ranges && count) throw InvalidArgument("ranges is NULL");
    const auto fits = [&](uint64_t base, uint64_t stride) {
      return count == 0 || stride == 0 || (count - 1) <= (UINT64_MAX - base) / stride;
    };
    if (!fits(localOffset, localStride) || !fits(remoteOffset, remoteStride)) throw InvalidArgument("the run's offsets overflow");
    for (size_t i = 0; i < count; ++i)
      ranges[i] = hetcclAgentRange_t{localRegion, remoteRegion, localOffset + i * localStride, remoteOffset + i * remoteStride, bytes};
  });
}

HETCCL_API hetcclResult_t hetcclAgentPrepXfer(hetcclAgent_t a, hetcclAgentOp_t op, const char* peer,
                                              const hetcclAgentRange_t* ranges, size_t nranges, const void* notif,
                                              size_t notifBytes, hetcclAgentXfer_t* xfer) {
  return guarded(__func__, [&] {
    if (!xfer) throw InvalidArgument("xfer (output) is NULL");
    if (!ranges) throw InvalidArgument("ranges is NULL");
    if (notifBytes && !notif) throw InvalidArgument("notif is NULL with notifBytes > 0");
    if (op != hetcclAgentRead && op != hetcclAgentWrite) throw InvalidArgument(concat("op ", static_cast<int>(op), " is not a read or a write"));
    auto h = agents().get(a);
    std::vector<agent::Range> rs(nranges);
    for (size_t i = 0; i < nranges; ++i)
      rs[i] = agent::Range{ranges[i].localRegion, ranges[i].remoteRegion, ranges[i].localOffset, ranges[i].remoteOffset,
                           ranges[i].bytes};
    auto x = std::make_shared<XferHandle>();
    x->owner = h;
    x->xfer = live(h)->prepare(op == hetcclAgentRead ? agent::MsgType::Read : agent::MsgType::Write, nameArg(peer, "peer"), rs,
                               {static_cast<const unsigned char*>(notif), notifBytes});
    *xfer = reinterpret_cast<hetcclAgentXfer_t>(xfers().add(x));
  });
}

HETCCL_API hetcclResult_t hetcclAgentPostXfer(hetcclAgentXfer_t xfer) {
  return guarded(__func__, [&] {
    auto x = xfers().get(xfer);
    live(x->owner)->post(*x->xfer);
  });
}

HETCCL_API hetcclResult_t hetcclAgentCheckXfer(hetcclAgentXfer_t xfer) {
  return outcomeCall(__func__, [&](std::string& message) {
    auto x = xfers().get(xfer);
    return live(x->owner)->check(*x->xfer, message);
  });
}

HETCCL_API hetcclResult_t hetcclAgentWaitXfer(hetcclAgentXfer_t xfer) {
  return outcomeCall(__func__, [&](std::string& message) {
    auto x = xfers().get(xfer);
    return live(x->owner)->wait(*x->xfer, message);
  });
}

HETCCL_API hetcclResult_t hetcclAgentCancelXfer(hetcclAgentXfer_t xfer) {
  return guarded(__func__, [&] {
    auto x = xfers().get(xfer);
    live(x->owner)->cancel(*x->xfer);
  });
}

HETCCL_API hetcclResult_t hetcclAgentReleaseXfer(hetcclAgentXfer_t xfer) {
  return guarded(__func__, [&] {
    auto x = xfers().get(xfer);
    std::shared_ptr<agent::Agent> ag;
    {
      std::lock_guard<std::mutex> lock(x->owner->mu);
      ag = x->owner->agent;
    }
    if (ag) ag->checkReleasable(*x->xfer);  // a destroyed agent ended every post
    xfers().erase(xfer);
  });
}

HETCCL_API hetcclResult_t hetcclAgentGenNotif(hetcclAgent_t a, const char* peer, const void* msg, size_t bytes) {
  return guarded(__func__, [&] {
    if (bytes && !msg) throw InvalidArgument("msg is NULL with bytes > 0");
    live(agents().get(a))->genNotif(nameArg(peer, "peer"), {static_cast<const unsigned char*>(msg), bytes});
  });
}

HETCCL_API hetcclResult_t hetcclAgentPrepNotif(hetcclAgent_t a, const char* peer, const void* msg, size_t bytes,
                                               hetcclAgentXfer_t* xfer) {
  return guarded(__func__, [&] {
    if (!xfer) throw InvalidArgument("xfer (output) is NULL");
    if (bytes && !msg) throw InvalidArgument("msg is NULL with bytes > 0");
    auto h = agents().get(a);
    auto x = std::make_shared<XferHandle>();
    x->owner = h;
    x->xfer = live(h)->prepareNotif(nameArg(peer, "peer"), {static_cast<const unsigned char*>(msg), bytes});
    *xfer = reinterpret_cast<hetcclAgentXfer_t>(xfers().add(x));
  });
}

HETCCL_API hetcclResult_t hetcclAgentGetNotif(hetcclAgent_t a, char* peer, void* msg, size_t capacity, size_t* bytes, int* got) {
  return guarded(__func__, [&] {
    if (!peer || !bytes || !got) throw InvalidArgument("peer, bytes and got must not be NULL");
    if (capacity && !msg) throw InvalidArgument("msg is NULL with capacity > 0");
    std::string from;
    size_t size = 0;
    bool have = false;
    const bool fits = live(agents().get(a))->takeNotif(from, static_cast<unsigned char*>(msg), capacity, size, have);
    *got = 0;
    if (!have) return;
    *bytes = size;
    if (!fits)
      throw InvalidArgument(concat("the next notification (from agent '", from, "') has ", size, " bytes; the buffer has ",
                                   capacity, " (it stays queued)"));
    copyName(from, peer);
    *got = 1;
  });
}

}  // extern "C"
