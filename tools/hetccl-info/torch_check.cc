#include "hetccl-info/torch_check.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "hetccl-info/elf_dynamic.hpp"

namespace hetccl::info {
namespace {

namespace fs = std::filesystem;

/// PyTorch's device library and the vendor library it should load.
struct Target {
  fs::path library;          ///< libtorch_cuda.so or libtorch_hip.so
  std::string vendorSoname;  ///< libnccl.so.2 or librccl.so
  std::string dropinFile;    ///< file name of hetccl's drop-in for it
};

Target findTorchLibrary(const fs::path& given) {
  const std::pair<const char*, const char*> kinds[] = {{"libtorch_cuda.so", "libnccl.so.2"},
                                                       {"libtorch_hip.so", "librccl.so"}};
  auto make = [](const fs::path& p, const char* vendor) { return Target{p, vendor, vendor}; };
  if (fs::is_regular_file(given)) {
    for (auto [file, vendor] : kinds)
      if (given.filename() == file) return make(given, vendor);
    return make(given, "libnccl.so.2");
  }
  for (const fs::path& dir : {given, given / "lib", given / "torch" / "lib"}) {
    for (auto [file, vendor] : kinds)
      if (fs::is_regular_file(dir / file)) return make(dir / file, vendor);
    if (fs::is_regular_file(dir / "libtorch_cpu.so")) return make(dir / "libtorch_cpu.so", "");  // CPU-only build
  }
  throw InvalidArgument(concat("no libtorch_cuda.so or libtorch_hip.so under ", given.string(),
                               " (give site-packages, the torch folder, torch/lib, or the library itself)"));
}

fs::path defaultDropin(const std::string& file) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(file) : self.parent_path().parent_path() / "dropin" / file;
}

std::string joined(const std::vector<std::string>& names, size_t max) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? " " : "") + names[i];
  if (names.size() > max) s += concat(" ... (", names.size() - max, " more)");
  return s;
}

}  // namespace

int torchCheck(const std::vector<std::string>& args) {
  if (args.empty() || args.size() == 2 || args.size() > 3 || (args.size() == 3 && args[1] != "--dropin")) {
    std::fprintf(stderr, "usage: hetccl-info --torch PATH [--dropin LIB]\n");
    return 2;
  }
  try {
    const Target t = findTorchLibrary(args[0]);
    if (t.vendorSoname.empty()) {
      std::printf("library         %s\n", t.library.string().c_str());
      std::printf("verdict         cannot be served: a CPU-only PyTorch (no libtorch_cuda.so or libtorch_hip.so)\n");
      return 1;
    }
    const ElfDynamic torch = readElfDynamic(t.library.string());
    std::vector<std::string> imports;
    for (const auto& s : torch.imports)
      if (s.rfind("nccl", 0) == 0) imports.push_back(s);
    std::sort(imports.begin(), imports.end());
    int definedNccl = 0;
    for (const auto& s : torch.exports) definedNccl += s.rfind("nccl", 0) == 0;
    const bool needs = std::find(torch.needed.begin(), torch.needed.end(), t.vendorSoname) != torch.needed.end();

    std::printf("library         %s\n", t.library.string().c_str());
    std::printf("DT_NEEDED       %s: %s\n", t.vendorSoname.c_str(), needs ? "yes" : "no");
    std::printf("imports         %zu nccl* functions: %s\n", imports.size(), joined(imports, 8).c_str());
    if (!torch.rpath.empty())
      std::printf("DT_RPATH        %s (LD_LIBRARY_PATH cannot override it: use LD_PRELOAD)\n", torch.rpath.c_str());
    if (!torch.runpath.empty()) std::printf("DT_RUNPATH      %s\n", torch.runpath.c_str());
    if (!needs || imports.empty()) {
      const char* why = torch.mentionsNcclVersion || definedNccl
                            ? "NCCL is linked statically into it (it carries NCCL's code): hetccl cannot replace it"
                            : "it does not load NCCL at all (a CPU-only build?)";
      std::printf("verdict         cannot be served: %s\n", why);
      return 1;
    }
    const fs::path dropin = args.size() == 3 ? fs::path(args[2]) : defaultDropin(t.dropinFile);
    const ElfDynamic ours = readElfDynamic(dropin.string());
    const std::set<std::string> exported(ours.exports.begin(), ours.exports.end());
    std::vector<std::string> missing;
    for (const auto& s : imports)
      if (!exported.count(s)) missing.push_back(s);
    std::printf("drop-in         %s exports %zu of the %zu\n", dropin.string().c_str(), imports.size() - missing.size(),
                imports.size());
    if (!missing.empty()) {
      std::printf("verdict         cannot be served by this drop-in: missing %s\n", joined(missing, 20).c_str());
      return 1;
    }
    std::printf("verdict         can be served: LD_PRELOAD=%s (or hetccl-run --preload %s)\n",
                fs::absolute(dropin).lexically_normal().string().c_str(),
                t.dropinFile == "librccl.so" ? "rccl" : "nccl");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetccl-info --torch: %s\n", e.what());
    return 2;
  }
}

}  // namespace hetccl::info
