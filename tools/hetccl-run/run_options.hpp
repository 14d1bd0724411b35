// hetccl-run's command line: hetccl-run -n N [options] [--] CMD ARGS...
#pragma once

#include <string>
#include <vector>

#include "hetccl-run/domain_layout.hpp"

namespace hetccl::run {

struct RunOptions {
  int nranks = 0;                 ///< -n N: processes to start, >= 1
  int domains = 0;                ///< --domains K: HETCCL_DOMAIN=d0..dK-1; 0 leaves HETCCL_DOMAIN as it is
  DomainLayout layout;            ///< --layout: how ranks map to domains
  int hostIds = 0;                ///< --host-ids M: HETCCL_HOST_ID=h0..hM-1; 0 leaves HETCCL_HOST_ID as it is
  bool prefixOutput = false;      ///< -p/--prefix: "[rank] " before every output line
  double graceSeconds = 30;       ///< --grace S: wait after a rank failed before terminating the rest
  double timeoutSeconds = 0;      ///< --timeout S: terminate everything after S seconds; 0 = never
  std::string preload;            ///< --preload LIB: library put first in every rank's LD_PRELOAD ("" = none)
  std::vector<std::string> command;  ///< CMD ARGS...
  bool help = false;              ///< -h/--help: print usage and exit
};

/// Parses the arguments after argv[0]. Options come before the command; the first argument that is
/// not an option (or everything after "--") is the command. Values go as "-n 4", "-n4", "--domains 2"
/// or "--domains=2". Without --domains, a --layout of sizes ("3,1") sets the domain count.
/// Throws InvalidArgument naming the option and what it expects (missing -n, no command, bad numbers,
/// unknown options, a layout that does not fit the ranks).
RunOptions parseRunOptions(const std::vector<std::string>& args);

/// The usage text printed by --help and after an argument error.
std::string usageText();

}  // namespace hetccl::run
