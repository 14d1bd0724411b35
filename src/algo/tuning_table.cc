#include "algo/tuning_table.hpp"

#include <charconv>
#include <sstream>

#include "core/error.hpp"

namespace hetccl::algo {
namespace {

constexpr std::string_view kTransports[] = {"auto", "shm", "tcp", "ucx"};
constexpr int kFields = 7;

// A whole decimal number in [lo, hi], or nothing.
bool parseInt(std::string_view s, long long lo, long long hi, long long& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && out >= lo && out <= hi;
}

// "65536", "64K", "4M", "1G" or "max".
bool parseBytes(std::string_view s, size_t& out) {
  if (s == "max") {
    out = TuningBand::kAnySize;
    return true;
  }
  size_t shift = 0;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) {
    shift = s.back() == 'K' ? 10 : s.back() == 'M' ? 20 : 30;
    s.remove_suffix(1);
  }
  long long v = 0;
  if (!parseInt(s, 1, (1LL << 50) >> shift, v)) return false;
  out = static_cast<size_t>(v) << shift;
  return true;
}

std::vector<std::string> fieldsOf(std::string_view line) {
  std::istringstream in{std::string(line.substr(0, line.find('#')))};
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  return fields;
}

}  // namespace

std::vector<TuningRow> parseTuningTable(std::string_view text, std::string_view source) {
  std::vector<TuningRow> rows;
  int lineNo = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineNo;
    const std::vector<std::string> f = fieldsOf(line);
    if (f.empty()) continue;
    auto fail = [&](const std::string& what) {
      return InvalidArgument(concat("tuning file ", source, ", line ", lineNo, ": ", what,
                                    " (expected: all_reduce RANKS DOMAINS HOSTS TRANSPORT UP_TO_BYTES ALGORITHM)"));
    };
    if (static_cast<int>(f.size()) != kFields) throw fail(concat(f.size(), " fields, not ", kFields));
    if (f[0] != "all_reduce") throw fail(concat("collective '", f[0], "' cannot be tuned (only all_reduce)"));
    long long ranks = 0, domains = 0, hosts = 0;
    if (!parseInt(f[1], 1, 1 << 20, ranks)) throw fail(concat("ranks '", f[1], "' is not a number from 1"));
    if (!parseInt(f[2], 1, ranks, domains)) throw fail(concat("domains '", f[2], "' is not a number from 1 to ", ranks));
    if (!parseInt(f[3], 1, ranks, hosts)) throw fail(concat("hosts '", f[3], "' is not a number from 1 to ", ranks));
    bool knownTransport = false;
    for (std::string_view t : kTransports) knownTransport |= f[4] == t;
    if (!knownTransport) throw fail(concat("transport '", f[4], "' is not one of auto, shm, tcp, ucx"));
    TuningRow row{TuningLayout{static_cast<int>(ranks), static_cast<int>(domains), static_cast<int>(hosts), f[4]}, {}};
    if (!parseBytes(f[5], row.band.maxBytes))
      throw fail(concat("size '", f[5], "' is not a byte count from 1 (K/M/G suffixes) or max"));
    try {
      row.band.algo = parseAlgoChoice(f[6]);
    } catch (const InvalidArgument&) {
      row.band.algo = AlgoChoice::Auto;
    }
    if (row.band.algo == AlgoChoice::Auto) throw fail(concat("algorithm '", f[6], "' is not one of ring, tree, rd, hier"));
    if (row.band.algo == AlgoChoice::Hier && domains == 1) throw fail("hier needs several domains");
    const std::vector<TuningBand> before = bandsFor(rows, row.layout);
    if (!before.empty() && before.back().maxBytes >= row.band.maxBytes)
      throw fail(before.back().maxBytes == TuningBand::kAnySize
                     ? std::string("a row after this layout's max row")
                     : concat("size ", f[5], " is not above this layout's previous row (", before.back().maxBytes, ")"));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<TuningBand> bandsFor(const std::vector<TuningRow>& rows, const TuningLayout& layout) {
  std::vector<TuningBand> bands;
  for (const TuningRow& r : rows)
    if (r.layout == layout) bands.push_back(r.band);
  return bands;
}

std::string describeBands(const std::vector<TuningBand>& bands) {
  if (bands.empty()) return "none";
  std::string out;
  for (const TuningBand& b : bands) {
    if (!out.empty()) out += ' ';
    out += algoChoiceName(b.algo);
    if (b.maxBytes != TuningBand::kAnySize) out += concat("<=", b.maxBytes);
  }
  return out;
}

}  // namespace hetccl::algo
