#include "code_object.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <malloc.h>

#include <cstring>

#include <algorithm>

#include "hip_types.hpp"

namespace fakehip {
namespace {

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kMachMask = 0xff;
constexpr char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";  // 24 characters

struct MachName {
  const char* arch;
  uint32_t mach;
};
// LLVM's EF_AMDGPU_MACH_AMDGCN_* values.
constexpr MachName kMachs[] = {
    {"gfx900", 0x2c}, {"gfx906", 0x2f}, {"gfx908", 0x30},  {"gfx90a", 0x3f},  {"gfx940", 0x40},
    {"gfx941", 0x4b}, {"gfx942", 0x4c}, {"gfx950", 0x4f},  {"gfx1010", 0x33}, {"gfx1030", 0x36},
    {"gfx1100", 0x41}, {"gfx1101", 0x46}, {"gfx1102", 0x47}, {"gfx1150", 0x43}, {"gfx1200", 0x48},
    {"gfx1201", 0x4e},
};

/// hipModuleLoadData has no size: a runtime reads as far as the ELF headers say. When the image is a heap
/// block (not inside a loaded object: the plugin's embedded code objects are), the fake checks that those
/// extents lie inside the block, where a real runtime would read past its end.
bool extentFits(const char* base, uint64_t end, std::string* why) {
  Dl_info info;
  if (dladdr(base, &info) != 0) return true;  // static data of a loaded object
  const size_t usable = malloc_usable_size(const_cast<char*>(base));
  if (end <= usable) return true;
  *why = "the image's ELF headers reach byte " + std::to_string(end) + " but its heap block has " +
         std::to_string(usable) + " bytes (a truncated code object: a real runtime reads past the buffer)";
  return false;
}

int parseElf(const char* base, CodeObject* out, std::string* why) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, base, sizeof eh);
  if (!extentFits(base, eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr), why)) return -1;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    *why = "not a 64-bit little-endian ELF";
    return hipErrorInvalidImage;
  }
  if (eh.e_machine != kEmAmdgpu) {
    *why = "ELF e_machine " + std::to_string(eh.e_machine) + " is not EM_AMDGPU (224)";
    return hipErrorInvalidImage;
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 4096) {
    *why = "implausible section headers";
    return hipErrorInvalidImage;
  }
  out->mach = eh.e_flags & kMachMask;
  out->symbols.clear();
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (unsigned i = 0; i < eh.e_shnum; ++i)
    std::memcpy(&sections[i], base + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr));
  uint64_t end = 0;
  for (const Elf64_Shdr& s : sections)
    if (s.sh_type != SHT_NOBITS) end = std::max<uint64_t>(end, s.sh_offset + s.sh_size);
  if (!extentFits(base, end, why)) return -1;
  for (const Elf64_Shdr& s : sections) {
    if ((s.sh_type != SHT_SYMTAB && s.sh_type != SHT_DYNSYM) || s.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strtab = sections[s.sh_link];
    for (uint64_t off = sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, base + s.sh_offset + off, sizeof sym);
      if (sym.st_name == 0 || sym.st_name >= strtab.sh_size) continue;
      out->symbols.emplace_back(base + strtab.sh_offset + sym.st_name);
    }
  }
  return hipSuccess;
}

}  // namespace

uint32_t machOfArch(const std::string& arch) {
  const std::string name = arch.substr(0, arch.find(':'));
  for (const MachName& m : kMachs)
    if (name == m.arch) return m.mach;
  return 0;
}

int parseImage(const void* image, uint32_t deviceMach, CodeObject* out, std::string* why) {
  const char* base = static_cast<const char*>(image);
  if (std::memcmp(base, ELFMAG, SELFMAG) == 0) {
    const int rc = parseElf(base, out, why);
    if (rc == -1) return -1;  // read past the image: the caller counts a bad access
    if (rc) return rc;
    if (out->mach != deviceMach) {
      *why = "code object for EF_AMDGPU_MACH " + std::to_string(out->mach) + ", device is " + std::to_string(deviceMach);
      return hipErrorNoBinaryForGpu;
    }
    return hipSuccess;
  }
  if (std::memcmp(base, kBundleMagic, 24) == 0) {
    uint64_t entries = 0;
    std::memcpy(&entries, base + 24, 8);
    if (entries == 0 || entries > 256) {
      *why = "implausible offload bundle";
      return hipErrorInvalidImage;
    }
    const char* p = base + 32;
    bool any = false;
    for (uint64_t i = 0; i < entries; ++i) {
      uint64_t offset = 0, size = 0, idLen = 0;
      std::memcpy(&offset, p, 8);
      std::memcpy(&size, p + 8, 8);
      std::memcpy(&idLen, p + 16, 8);
      const std::string id(p + 24, idLen);
      p += 24 + idLen;
      if (id.rfind("hip", 0) != 0 || size < sizeof(Elf64_Ehdr)) continue;  // host entry, or empty
      any = true;
      CodeObject co;
      std::string entryWhy;
      if (parseElf(base + offset, &co, &entryWhy) == hipSuccess && co.mach == deviceMach) {
        *out = co;
        return hipSuccess;
      }
    }
    *why = any ? "no entry of the offload bundle fits the device" : "offload bundle without device code";
    return any ? hipErrorNoBinaryForGpu : hipErrorInvalidImage;
  }
  *why = "neither an ELF nor a clang offload bundle";
  return hipErrorInvalidImage;
}

std::vector<char> makeElf(uint32_t mach, const std::vector<std::string>& symbols, const std::string& comment) {
  // Layout: header | .dynstr | .dynsym | .comment | .shstrtab | section headers.
  std::string dynstr(1, '\0');
  std::vector<Elf64_Sym> syms(1);  // the null symbol
  for (const std::string& s : symbols) {
    Elf64_Sym sym{};
    sym.st_name = static_cast<uint32_t>(dynstr.size());
    sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    sym.st_shndx = 1;
    syms.push_back(sym);
    dynstr += s;
    dynstr += '\0';
  }
  const std::string shstrtab = std::string("\0.dynstr\0.dynsym\0.comment\0.shstrtab\0", 36);
  std::vector<char> out(sizeof(Elf64_Ehdr));
  auto append = [&](const void* data, size_t n) {
    const size_t at = out.size();
    out.insert(out.end(), static_cast<const char*>(data), static_cast<const char*>(data) + n);
    while (out.size() % 8) out.push_back('\0');
    return at;
  };
  const size_t dynstrAt = append(dynstr.data(), dynstr.size());
  const size_t dynsymAt = append(syms.data(), syms.size() * sizeof(Elf64_Sym));
  const size_t commentAt = append(comment.c_str(), comment.size() + 1);
  const size_t shstrAt = append(shstrtab.data(), shstrtab.size());
  Elf64_Shdr sh[5] = {};
  sh[1].sh_name = 1; sh[1].sh_type = SHT_STRTAB; sh[1].sh_offset = dynstrAt; sh[1].sh_size = dynstr.size();
  sh[2].sh_name = 9; sh[2].sh_type = SHT_DYNSYM; sh[2].sh_offset = dynsymAt;
  sh[2].sh_size = syms.size() * sizeof(Elf64_Sym); sh[2].sh_link = 1; sh[2].sh_entsize = sizeof(Elf64_Sym);
  sh[3].sh_name = 17; sh[3].sh_type = SHT_PROGBITS; sh[3].sh_offset = commentAt; sh[3].sh_size = comment.size() + 1;
  sh[4].sh_name = 26; sh[4].sh_type = SHT_STRTAB; sh[4].sh_offset = shstrAt; sh[4].sh_size = shstrtab.size();
  const size_t shoff = append(sh, sizeof sh);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_ident[EI_OSABI] = 64;      // ELFOSABI_AMDGPU_HSA
  eh.e_ident[EI_ABIVERSION] = 2;  // code object v4
  eh.e_type = ET_DYN;
  eh.e_machine = kEmAmdgpu;
  eh.e_version = EV_CURRENT;
  eh.e_flags = mach;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 5;
  eh.e_shstrndx = 4;
  eh.e_shoff = shoff;
  std::memcpy(out.data(), &eh, sizeof eh);
  return out;
}

}  // namespace fakehip
