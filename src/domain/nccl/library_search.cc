#include "domain/nccl/library_search.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::domain::nccl {
namespace {

namespace fs = std::filesystem;

void selfMarker() {}

/// Paths of the objects loaded in this process, in load order.
std::vector<std::string> loadedObjects() {
  std::vector<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && *info->dlpi_name) static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &out);
  return out;
}

bool fileNameStartsWith(const std::string& path, std::string_view prefix) {
  return fs::path(path).filename().string().starts_with(prefix);
}

/// "libnccl.so.2" -> "libnccl.so": matches every version suffix.
std::string_view stem(std::string_view fileName) {
  size_t so = fileName.find(".so");
  return so == std::string_view::npos ? fileName : fileName.substr(0, so + 3);
}

}  // namespace

std::vector<std::string> searchCandidates(const Flavor& flavor, const void* selfAddress) {
  Dl_info self{};
  dladdr(selfAddress ? selfAddress : reinterpret_cast<const void*>(&selfMarker), &self);
  const std::string selfPath = self.dli_fname ? self.dli_fname : "";

  std::vector<std::string> found;
  auto add = [&](const fs::path& p, bool mustExist) {
    std::string s = p.lexically_normal().string();
    if (mustExist && access(s.c_str(), R_OK) != 0) return;
    if (std::find(found.begin(), found.end(), s) == found.end()) found.push_back(s);
  };

  std::vector<const char*> names{flavor.fileName};
  if (flavor.altFileName) names.push_back(flavor.altFileName);
  const auto loaded = loadedObjects();
  for (const auto& obj : loaded)  // 2. already loaded, not us
    if (fileNameStartsWith(obj, stem(flavor.fileName)) && obj != selfPath) add(obj, true);
  for (const auto& obj : loaded) {  // 3. next to a loaded vendor runtime
    if (!fileNameStartsWith(obj, flavor.runtimeStem)) continue;
    fs::path dir = fs::path(obj).parent_path();
    for (const char* name : names) {
      add(dir / name, true);
      add(dir / ".." / ".." / "nccl" / "lib" / name, true);  // pip: nvidia/<pkg>/lib -> nvidia/nccl/lib
    }
  }
  // 4. toolkit folders (CUDA_HOME, ROCM_PATH are the toolkits' variables, not hetccl settings).
  for (const char* name : names) {
    if (const char* home = std::getenv(flavor.homeVariable); home && *home)
      add(fs::path(home) / flavor.homeLibDir / name, true);
    add(fs::path(flavor.defaultHome) / flavor.homeLibDir / name, true);
  }
  for (const char* name : names) add(name, false);  // 5. the loader's search path
  return found;
}

std::shared_ptr<const NcclLibrary> findLibrary(const Flavor& flavor) {
  if (config().isSet(flavor.libVariable)) return NcclLibrary::open(flavor, config().str(flavor.libVariable));

  std::string tried;
  for (const auto& candidate : searchCandidates(flavor)) {
    try {
      return NcclLibrary::open(flavor, candidate);
    } catch (const Error& e) {
      HETCCL_INFO(log::kInit, "skipping ", flavor.name, " candidate ", candidate, ": ", e.what());
      tried += concat("\n  ", candidate, ": ", e.what());
    }
  }
  throw SystemError(concat("no usable ", flavor.name, " library found; set ", flavor.libVariable,
                           " to its path. Tried:", tried));
}

}  // namespace hetccl::domain::nccl
