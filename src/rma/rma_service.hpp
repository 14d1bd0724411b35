// The RMA service of one communicator (hetccl_rma.h): registrations, descriptors, one-sided put/get and
// ordered notifications over connections of its own.
//
// Design. hetcclRmaInit builds a second transport::LinkSet (shm on one host, tcp between hosts, chosen as the
// communicator's links) so that RMA never interleaves with collective traffic, agrees on a random
// communicator identity (bound into every descriptor) and starts one progress thread. Callers never
// touch a transport: they queue messages per peer (under mu_) and wait on requests; the progress thread
// posts every isend/irecv, serves incoming puts (region check, data received straight into host regions
// or staged for device ones), gets (answered with the data or the reason), notifications (queued for
// poll/wait) and acknowledgements (which complete puts). Ordering: a peer's messages are processed
// strictly one after another, and a put is acknowledged and its successor read only once every byte of
// it is in place; a Notify queued after puts therefore surfaces only after their data.
// Failures: a transport error or a request past its deadline (issue + HETCCL_TIMEOUT) closes the channel
// to that peer (its connections abandoned, its requests failed naming its rank and host); later calls
// towards it fail at once. Abort fails everything promptly; stop() (finalize/destroy) says Bye to the
// peers, fails what is pending, joins the thread and frees the connections.
// Stream-ordered transfers (stream_ops.cc): the call queues "write reached, wait for done, write passed"
// on the user's stream (pinned words, stream_flags.hpp); the progress thread polls "reached", then
// enqueues the prepared message exactly like hetcclPut/hetcclGet would at that moment, and the request's
// completion writes "done". Every way a request or a waiting op ends (success, failure, peer death,
// deadline, abort, stop) writes "done"; a failure is first reported to the communicator (its asynchronous
// error, naming the peer), then the stream is released.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "comm/comm_extension.hpp"
#include "core/error.hpp"
#include "core/peer_info.hpp"
#include "rma/channel.hpp"
#include "rma/descriptor.hpp"
#include "rma/memory_access.hpp"
#include "rma/note_queue.hpp"
#include "rma/region_table.hpp"
#include "rma/request.hpp"
#include "rma/stream_flags.hpp"

namespace hetccl {
class Communicator;
namespace transport {
class LinkSet;
}  // namespace transport
namespace bootstrap {
class Bootstrap;
}
}  // namespace hetccl

namespace hetccl::rma {

/// How the RMA links reach a peer over `transport` ("shm", "tcp", ...) from a rank with or without a GPU,
/// e.g. "tcp, device memory staged through pinned host memory": the service's pathTo() lines, and
/// hetccl-info --comm (the RMA links are chosen as the communicator's, so no hetcclRmaInit is needed).
std::string describePath(std::string_view transport, bool gpuRank);
/// Whether HETCCL_RMA_WINDOW asks for a window between `self` and `peer` (one host; auto: either has a
/// GPU). Throws InvalidArgument for an unknown setting. The window is used where it could be made.
bool windowWanted(const PeerInfo& self, const PeerInfo& peer);
/// Whether HETCCL_RMA_IPC lets `peer` and `self` (GPU ranks of one vendor on one host) copy each other's
/// device registrations through IPC mappings; whether the runtime allows it shows at hetcclRmaInit.
/// Throws InvalidArgument for an unknown setting.
bool peerCopyWanted(const PeerInfo& self, const PeerInfo& peer);

class RmaService final : public CommExtension, public std::enable_shared_from_this<RmaService> {
 public:
  /// Collective over `comm`: connects the RMA links, agrees on the identity, starts the progress thread
  /// and attaches the service to `comm` (InvalidUsage when it already has one).
  static std::shared_ptr<RmaService> init(Communicator& comm);
  ~RmaService() override;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(peers_.size()); }
  /// The communicator this service belongs to (for matching handles; never dereferenced).
  const void* owner() const { return owner_; }

  // --- registrations ---
  std::shared_ptr<LocalMem> registerMemory(void* buf, uint64_t bytes);
  /// InvalidUsage while requests hold it (nothing changed); else ends it at once -- no transfer of it
  /// starts afterwards (holdRegistration refuses) -- makes it stale and waits for remote accesses in
  /// progress. InvalidArgument when already deregistered (by a concurrent call).
  void deregister(LocalMem& mem);
  /// After deregister: asks every peer that may have mapped the registration's device allocation to
  /// close that mapping and waits for each answer (peer_copy.cc), so that the allocation may be freed.
  /// TimeoutError naming a peer that did not answer within HETCCL_TIMEOUT; a peer whose RMA channel
  /// closed (it stopped, died or failed) has closed its mappings with it: not an error.
  void unmapAtPeers(LocalMem& mem);
  std::shared_ptr<RemoteMem> import(const DescriptorBytes& bytes);

  // --- transfers ---
  /// Queues a put (get) of `ranges` (checked by the caller against both registrations).
  std::shared_ptr<Request> transfer(bool isGet, const std::shared_ptr<LocalMem>& local, const RemoteMem& remote,
                                    const std::vector<Range>& ranges);
  /// True once done; throws the request's error once failed.
  bool test(Request& req);
  /// Waits until done; throws its error.
  void wait(Request& req);
  bool finished(const Request& req);

  // --- stream-ordered (stream_ops.cc) ---
  /// Queues on `stream` a put (get) of `ranges` (checked by the caller) that starts once the stream gets
  /// there and that later work of the stream waits for. InvalidUsage on a rank without a GPU and while
  /// `stream` is being captured; UnhandledCudaError when the runtime refuses to queue (nothing started).
  void transferOnStream(bool isGet, const std::shared_ptr<LocalMem>& local, const RemoteMem& remote,
                        const std::vector<Range>& ranges, void* stream);
  /// Queues on `stream` a notification that is sent to `peer` once the stream gets there.
  void notifyOnStream(int peer, uint64_t tag, void* stream);
  /// Told about every failed stream-ordered operation (before its stream is released): the
  /// communicator's asynchronous error. Called on the progress thread or in stop(), never after stop().
  using FailureSink = std::function<void(const Error&)>;

  // --- notifications ---
  void notify(int peer, uint64_t tag);
  bool poll(int& peer, uint64_t& tag);
  /// True when taken; false at the deadline; throws when `peer` failed and nothing matching is queued.
  bool waitNotify(int peer, uint64_t tag, Deadline deadline);

  // --- CommExtension ---
  void stop(const std::string& why) noexcept override;
  void abort() noexcept override;
  std::string pathTo(int peer) const override;

  /// Config: HETCCL_RMA_PIECE_BYTES, HETCCL_RMA_PACK_BYTES.
  uint64_t pieceMax() const { return pieceMax_; }

 private:
  RmaService(Communicator& comm);
  void start(Communicator& comm);
  /// Throws when the service cannot take new work (stopped, aborted), or when `peer` (>= 0) failed.
  void checkOpen(int peer) const;  // mu_ held
  std::string peerName(int peer) const;
  void enqueue(int peer, std::shared_ptr<OutMsg> msg);  // mu_ held
  /// A request about to start holds `mem` (pending + 1) until finishRequest; InvalidArgument once `mem`
  /// was deregistered (the handle may have been looked up before). mu_ held.
  void holdRegistration(LocalMem& mem);
  void finishRequest(Request& req, Result code, const std::string& message);  // mu_ held
  /// The request and its message of a put/get (no lock; not yet numbered nor queued).
  std::shared_ptr<Request> makeTransfer(bool isGet, const RemoteMem& remote, const std::vector<Range>& ranges,
                                        const std::shared_ptr<LocalMem>& local, std::shared_ptr<OutMsg>& msg);
  /// Numbers `req`, registers it as pending (deadline from now) and queues `msg` to its peer. mu_ held.
  void submit(const std::shared_ptr<Request>& req, const std::shared_ptr<OutMsg>& msg);

  // --- stream-ordered (stream_ops.cc) ---
  /// The GPU runtime for a stream-ordered call on `stream`; throws InvalidUsage (no GPU, capturing).
  device::GpuRuntime& streamRuntime(void* stream, const char* what) const;
  /// Queues the op's stream operations and hands it to the progress thread.
  void queueOnStream(const std::shared_ptr<StreamOp>& op);
  /// Progress thread: starts the ops whose stream got there, fails those past reachBy, recycles slots.
  bool progressStreams();
  /// Ends a stream op that failed (its request, if any, fails too): reported, then released. mu_ held.
  void failStreamOp(const std::shared_ptr<StreamOp>& op, Result code, const std::string& why);
  /// Reports the failed ops to the sink, then writes their "done" words. No lock held.
  void flushStreamFailures() noexcept;
  /// stop(): waits (bounded) until every released stream went past its wait, so that the slots can be
  /// freed; else the pool is leaked.
  void waitStreamsPassed() noexcept;
  void progressLoopBody();

  // --- the window path between ranks of one host (window_path.cc) ---
  /// Collective: creates and maps the windows of the pairs of this host that HETCCL_RMA_WINDOW selects
  /// (a pair whose window cannot be made on either side keeps the connections, logged at INFO).
  void setUpWindows(bootstrap::Bootstrap& boot);
  /// Queues the copies of the next chunks of `msg` into the window while slots are free and publishes each
  /// chunk once its copies are done, in order (`moved` set when anything moved); true once every byte of
  /// it is published.
  bool sendWindowChunks(Channel& ch, OutMsg& msg, bool& moved);
  /// Queues the copies out of every published chunk of the incoming transfer and releases each once they
  /// are done, in order; finishes the transfer when every chunk is released.
  bool recvWindowChunks(int peer, Channel& ch);
  /// Runs `copies` of a window chunk: host ones at once (returns nullptr), device ones queued on the
  /// channel's window stream with event `eventIndex` recorded after them (returned).
  void* queueChunk(Channel& ch, MemKind kind, const std::vector<MemoryAccess::Copy>& copies, size_t eventIndex);

  // --- the device-to-device path between GPU ranks of one vendor on one host (peer_copy.cc) ---
  /// Collective: agrees, per direction, where the target maps the initiator's device allocations.
  void setUpPeerCopies(bootstrap::Bootstrap& boot);
  /// Registration: exports the IPC handle of a device registration when some peer could copy it.
  void exportForPeers(LocalMem& mem);
  /// makeTransfer: makes `msg` a kCopiedByTarget transfer of `local` (which has an export).
  void addSource(OutMsg& msg, Request& req, const LocalMem& local);
  /// Progress thread, target side: checks, maps, copies, answers.
  void copyByTarget(int peer, Channel& ch);
  /// Progress thread, target side of an Unmap: closes the mapping, answers Unmapped.
  void unmapForPeer(Channel& ch);

  // --- progress thread (progress.cc) ---
  void progressLoop();
  bool progressSend(int peer, Channel& ch);
  bool progressRecv(int peer, Channel& ch);
  void onHeader(int peer, Channel& ch);
  /// Queues the Notify in ch.header; false (held: the channel reads nothing more) while the queue is full.
  bool queueNote(int peer, Channel& ch);
  void onTable(int peer, Channel& ch);
  void startIncoming(int peer, Channel& ch);
  void finishIncoming(int peer, Channel& ch);
  void failPeer(int peer, const Error& e);
  void releaseChannel(Channel& ch) noexcept;
  void failEverything(Result code, const std::string& why);
  void checkDeadlines();
  std::shared_ptr<Request> takeRequest(uint64_t id);

  const void* owner_;
  int rank_;
  std::vector<PeerInfo> peers_;
  bootstrap::Secret key_;
  CommIdentity identity_{};
  uint64_t pieceMax_, packMax_;
  int64_t timeoutMs_;
  std::string transportSetting_;
  bootstrap::Bootstrap* boot_ = nullptr;  // progress thread only, until stop()
  bool mappingsClosed_ = false;  ///< progress thread: stopping, peers' allocations no longer mapped (peer_copy.cc)
  std::unique_ptr<MemoryAccess> memory_;
  RegionTable regions_;
  std::unique_ptr<transport::LinkSet> links_;
  std::vector<std::string> paths_;

  mutable std::mutex mu_;
  std::condition_variable cv_;    // requests finished, notifications arrived, state changes
  std::condition_variable wake_;  // the progress thread: new work
  bool kicked_ = false;
  bool stopping_ = false, stopped_ = false;
  std::atomic<bool> aborted_{false};
  std::string stopReason_;
  std::vector<Channel> channels_;
  std::vector<std::optional<PeerError>> dead_;  ///< per peer: why its channel is closed
  std::unordered_map<uint64_t, std::shared_ptr<Request>> pending_;
  uint64_t nextId_ = 1;
  NoteQueue notes_;  ///< received notifications (indexed by sender and tag; HETCCL_RMA_NOTIFY_QUEUE at most)
  bool notesFullLogged_ = false;
  // stream-ordered operations (guarded by mu_, except flags_ which locks itself)
  std::unique_ptr<StreamFlags> flags_;
  FailureSink onStreamFailure_;  ///< cleared by stop()
  std::deque<std::shared_ptr<StreamOp>> streamWaiting_;  ///< queued on their streams, not reached yet (call order)
  struct StreamFailure {
    std::shared_ptr<StreamOp> op;
    Result code;
    std::string message;
  };
  std::vector<StreamFailure> streamFailed_;  ///< to report, then release
  std::vector<std::shared_ptr<StreamOp>> streamPassing_;  ///< released; slot reused once the stream passed
  uint64_t streamSeq_ = 0;
  std::atomic<bool> streamBusy_{false};  ///< anything of the above non-empty (the loop polls faster)
  std::thread thread_;
};

}  // namespace hetccl::rma
