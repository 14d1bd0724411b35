// Code objects as the fake sees them: AMDGPU ELF files (e_machine EM_AMDGPU, the target in e_flags'
// EF_AMDGPU_MACH byte) or clang offload bundles of them; the fake reads their symbol names (the kernels
// they contain) and checks that one fits the device. The fake's hiprtc produces such an ELF (no code).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fakehip {

/// EF_AMDGPU_MACH value of "gfx90a" (features after ':' ignored); 0 for an unknown name.
uint32_t machOfArch(const std::string& arch);

struct CodeObject {
  uint32_t mach = 0;
  std::vector<std::string> symbols;
};

/// Reads an image passed to hipModuleLoadData (no size: read as far as the headers say). Returns
/// hipSuccess with `out` the ELF fitting `deviceMach`, hipErrorInvalidImage for something that is
/// neither an AMDGPU ELF nor an offload bundle, hipErrorNoBinaryForGpu when nothing fits the device, -1
/// when the ELF's headers reach past the heap block holding it (a truncated image).
int parseImage(const void* image, uint32_t deviceMach, CodeObject* out, std::string* why);

/// A minimal AMDGPU ELF (ET_DYN, EM_AMDGPU, e_flags = mach) whose .dynsym names `symbols`, and a
/// .comment section with `comment`.
std::vector<char> makeElf(uint32_t mach, const std::vector<std::string>& symbols, const std::string& comment);

}  // namespace fakehip
