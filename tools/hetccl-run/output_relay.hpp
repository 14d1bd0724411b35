// Relays the ranks' captured output (-p/--prefix): every line a rank writes to stdout or stderr is
// written to hetccl-run's own stdout or stderr as "[rank] line", whole lines only, so lines of
// different ranks never interleave mid-line.
#pragma once

#include <string>
#include <vector>

namespace hetccl::run {

class OutputRelay {
 public:
  OutputRelay() = default;
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;
  ~OutputRelay();  ///< flushes partial lines and closes the remaining streams

  /// Starts relaying `fd` (owned from now on; made non-blocking) of `rank` to `destinationFd`.
  void add(int rank, int fd, int destinationFd);
  /// File descriptors still open (to poll for reading).
  std::vector<int> openFds() const;
  bool anyOpen() const { return !streams_.empty(); }
  /// Reads what is available on `fd`, writes out the complete lines; at end of file writes the last
  /// partial line (with a newline added) and closes the stream.
  void onReadable(int fd);
  /// Writes out partial lines and closes every stream (used when giving up on stragglers).
  void closeAll();

 private:
  struct Stream {
    int rank;
    int fd;
    int destinationFd;
    std::string pending;  ///< bytes after the last newline
  };
  void emit(const Stream& s, std::string_view line);
  void close(size_t index);

  std::vector<Stream> streams_;
};

}  // namespace hetccl::run
