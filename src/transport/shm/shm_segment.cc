#include "transport/shm/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "core/error.hpp"

namespace hetccl::transport::shm {
namespace {

size_t roundUp64(size_t n) { return (n + 63) & ~size_t{63}; }

/// Closes an fd at scope exit (the mapping outlives it).
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

void* mapReadWrite(int fd, size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw SystemError::fromErrno(concat("mmap of shm segment ", name, " (", bytes, " bytes)"), errno);
  return p;
}

}  // namespace

RingGeometry RingGeometry::of(uint32_t slots, uint64_t slotBytes) {
  RingGeometry g{};
  g.infoOffset = roundUp64(sizeof(RingHeader));
  g.dataOffset = roundUp64(g.infoOffset + slots * sizeof(SlotInfo));
  g.totalBytes = g.dataOffset + size_t{slots} * slotBytes;
  return g;
}

ShmSegment ShmSegment::create(const std::string& name, size_t bytes) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw SystemError::fromErrno(concat("shm_open(O_CREAT|O_EXCL) of ", name), errno);
  FdCloser closer{fd};
  try {
    if (::fchmod(fd, 0600) != 0) throw SystemError::fromErrno(concat("fchmod of shm segment ", name), errno);
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0)
      throw SystemError::fromErrno(concat("ftruncate of shm segment ", name, " to ", bytes, " bytes"), errno);
    return ShmSegment(name, mapReadWrite(fd, bytes, name), bytes);
  } catch (...) {
    ::shm_unlink(name.c_str());
    throw;
  }
}

std::optional<ShmSegment> ShmSegment::tryOpen(const std::string& name, size_t minBytes) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw SystemError::fromErrno(concat("shm_open of ", name), errno);
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SystemError::fromErrno(concat("fstat of shm segment ", name), errno);
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    throw InvalidArgument(concat("shm segment ", name, " has owner uid ", st.st_uid, " and mode 0", std::oct,
                                 (st.st_mode & 0777), "; expected this user's uid and mode 0600"));
  if (static_cast<size_t>(st.st_size) < minBytes) return std::nullopt;  // creator has not sized it yet
  size_t bytes = static_cast<size_t>(st.st_size);
  return ShmSegment(name, mapReadWrite(fd, bytes, name), bytes);
}

bool ShmSegment::unlink(const std::string& name) noexcept { return ::shm_unlink(name.c_str()) == 0; }

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : name_(std::move(o.name_)), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    name_ = std::move(o.name_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  if (data_) ::munmap(data_, size_);
}

RingView ShmSegment::ring() const {
  auto* base = static_cast<unsigned char*>(data_);
  auto* header = reinterpret_cast<RingHeader*>(base);
  RingGeometry g = RingGeometry::of(header->slots, header->slotBytes);
  return RingView{header, reinterpret_cast<SlotInfo*>(base + g.infoOffset), base + g.dataOffset, header->slots,
                  header->slotBytes};
}

}  // namespace hetccl::transport::shm
