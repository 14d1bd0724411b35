#include "hetccl-run/run_options.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>

#include "common/env_reader.hpp"
#include "core/error.hpp"

namespace hetccl::run {
namespace {

constexpr long long kMaxLocalRanks = 4096;

double parseSeconds(const std::string& option, const std::string& text) {
  char* end = nullptr;
  double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (std::isnan(value) || *end != '\0' || !std::isfinite(value) || value < 0 || value > 1e7)
    throw InvalidArgument(concat(option, " '", text, "' is not a number of seconds (0 .. 1e7, fractions allowed)"));
  return value;
}

/// Walks the arguments, splitting "--opt=value" and "-nVALUE" forms.
class ArgCursor {
 public:
  explicit ArgCursor(const std::vector<std::string>& args) : args_(args) {}
  bool done() const { return pos_ >= args_.size(); }
  const std::string& peek() const { return args_[pos_]; }
  /// Consumes the current argument as an option name, keeping any attached value for value().
  std::string takeOption() {
    std::string arg = args_[pos_++];
    attached_.reset();
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        attached_ = arg.substr(eq + 1);
        arg.resize(eq);
      }
    } else if (arg.size() > 2 && arg != "-np") {  // "-n4"
      attached_ = arg.substr(2);
      arg.resize(2);
    }
    return arg;
  }
  /// The option's value: attached, or the next argument.
  std::string value(const std::string& option) {
    if (attached_) return *std::exchange(attached_, std::nullopt);
    if (done()) throw InvalidArgument(concat("option ", option, " needs a value"));
    return args_[pos_++];
  }
  /// Throws when a flag without value got one attached ("--prefix=1").
  void noValue(const std::string& option) const {
    if (attached_) throw InvalidArgument(concat("option ", option, " takes no value"));
  }
  std::vector<std::string> rest() const { return {args_.begin() + pos_, args_.end()}; }
  void skip() { ++pos_; }

 private:
  const std::vector<std::string>& args_;
  size_t pos_ = 0;
  std::optional<std::string> attached_;
};

int parseCount(const std::string& option, const std::string& text, long long lo) {
  return static_cast<int>(tools::parseDecimal(option, text, lo, kMaxLocalRanks));
}

/// Domain count and layout must agree; resolves the count from a list of sizes.
void resolveDomains(RunOptions& o, std::optional<int> domainsGiven, bool layoutGiven) {
  if (o.layout.kind == LayoutKind::Sizes) {
    int listed = static_cast<int>(o.layout.sizes.size());
    if (domainsGiven && *domainsGiven != listed)
      throw InvalidArgument(concat("--layout lists ", listed, " domain sizes but --domains is ", *domainsGiven));
    o.domains = listed;
  } else {
    o.domains = domainsGiven.value_or(0);
    if (layoutGiven && o.domains == 0)
      throw InvalidArgument("--layout round-robin/blocks needs --domains K (K >= 1)");
  }
  if (o.domains > 0) assignDomains(o.nranks, o.domains, o.layout);  // throws when they do not fit
  if (o.hostIds > 0) assignHosts(o.nranks, o.hostIds);
}

}  // namespace

RunOptions parseRunOptions(const std::vector<std::string>& args) {
  RunOptions o;
  std::optional<int> domainsGiven;
  bool layoutGiven = false;
  ArgCursor cur(args);
  while (!cur.done()) {
    const std::string& arg = cur.peek();
    if (arg == "--") {
      cur.skip();
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the command starts here
    std::string opt = cur.takeOption();
    if (opt == "-n" || opt == "-np" || opt == "--nranks") o.nranks = parseCount(opt, cur.value(opt), 1);
    else if (opt == "--domains") domainsGiven = parseCount(opt, cur.value(opt), 0);
    else if (opt == "--layout") {
      o.layout = DomainLayout::parse(cur.value(opt));
      layoutGiven = true;
    }
    else if (opt == "--host-ids") o.hostIds = parseCount(opt, cur.value(opt), 0);
    else if (opt == "--grace") o.graceSeconds = parseSeconds(opt, cur.value(opt));
    else if (opt == "--timeout") o.timeoutSeconds = parseSeconds(opt, cur.value(opt));
    else if (opt == "--preload") o.preload = cur.value(opt);
    else if (opt == "-p" || opt == "--prefix") {
      cur.noValue(opt);
      o.prefixOutput = true;
    } else if (opt == "-h" || opt == "--help") {
      cur.noValue(opt);
      o.help = true;
    }
    else throw InvalidArgument(concat("unknown option '", arg, "'"));
  }
  if (o.help) return o;
  o.command = cur.rest();
  if (o.nranks == 0) throw InvalidArgument("missing -n N (the number of ranks to start)");
  if (o.command.empty()) throw InvalidArgument("missing the command to run (hetccl-run -n N [options] [--] CMD ARGS...)");
  resolveDomains(o, domainsGiven, layoutGiven);
  return o;
}

std::string usageText() {
  return "usage: hetccl-run -n N [options] [--] CMD ARGS...\n"
         "Starts N local processes of CMD as the ranks of one hetccl job. Each gets HETCCL_UNIQUE_ID,\n"
         "HETCCL_RANK, HETCCL_NRANKS, HETCCL_LOCAL_RANK and HETCCL_LOCAL_SIZE.\n"
         "  -n, --nranks N     number of ranks (1..4096)\n"
         "  --domains K        set HETCCL_DOMAIN=d0..dK-1 (default 0: leave HETCCL_DOMAIN as it is)\n"
         "  --layout L         rank -> domain: round-robin (default), blocks (contiguous), or sizes\n"
         "                     like 3,1 (ranks 0-2 in d0, rank 3 in d1; must sum to N)\n"
         "  --host-ids M       set HETCCL_HOST_ID=h0..hM-1 round-robin, so ranks act as separate hosts\n"
         "                     (default 0: leave HETCCL_HOST_ID as it is)\n"
         "  --preload LIB      LD_PRELOAD LIB in every rank: a path, or nccl / rccl for the drop-in\n"
         "                     libnccl.so.2 / librccl.so built with this hetccl-run (docs/DROP_IN.md)\n"
         "  -p, --prefix       prefix every output line with [rank]\n"
         "  --grace S          after a rank fails, wait S seconds before terminating the rest (default 30)\n"
         "  --timeout S        terminate every rank after S seconds (exit status 124); default: none\n"
         "  -h, --help         this text\n"
         "Exit status: 0 when every rank succeeded, else the first failing rank's (128+signal when killed).\n";
}

}  // namespace hetccl::run
