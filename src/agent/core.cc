#include "agent/core.hpp"

namespace hetccl::agent {

void AgentCore::finish(Post& post, Post::State state, Result code, const std::string& message) {
  for (const rma::RegionRef& r : post.held) regions.release(r);
  std::lock_guard<std::mutex> lock(mu);
  post.held.clear();
  post.state = state;
  post.code = code;
  post.message = message;
  cv.notify_all();
}

bool AgentCore::awaitEnd(const Post& post) {
  const auto until = post.deadline.at() + std::chrono::seconds(5);
  std::unique_lock<std::mutex> lock(mu);
  const bool ended = cv.wait_until(lock, until, [&] { return post.state != Post::State::Queued && post.state != Post::State::Running; });
  return ended && post.state == Post::State::Done;
}

bool AgentCore::queueNote(Notification note, Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu);
  while (notes.size() >= notifyQueueMax) {
    if (stopping.load() || deadline.expired()) return false;
    cv.wait_for(lock, std::chrono::milliseconds(20));
  }
  notes.push_back(std::move(note));
  cv.notify_all();
  return true;
}

}  // namespace hetccl::agent
