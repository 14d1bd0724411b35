#include "hetccl-info/elf_dynamic.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string_view>

#include "core/error.hpp"

namespace hetccl::info {
namespace {

/// A read-only mapping of a whole file, with bounds-checked access.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw SystemError::fromErrno(concat("cannot open ", path), errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
      ::close(fd);
      throw InvalidArgument(concat(path, " is empty or cannot be read"));
    }
    size_ = static_cast<size_t>(st.st_size);
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (data_ == MAP_FAILED) throw SystemError::fromErrno(concat("cannot map ", path), errno);
  }
  ~MappedFile() { ::munmap(data_, size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// The `count` objects of type T at `offset`; throws when they lie outside the file.
  template <typename T>
  const T* at(uint64_t offset, uint64_t count = 1) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T))
      throw InvalidArgument(concat(path_, ": truncated or corrupt ELF (offset ", offset, ")"));
    return reinterpret_cast<const T*>(static_cast<const char*>(data_) + offset);
  }
  /// The NUL-terminated string at `offset` of the string table [base, base + len).
  std::string string(uint64_t base, uint64_t len, uint64_t offset) const {
    if (offset >= len) throw InvalidArgument(concat(path_, ": string offset outside its table"));
    const char* s = at<char>(base, len) + offset;
    return std::string(s, strnlen(s, len - offset));
  }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

ElfDynamic readElfDynamic(const std::string& path) {
  MappedFile f(path);
  const auto* eh = f.at<Elf64_Ehdr>(0);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shentsize != sizeof(Elf64_Shdr))
    throw InvalidArgument(concat(path, " is not a little-endian ELF64 file"));
  const auto* sections = f.at<Elf64_Shdr>(eh->e_shoff, eh->e_shnum);
  auto linked = [&](const Elf64_Shdr& s) -> const Elf64_Shdr& {
    if (s.sh_link >= eh->e_shnum) throw InvalidArgument(concat(path, ": section link out of range"));
    return sections[s.sh_link];
  };

  ElfDynamic out;
  bool sawDynamic = false;
  for (int i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& s = sections[i];
    if (s.sh_type == SHT_DYNAMIC) {
      sawDynamic = true;
      const Elf64_Shdr& str = linked(s);
      const auto* dyn = f.at<Elf64_Dyn>(s.sh_offset, s.sh_size / sizeof(Elf64_Dyn));
      for (uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k) {
        auto text = [&] { return f.string(str.sh_offset, str.sh_size, dyn[k].d_un.d_val); };
        if (dyn[k].d_tag == DT_NEEDED) out.needed.push_back(text());
        if (dyn[k].d_tag == DT_RPATH) out.rpath = text();
        if (dyn[k].d_tag == DT_RUNPATH) out.runpath = text();
      }
    } else if (s.sh_type == SHT_DYNSYM) {
      const Elf64_Shdr& str = linked(s);
      const auto* syms = f.at<Elf64_Sym>(s.sh_offset, s.sh_size / sizeof(Elf64_Sym));
      for (uint64_t k = 1; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
        const int bind = ELF64_ST_BIND(syms[k].st_info);
        if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
        (syms[k].st_shndx == SHN_UNDEF ? out.imports : out.exports)
            .push_back(f.string(str.sh_offset, str.sh_size, syms[k].st_name));
      }
    }
  }
  if (!sawDynamic) throw InvalidArgument(concat(path, " has no dynamic section (not a shared object?)"));
  out.mentionsNcclVersion = f.bytes().find("NCCL version") != std::string_view::npos;
  return out;
}

}  // namespace hetccl::info
