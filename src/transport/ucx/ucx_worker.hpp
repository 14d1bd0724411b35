// One UCP context and worker per ucx Transport (that is, per communicator's LinkSet), shared by its
// listener and connections (shared_ptr: the last of them destroys it), with one progress thread.
//
// Threads: every call into UCP on this worker happens under mutex() (the worker is created
// UCS_THREAD_MODE_SERIALIZED), so UCP's callbacks -- which run inside ucp_worker_progress -- run under it
// too. Progress is made (a) by test()/accept() of any connection, which progress the worker before
// they look at their requests, and (b) by the progress thread, which sleeps on the worker's event fd
// (UCP_FEATURE_WAKEUP; ucp_worker_arm) and wakes on network events, on signal() (called after posting
// operations) and every kIdleMs, so that connection set-up, hellos and rendezvous progress while no
// rank thread calls test() (connect() never waits for the peer). While rank threads call test() (they
// progress themselves), the thread stays out of their way: it sleeps kBusyBackoffMs at a time instead of
// competing for the mutex and the cores (a 2-core machine running several ranks starves otherwise).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/deadline.hpp"
#include "core/peer_info.hpp"
#include "transport/ucx/ucp_api.hpp"

namespace hetccl::transport::ucx {

/// Failure state of one endpoint, written by UCP's error callback (UCP_ERR_HANDLING_MODE_PEER).
struct EpState {
  std::atomic<int> status{api::UCS_OK};
};

/// One UCP operation in flight: posted with a completion callback that records status and length here.
/// Owned by whoever posted it; handed to Worker::retire() when its owner goes before it completed.
struct Op {
  void* request = nullptr;  ///< non-null while UCP still owns the operation
  int status = api::UCS_INPROGRESS;
  size_t length = 0;  ///< receives: bytes that arrived
  api::TagRecvInfo info{};
  bool pending() const { return status == api::UCS_INPROGRESS; }
};

class Worker {
 public:
  /// What the process's UCX can do (queried once per process with a throw-away context).
  struct Capabilities {
    std::string version;      ///< "1.13.1 (libucp.so.0)"
    std::string memoryTypes;  ///< "host, cuda, ..." from ucp_context_query
    bool cuda = false, rocm = false;
  };

  /// Loads libucp and creates a context (TAG | STREAM | WAKEUP) and a worker; starts the progress
  /// thread. UCX reads its own UCX_* variables (UCX_TLS, UCX_NET_DEVICES, ...) as usual; HETCCL_NET_DEVICES
  /// becomes UCX_NET_DEVICES when UCX_NET_DEVICES is unset. Throws SystemError when UCX fails.
  static std::shared_ptr<Worker> create(const api::Ucp& ucp, int rank);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  const api::Ucp& ucp() const { return ucp_; }
  void* handle() const { return worker_; }  ///< ucp_worker_h; use under mutex()
  std::mutex& mutex() { return mutex_; }
  pid_t pid() const { return pid_; }

  /// Progresses until UCP reports nothing more to do (bounded). Caller holds mutex().
  void progressLocked();
  /// Wakes the progress thread (after posting operations). Any thread, with or without mutex().
  void signal();

  /// Creates an endpoint with peer failure detection; `params` gets the error handler filled in. The
  /// returned EpState lives as long as the worker. Throws SystemError naming `what`. Caller holds mutex().
  void* createEndpoint(api::EpParams params, EpState** state, const std::string& what);
  /// Closes `ep`: force = cancel what is in flight at once (failed or abandoned connections), else flush
  /// it first (what was sent still arrives, as with a closed socket). The close completes in the
  /// background; the worker's destructor waits up to kCloseMs (at most HETCCL_TIMEOUT) for the rest.
  /// Caller holds mutex().
  void closeEndpoint(void* ep, bool force);
  /// Takes over `op` (still owned by UCP): kept alive until it completes, or until the worker is gone.
  /// `extra` (a buffer UCP may still write, e.g. a hello) lives as long. Caller holds mutex().
  void retire(std::unique_ptr<Op> op, std::shared_ptr<void> extra = nullptr);

  /// Called on every round of the progress thread, under mutex() (the listeners read hellos there).
  void addService(void* key, std::function<void()> fn);
  void removeService(void* key);  ///< caller holds mutex()

  /// Completion callbacks for operations posted with an Op as user data.
  static void onSend(void* request, api::ucs_status_t status, void* op);
  static void onTagRecv(void* request, api::ucs_status_t status, const api::TagRecvInfo* info, void* op);
  static void onStreamRecv(void* request, api::ucs_status_t status, size_t length, void* op);

  static constexpr int kIdleMs = 20;
  static constexpr int kBusyBackoffMs = 2;
  static constexpr int kCloseMs = 3000;
  static constexpr int kDiscardMs = 2000;               ///< discardUnexpectedLocked() at destroy, at most
  static constexpr size_t kDiscardSinkBytes = 64 << 10;  ///< its receive buffer

 private:
  Worker(const api::Ucp& ucp, void* context, void* worker, int efd);
  void run();
  void reapLocked();
  /// Receives and drops the messages still in UCX's unexpected queue (sent to this rank, never received:
  /// e.g. notifications a peer sent while the RMA queue's cap held them back), until none is left or `d`
  /// expires; returns how many. UCX would warn once per such message at worker destroy ("unexpected
  /// tag-receive descriptor ... was not matched"): 200,000 lines for 200,000 messages. Caller holds mutex_.
  size_t discardUnexpectedLocked(const Deadline& d);

  const api::Ucp& ucp_;
  void* context_;
  void* worker_;
  int efd_;  ///< the worker's event fd, or -1 (then the thread polls every millisecond)
  pid_t pid_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<EpState>> eps_;
  std::vector<void*> closing_;  ///< close requests in flight
  struct Retired {
    std::unique_ptr<Op> op;
    std::shared_ptr<void> extra;
  };
  std::vector<Retired> retired_;
  std::vector<std::pair<void*, std::function<void()>>> services_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> lastProgressNs_{0};  ///< when a connection's test()/accept() last progressed
  std::thread thread_;  // last
};

/// Availability of the ucx transport in this process: the loaded table, or null with `why` (libucp
/// missing or unusable, or no UCP context can be created). Decided once per process (HETCCL_UCX is the
/// caller's business: transport/links/link_set.cc).
const api::Ucp* availableUcp(std::string* why, Worker::Capabilities* caps = nullptr);

}  // namespace hetccl::transport::ucx
