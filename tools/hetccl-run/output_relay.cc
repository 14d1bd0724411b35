#include "hetccl-run/output_relay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace hetccl::run {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

/// Writes everything, retrying on EINTR; gives up silently when the destination is gone (EPIPE etc.):
/// losing output must not stop the supervision of the ranks.
void writeAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = ::write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    len -= static_cast<size_t>(n);
  }
}

}  // namespace

OutputRelay::~OutputRelay() { closeAll(); }

void OutputRelay::add(int rank, int fd, int destinationFd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  streams_.push_back({rank, fd, destinationFd, {}});
}

std::vector<int> OutputRelay::openFds() const {
  std::vector<int> fds;
  for (const Stream& s : streams_) fds.push_back(s.fd);
  return fds;
}

void OutputRelay::emit(const Stream& s, std::string_view line) {
  std::string out = "[" + std::to_string(s.rank) + "] ";
  out.append(line);
  out.push_back('\n');
  writeAll(s.destinationFd, out.data(), out.size());
}

void OutputRelay::onReadable(int fd) {
  for (size_t i = 0; i < streams_.size(); ++i) {
    Stream& s = streams_[i];
    if (s.fd != fd) continue;
    char buf[kReadChunk];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {  // end of file, or an error: the stream is over either way
      close(i);
      return;
    }
    s.pending.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1)
      emit(s, std::string_view(s.pending).substr(start, nl - start));
    s.pending.erase(0, start);
    if (s.pending.size() >= kReadChunk) {  // an endless line: pass it on in pieces
      emit(s, s.pending);
      s.pending.clear();
    }
    return;
  }
}

void OutputRelay::close(size_t index) {
  Stream& s = streams_[index];
  if (!s.pending.empty()) emit(s, s.pending);
  ::close(s.fd);
  streams_.erase(streams_.begin() + static_cast<std::ptrdiff_t>(index));
}

void OutputRelay::closeAll() {
  while (!streams_.empty()) close(streams_.size() - 1);
}

}  // namespace hetccl::run
