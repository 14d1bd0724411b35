#include "transport/shm/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

/// What a failed reservation of `bytes` for `name` means for the user: how much /dev/shm there is, what
/// this segment needs, and how to give the job more.
std::string reserveFailure(const std::string& name, size_t bytes, int err, const std::string& hint) {
  std::string space = "unknown";
  struct statvfs vfs {};
  if (::statvfs("/dev/shm", &vfs) == 0)
    space = concat(uint64_t{vfs.f_bavail} * vfs.f_frsize, " bytes free of ", uint64_t{vfs.f_blocks} * vfs.f_frsize);
  return concat("cannot reserve ", bytes, " bytes (", (bytes + (1 << 20) - 1) >> 20, " MiB) of shared memory for ",
                name, " in /dev/shm (", space, "): ", std::strerror(err), ". ", hint, hint.empty() ? "" : " ",
                "Give the job a larger /dev/shm (docker run --shm-size=<bytes>; Kubernetes: mount an emptyDir "
                "with medium: Memory and a sizeLimit on /dev/shm), or use HETCCL_TRANSPORT=tcp, or smaller rings "
                "(HETCCL_SHM_SLOTS, HETCCL_SHM_SLOT_BYTES, HETCCL_GPU_SLOTS, HETCCL_GPU_CHUNK_BYTES)");
}

}  // namespace

size_t ringDataOffset(uint32_t slots) { return RingGeometry::of(slots, 0).dataOffset; }

RingGeometry RingGeometry::of(uint32_t slots, uint64_t slotBytes) {
  RingGeometry g{};
  g.infoOffset = roundUp64(sizeof(RingHeader));
  g.dataOffset = roundUp64(g.infoOffset + slots * sizeof(SlotInfo));
  g.totalBytes = g.dataOffset + size_t{slots} * slotBytes;
  return g;
}

ShmSegment ShmSegment::create(const std::string& name, size_t bytes, const std::string& sizingHint) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw SystemError::fromErrno(concat("shm_open(O_CREAT|O_EXCL) of ", name), errno);
  FdCloser closer{fd};
  try {
    if (::fchmod(fd, 0600) != 0) throw SystemError::fromErrno(concat("fchmod of shm segment ", name), errno);
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0)
      throw SystemError::fromErrno(concat("ftruncate of shm segment ", name, " to ", bytes, " bytes"), errno);
    // ftruncate only sets the size: tmpfs allocates pages on first touch and a full /dev/shm then kills
    // the process with SIGBUS. Reserving every page now turns that into an error here.
    int err;
    do err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    while (err == EINTR);
    if (err != 0 && err != EOPNOTSUPP && err != EINVAL) throw SystemError(reserveFailure(name, bytes, err, sizingHint));
    return ShmSegment(name, mapReadWrite(fd, bytes, name), bytes, true);
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
  return ShmSegment(name, mapReadWrite(fd, bytes, name), bytes, false);
}

bool ShmSegment::unlink(const std::string& name) noexcept { return ::shm_unlink(name.c_str()) == 0; }

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : name_(std::move(o.name_)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      ownsName_(std::exchange(o.ownsName_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    if (ownsName_) unlink(name_);
    name_ = std::move(o.name_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    ownsName_ = std::exchange(o.ownsName_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  if (data_) ::munmap(data_, size_);
  if (ownsName_) unlink(name_);
}

RingView ShmSegment::ring() const {
  auto* base = static_cast<unsigned char*>(data_);
  auto* header = reinterpret_cast<RingHeader*>(base);
  RingGeometry g = RingGeometry::of(header->segment.slots, header->segment.slotBytes);
  return RingView{header, reinterpret_cast<SlotInfo*>(base + g.infoOffset), base + g.dataOffset, header->segment.slots,
                  header->segment.slotBytes};
}

}  // namespace hetccl::transport::shm
