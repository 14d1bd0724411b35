#include "hetccl-run/preload.hpp"

#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"

namespace hetccl::run {

std::string resolvePreload(const std::string& spec) {
  namespace fs = std::filesystem;
  fs::path path = spec;
  if (spec == "nccl" || spec == "rccl") {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw InvalidArgument(concat("--preload ", spec, ": cannot find hetccl-run's own folder: ", ec.message()));
    // Beside the tools' folder: the build tree (build/tools -> build/dropin) and the pip package (_bin ->
    // dropin); an installed tree keeps them under its library folder (bin -> lib/hetccl/dropin).
    const fs::path prefix = self.parent_path().parent_path();
    const char* name = spec == "nccl" ? "libnccl.so.2" : "librccl.so";
    path = prefix / "dropin" / name;
    const fs::path installed = prefix / HETCCL_INSTALL_LIBDIR / "hetccl" / "dropin" / name;
    if (!fs::exists(path, ec) && fs::exists(installed, ec)) path = installed;
  }
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (ec || !fs::is_regular_file(absolute, ec) || access(absolute.c_str(), R_OK) != 0)
    throw InvalidArgument(concat("--preload: '", absolute.string(), "' is not a readable file",
                                 spec == "nccl" || spec == "rccl" ? " (build the drop-in libraries first)" : ""));
  return absolute.string();
}

std::string preloadValue(const std::string& library, const std::string& inherited) {
  return inherited.empty() ? library : library + ":" + inherited;
}

}  // namespace hetccl::run
