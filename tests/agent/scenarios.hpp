// The roles of agent_peer's scenarios, one process each: agent_peer.cc's table maps "scenario/role" to them. A
// role returns the process's exit status (0 when it passed) or ends the process through die().
#pragma once

#include "peer_support.hpp"

namespace hetccl::agent_peer {

// scenarios_data.cc: (a) write + notification, (b) read of many ranges, (c) notifications never before data.
int writeTarget(Ctx& c);
int writeInitiator(Ctx& c);
int readTarget(Ctx& c);
int readInitiator(Ctx& c);
int orderTarget(Ctx& c);
int orderInitiator(Ctx& c);

// scenarios_peers.cc: (d) join / leave, (e) forged blobs, (f) stale: the target restarts, (g) killed or silent peer.
int roundsTarget(Ctx& c);
int joinInitiator(Ctx& c);
int forgedTarget(Ctx& c);
int publisherRole(Ctx& c);
int forgedInitiator(Ctx& c);
int staleTarget(Ctx& c);
int staleInitiator(Ctx& c);
int sinkTarget(Ctx& c);
int streamTarget(Ctx& c);
int streamInitiator(Ctx& c);

// scenarios_misuse.cc: (h) bad arguments, (i) cancel, (j) deregistered region.
int badTarget(Ctx& c);
int badInitiator(Ctx& c);
int createRole(Ctx& c);
int cancelTarget(Ctx& c);
int cancelInitiator(Ctx& c);
int deregTarget(Ctx& c);
int deregInitiator(Ctx& c);

}  // namespace hetccl::agent_peer
