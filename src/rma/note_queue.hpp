// The received notifications of one RMA service, waiting to be taken (hetcclNotifyPoll / hetcclNotifyWait).
// Two orders over the same entries: arrival order (poll takes the oldest of all) and, per (peer, tag),
// a chain in arrival order (wait takes the oldest matching one). Both operations are O(1): poll's oldest
// entry is always the head of its own chain, and wait finds its chain through a hash map. Entries live in
// a slab of fixed-size nodes (indices, no per-entry allocation); a chain exists only while it has entries.
// At most `cap` entries are held (HETCCL_RMA_NOTIFY_QUEUE): push() refuses beyond it and the progress
// thread then holds back further messages of that peer until some are taken (back-pressure).
// Memory: about 32 bytes per entry plus one hash-map node (~50 bytes) per distinct (peer, tag) queued;
// the slab and the map are freed when the queue empties after holding many.
// Not thread-safe: the service's mutex guards it. Header-only (tests/unit/rma_notes checks its work).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace hetccl::rma {

class NoteQueue {
 public:
  explicit NoteQueue(size_t cap) : cap_(cap) {}

  size_t size() const { return size_; }
  size_t cap() const { return cap_; }
  bool full() const { return size_ >= cap_; }
  /// Entries looked at by take() and popOldest() so far (each O(1): tests count this work).
  uint64_t probes() const { return probes_; }

  /// Appends one notification; false (nothing changed) when full().
  bool push(int peer, uint64_t tag) {
    if (full()) return false;
    uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      i = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    Node& n = nodes_[i];
    n = Node{tag, peer, tail_, kNone, kNone};
    if (tail_ != kNone) nodes_[tail_].next = i;
    tail_ = i;
    if (head_ == kNone) head_ = i;
    auto [it, fresh] = chains_.try_emplace(Key{peer, tag}, Chain{i, i});
    if (!fresh) {
      nodes_[it->second.tail].nextSame = i;
      it->second.tail = i;
    }
    ++size_;
    return true;
  }

  /// Takes the oldest notification of all; false when empty.
  bool popOldest(int& peer, uint64_t& tag) {
    if (head_ == kNone) return false;
    const uint32_t i = head_;
    peer = nodes_[i].peer;
    tag = nodes_[i].tag;
    auto it = chains_.find(Key{peer, tag});  // its chain's head: nothing of that chain is older
    advance(it);
    unlink(i);
    return true;
  }

  /// Takes the oldest notification from `peer` with `tag`; false (nothing changed) when there is none.
  bool take(int peer, uint64_t tag) {
    auto it = chains_.find(Key{peer, tag});
    if (it == chains_.end()) return false;
    const uint32_t i = it->second.head;
    advance(it);
    unlink(i);
    return true;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint64_t tag;
    int peer;
    uint32_t prev, next;  // arrival order
    uint32_t nextSame;    // the next one of the same (peer, tag)
  };
  struct Key {
    int peer;
    uint64_t tag;
    bool operator==(const Key& o) const { return peer == o.peer && tag == o.tag; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.tag * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(static_cast<uint32_t>(k.peer)));
    }
  };
  struct Chain {
    uint32_t head, tail;
  };

  /// Drops the head of chain `it` (one probe).
  void advance(std::unordered_map<Key, Chain, KeyHash>::iterator it) {
    ++probes_;
    const uint32_t next = nodes_[it->second.head].nextSame;
    if (next == kNone)
      chains_.erase(it);
    else
      it->second.head = next;
  }
  /// Removes node i from the arrival order and frees it.
  void unlink(uint32_t i) {
    Node& n = nodes_[i];
    if (n.prev != kNone) nodes_[n.prev].next = n.next; else head_ = n.next;
    if (n.next != kNone) nodes_[n.next].prev = n.prev; else tail_ = n.prev;
    free_.push_back(i);
    if (--size_ == 0 && nodes_.size() > kKeepNodes) {  // emptied after a flood: give the memory back
      std::vector<Node>().swap(nodes_);
      std::vector<uint32_t>().swap(free_);
      std::unordered_map<Key, Chain, KeyHash>().swap(chains_);
    }
  }

  static constexpr size_t kKeepNodes = 4096;
  size_t cap_;
  size_t size_ = 0;
  uint64_t probes_ = 0;
  uint32_t head_ = kNone, tail_ = kNone;
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_;
  std::unordered_map<Key, Chain, KeyHash> chains_;
};

}  // namespace hetccl::rma
