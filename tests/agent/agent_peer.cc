// agent_peer: one agent of a scenario of the agent API (include/hetccl/hetccl_agent.h), one process per agent,
// started by run_agent_scenarios.py. Written against the public headers only (hetccl_agent.h, and hetccl.h for
// hetcclGetLastError), linked to the shared library.
//
//   agent_peer ROLE --scenario S --dir DIR --name NAME [--peer NAME] [--seed N] [--timeout S] [--deadline S] ...
//
// Agents publish DIR/<name>.meta (their region ids and sizes, then the metadata blob; written to FILE.tmp and
// renamed) and signal each other through small files in DIR; every wait polls with a deadline. Every verdict
// comes from data this program computes itself: the bytes a target must hold are pat(seed, offset) of a seed
// and an offset both sides derive from the scenario's plan, untouched bytes must keep the canary 0xC5, and
// notifications are compared byte for byte. A failure prints "<tag>: FAIL (step ...): what" and exits 1; a
// watchdog ends the process with exit status 3 when --deadline seconds pass, naming the step it was in.
// Success prints "<tag>: OK ..." and exits 0.
//
// The program is split by concept: peer_support.hpp / .cc (the shared helpers: reporting, the watchdog, the
// arguments, files, byte patterns, agents and regions, metadata files, notifications, transfers),
// scenarios_data.cc ((a) write, (b) read, (c) order), scenarios_peers.cc ((d) join / leave, (e) forged, (f) stale,
// (g) killed or silent peer) and scenarios_misuse.cc ((h) bad arguments, (i) cancel, (j) deregistered region),
// their roles declared in scenarios.hpp; this file holds the table of roles, usage() and main().
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "peer_support.hpp"
#include "scenarios.hpp"

namespace hetccl::agent_peer {
namespace {

// ------------------------------------------------------------------------------------------ dispatch

using RoleFn = int (*)(Ctx&);

const std::map<std::string, RoleFn>& roles() {
  static const std::map<std::string, RoleFn> table = {
      {"write/target", writeTarget},       {"write/initiator", writeInitiator},
      {"read/target", readTarget},         {"read/initiator", readInitiator},
      {"order/target", orderTarget},       {"order/initiator", orderInitiator},
      {"joinleave/target", roundsTarget},  {"joinleave/initiator", joinInitiator},
      {"forged/target", forgedTarget},     {"forged/publisher", publisherRole},
      {"forged/initiator", forgedInitiator}, {"stale/target", staleTarget},
      {"stale/initiator", staleInitiator}, {"kill/sink", sinkTarget},
      {"kill/target", streamTarget},       {"kill/initiator", streamInitiator},
      {"badargs/target", badTarget},       {"badargs/initiator", badInitiator},
      {"badargs/create", createRole},      {"cancel/target", cancelTarget},
      {"cancel/initiator", cancelInitiator}, {"dereg/target", deregTarget},
      {"dereg/initiator", deregInitiator},
  };
  return table;
}

int usage() {
  std::fprintf(stderr, "usage: agent_peer ROLE --scenario S --dir DIR --name NAME [--peer NAME] [--seed N] [--timeout S] "
                       "[--wait S] [--deadline S] [scenario options]\nroles:");
  for (const auto& [k, v] : roles()) std::fprintf(stderr, " %s", k.c_str());
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace
}  // namespace hetccl::agent_peer

using hetccl::agent_peer::Ctx;
using hetccl::agent_peer::gTag;
using hetccl::agent_peer::roles;
using hetccl::agent_peer::startWatchdog;
using hetccl::agent_peer::usage;

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  Ctx c;
  c.args.role = argv[1];
  for (int i = 2; i < argc; i += 2) {
    if (std::strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc) return usage();
    c.args.kv[argv[i] + 2] = argv[i + 1];
  }
  if (!c.args.has("scenario") || !c.args.has("dir") || !c.args.has("name")) return usage();
  c.scenario = c.args.str("scenario");
  c.name = c.args.str("name");
  c.dir = c.args.str("dir");
  c.seed = static_cast<uint64_t>(c.args.integer("seed", 1));
  c.timeout = c.args.num("timeout", 20);
  c.wait = c.args.num("wait", 30);
  gTag = "agent_peer " + c.scenario + "/" + c.args.role + " " + c.name;
  const auto it = roles().find(c.scenario + "/" + c.args.role);
  if (it == roles().end()) return usage();
  startWatchdog(c.args.num("deadline", 60));
  return it->second(c);
}
