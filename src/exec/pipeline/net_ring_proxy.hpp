// The stream pipeline between hosts: a thread that mirrors this rank's GPU rings to peers on other hosts
// over transport connections (tcp or ucx), so that the GPU streams use such a ring exactly as a ring
// shared with a peer of this host (gpu_ring.hpp) and every collective, algorithm and CUDA graph of the
// stream pipeline runs between hosts unchanged: device -> pinned slot on copy engines, slot -> network
// -> the peer's pinned slot by this proxy, slot -> device on the peer's copy engines, reductions in the
// peer's kernels. Several slots per ring are in flight at once, each direction of each peer independently.
//
// Per peer on another host p (both rings private to this process, GpuRingSet::remote):
//   out[p]  the send stream fills slot s and writes its stamp and its length (slot header words 1-5), then
//           its token (word 0, gpu_stamp.hpp). The proxy sees the token, sends a piece record (stamp,
//           length) and the slot's bytes, and leaves the slot full until p's credit for s comes back
//           (then, with the send complete, marks it empty: the stream may refill it).
//   in[p]   a piece record from p names the slot; its bytes are received straight into that slot, then
//           the proxy writes the stamp, the length and the piece's token (computed from the stamp and the
//           slot). The receive stream waits for the token it expects, copies the bytes out and marks the
//           slot empty; the proxy sees that and sends p a credit for s.
//   The receiver's stamp-mismatch report on in[p] is forwarded once, so that p's monitor reports it
//   too, as with a shared ring. Records: net_ring_wire.hpp; bad records, slots or lengths from a peer
//   are PeerErrors naming it.
// No GPU runtime call is made here (the streams' own writes and waits do the synchronisation), so the
// proxy never blocks behind the device. It polls: busy while anything moved within the last 500 us,
// then every 50 us.
//
// Failure: a transport error (dead peer, garbage) or a protocol violation is reported once through
// `onFailure`, then the proxy abandons its connections and stops touching the rings (the executor's
// monitor releases the streams). halt() does the same without a report (the executor failed first), but
// first forwards a stamp-mismatch report not yet forwarded (the monitor halts the proxy right after
// writing one; without it the peer would only time out) and lets it and everything posted before it on
// that connection go out: a piece's payload travels on its own socket of the connection, and the peer
// reads the report only after that payload.
// An abort (`abortFlag`) halts it silently: the executor's monitor reports aborts of running work.
// stop() ends it gracefully, once the executor's groups are all done: a bye to every peer (sent, at most
// HETCCL_TIMEOUT), then its connections are abandoned. A peer's bye makes the proxy drop that peer at
// once (its groups are all done: nothing it sent or is owed matters), so the connections that then close
// are no error on either side.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "core/peer_info.hpp"
#include "transport/base/links.hpp"
#include "exec/pipeline/gpu_ring.hpp"
#include "exec/pipeline/net_ring_wire.hpp"

namespace hetccl::stream_exec {

class NetRingProxy {
 public:
  using FailureSink = std::function<void(const std::exception&)>;

  /// Serves the peers of `rings` on other hosts (`links` must connect to each of them; the proxy is their
  /// only user) once started. `peers` names ranks in errors. Everything passed must outlive the proxy.
  NetRingProxy(GpuRingSet& rings, transport::Links& links, std::vector<PeerInfo> peers, int rank,
               const std::atomic<bool>* abortFlag, FailureSink onFailure);
  /// Posts the first receives and starts the thread (nothing to do without peers on other hosts).
  void start();
  /// stop(), then joins.
  ~NetRingProxy();
  NetRingProxy(const NetRingProxy&) = delete;
  NetRingProxy& operator=(const NetRingProxy&) = delete;

  /// Graceful end (see above); returns once the thread has ended. Idempotent.
  void stop() noexcept;
  /// Stops touching rings and connections at once (the caller failed); does not wait. Safe from any
  /// thread, the proxy's own (through onFailure) included.
  void halt() noexcept { halt_.store(true, std::memory_order_release); }
  /// Whether any peer is on another host (the thread runs).
  bool active() const { return thread_.joinable(); }

  /// Payload bytes put on the network to each rank (`sent`) and taken off it from each rank (`received`)
  /// so far, indexed by rank (0 for ranks of this host): the pieces' bytes, not the records. Any thread.
  struct WireBytes {
    std::vector<uint64_t> sent, received;
  };
  WireBytes wireBytes() const;

 private:
  struct Outgoing {
    transport::Request request = 0;
    unsigned char record[kNetRingRecordBytes];
  };
  struct Peer {
    int rank = -1;
    GpuRing* out = nullptr;
    GpuRing* in = nullptr;
    transport::SendConn* send = nullptr;
    transport::RecvConn* recv = nullptr;
    std::vector<transport::Request> pieceSend;  ///< per slot of out: the payload's send (0: none)
    std::vector<bool> credited;                 ///< per slot of out: p's credit came
    std::vector<bool> delivered;                ///< per slot of in: marked full here, not yet credited
    std::deque<Outgoing> records;               ///< records in flight (addresses stay put)
    unsigned char incoming[kNetRingRecordBytes];
    NetRingRecord pending;                      ///< the piece whose payload is being received
    transport::Request recvRequest = 0;
    bool receivingPayload = false;
    bool reportForwarded = false;
    bool closed = false;                        ///< it said bye (or this proxy ended): connections abandoned
  };

  void run();
  /// One pass over every peer; true when anything moved.
  bool pass();
  bool sendFullSlots(Peer& p);
  bool applyCredits(Peer& p);
  bool receive(Peer& p);
  void onRecord(Peer& p);
  bool creditEmptiedSlots(Peer& p);
  bool forwardReport(Peer& p);
  bool retireRecords(Peer& p);
  /// Retires the records every open peer has sent (`moved`: whether any was); true once none is in flight.
  bool recordsSent(bool* moved = nullptr);
  /// True once every record and every piece's payload posted to a peer that has a forwarded report is sent.
  bool reportsDelivered();
  void flushReports() noexcept;
  void sendRecord(Peer& p, const NetRingRecord& r);
  [[noreturn]] void protocolError(const Peer& p, const std::string& what) const;
  void abandonAll() noexcept;

  std::vector<PeerInfo> peerInfo_;
  int rank_;
  const std::atomic<bool>* abortFlag_;
  FailureSink onFailure_;
  std::vector<Peer> peers_;
  std::unique_ptr<std::atomic<uint64_t>[]> wireSent_, wireReceived_;  // per rank (see wireBytes)
  std::atomic<bool> halt_{false}, stop_{false};
  std::thread thread_;
};

}  // namespace hetccl::stream_exec
