// docs/DESIGN.md's path table is generated: representative layouts go through the real selector
// (choosePath, vendorProbeNeeded, withoutDomainVendor) and the rows are rendered as markdown. The test fails
// when the block between `<!-- path-table:begin -->` and `<!-- path-table:end -->` differs from what the
// code decides today; HETCCL_WRITE_DOCS=1 rewrites the block instead:
//
//   HETCCL_WRITE_DOCS=1 ctest --test-dir build -R PathTableDoc
//
// Add a row here when the selector learns a new case; the table printed is the table used.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "comm/path_selector.hpp"
#include "path_facts.hpp"

#ifndef HETCCL_SOURCE_DIR
#error "HETCCL_SOURCE_DIR must name the source tree (tests/CMakeLists.txt)"
#endif

namespace hetccl {
namespace {

using namespace path_test;

/// One representative case: a job, its configuration, the vendor library's availability.
struct Case {
  std::string situation;          ///< in words, for the first column
  std::vector<RankSpec> job;
  std::string gpuExec = "auto";
  std::string vendorCcl = "auto";
  std::vector<int> vendorMissing{};  ///< ranks where the vendor library does not load
  bool sharedGpu = false;            ///< ranks 0 and 1 on one GPU (same host and device index)
  std::string domainVendorFails{};   ///< non-empty: the domains' vendor communicators could not be created
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"no rank has a GPU", {cpu("a", "host"), cpu("a", "host2")}},
      {"one domain, one host, the vendor on every rank", {gpu("a", "cuda"), gpu("a", "cuda"), gpu("a", "cuda")}},
      {"the same, HETCCL_GPU_EXEC=staged (delegation wins)",
       {gpu("a", "cuda"), gpu("a", "cuda"), gpu("a", "cuda")}, "staged"},
      {"one domain over two hosts, the vendor on every rank", {gpu("a", "cuda"), gpu("b", "cuda")}},
      {"a single GPU rank, the vendor loads", {gpu("a", "cuda")}},
      {"a single GPU rank, the vendor missing", {gpu("a", "cuda")}, "auto", "auto", {0}},
      {"one domain, one host, the vendor missing on two ranks",
       {gpu("a", "cuda"), gpu("a", "cuda"), gpu("a", "cuda")}, "auto", "auto", {0, 1}},
      {"one domain, one host, HETCCL_VENDOR_CCL=off", {gpu("a", "cuda"), gpu("a", "cuda"), gpu("a", "cuda")}, "auto", "off"},
      {"one domain over two hosts, the vendor missing on a rank", {gpu("a", "cuda"), gpu("b", "cuda")}, "auto", "auto", {1}},
      {"two domains, one host, the vendor on every rank", {gpu("a", "d0"), gpu("a", "d0"), gpu("a", "d1"), gpu("a", "d1")}},
      {"the same, a domain's vendor communicator cannot be created",
       {gpu("a", "d0"), gpu("a", "d0"), gpu("a", "d1"), gpu("a", "d1")}, "auto", "auto", {}, false,
       "NCCL refused the communicator of domain 'd0'"},
      {"two domains, one host, HETCCL_GPU_EXEC=pipeline",
       {gpu("a", "d0"), gpu("a", "d0"), gpu("a", "d1"), gpu("a", "d1")}, "pipeline"},
      {"two domains, one host, HETCCL_GPU_EXEC=staged", {gpu("a", "d0"), gpu("a", "d0"), gpu("a", "d1"), gpu("a", "d1")}, "staged"},
      {"two domains, one host, the vendor missing on a rank",
       {gpu("a", "d0"), gpu("a", "d0"), gpu("a", "d1"), gpu("a", "d1")}, "auto", "auto", {2}},
      {"two domains, one host, HETCCL_VENDOR_CCL=off", {gpu("a", "d0"), gpu("a", "d0"), gpu("a", "d1"), gpu("a", "d1")}, "auto", "off"},
      {"two domains, one host, two ranks of a domain on one GPU",
       {gpu("a", "d0"), gpu("a", "d0"), gpu("a", "d1"), gpu("a", "d1")}, "auto", "auto", {}, true},
      {"a CUDA domain and a HIP domain on one host",
       {gpu("a", "cuda"), gpu("a", "cuda"), hipGpu("a", "hip"), hipGpu("a", "hip")}},
      {"a domain mixing CUDA and HIP ranks", {gpu("a", "x"), hipGpu("a", "x"), gpu("a", "y")}},
      {"GPU ranks and a CPU rank", {gpu("a", "cuda"), cpu("a", "host"), gpu("a", "cuda")}},
      {"the same, HETCCL_GPU_EXEC=pipeline", {gpu("a", "cuda"), cpu("a", "host"), gpu("a", "cuda")}, "pipeline"},
      {"a domain per host (vendor-homogeneous hosts), the vendor on every rank",
       {gpu("a", "nv"), gpu("a", "nv"), hipGpu("b", "amd"), hipGpu("b", "amd")}},
      {"two domains across two hosts, the vendor on every rank",
       {gpu("a", "d0"), gpu("a", "d1"), gpu("b", "d0"), gpu("b", "d1")}},
      {"two domains across two hosts, the vendor missing on a rank",
       {gpu("a", "d0"), gpu("a", "d1"), gpu("b", "d0"), gpu("b", "d1")}, "auto", "auto", {3}},
      {"two domains across two hosts, HETCCL_VENDOR_CCL=off",
       {gpu("a", "d0"), gpu("a", "d1"), gpu("b", "d0"), gpu("b", "d1")}, "auto", "off"},
      {"two domains across two hosts, HETCCL_GPU_EXEC=pipeline",
       {gpu("a", "d0"), gpu("a", "d1"), gpu("b", "d0"), gpu("b", "d1")}, "pipeline"},
      {"two hosts, two ranks of a domain on one GPU", {gpu("a", "d0"), gpu("a", "d0"), gpu("b", "d1")}, "auto", "auto", {}, true},
  };
  return all;
}

PathFacts factsOf(const Case& c, int rank) {
  PathFacts f = factsFor(c.job, rank, c.gpuExec, c.vendorCcl, c.vendorMissing);
  if (c.sharedGpu) f.peers[1].deviceIndex = f.peers[0].deviceIndex;
  if (!f.vendorName.empty()) f.vendorName = "NCCL";  // shorter in the table than the tests' full description
  return f;
}

/// Rank `rank`'s decision for a case.
PathChoice decideOn(const Case& c, int rank) {
  PathChoice choice = choosePath(factsOf(c, rank));
  if (!c.domainVendorFails.empty()) {
    EXPECT_EQ(choice.path, ExecPath::PipelineWithDomainVendor) << c.situation << ": " << choice.reason;
    choice = withoutDomainVendor(choice, c.domainVendorFails);
  }
  return choice;
}

/// "a.d0 a.d0 b.d1:hip b.host:cpu": each rank's host and domain, its device kind where not CUDA.
std::string ranksOf(const Case& c) {
  std::string out;
  for (size_t r = 0; r < c.job.size(); ++r) {
    const RankSpec& s = c.job[r];
    out += (r ? " " : "") + s.host + "." + s.domain;
    if (s.kind == DeviceKind::Hip) out += ":hip";
    if (s.kind == DeviceKind::Host) out += ":cpu";
  }
  return "`" + out + "`";
}

std::string vendorColumn(const Case& c) {
  const PathFacts f = factsOf(c, 0);
  if (!vendorProbeNeeded(f)) return "not probed";
  if (c.vendorMissing.empty()) return "every rank";
  std::string out = "not on ";
  for (size_t i = 0; i < c.vendorMissing.size(); ++i) out += (i ? ", " : "") + std::to_string(c.vendorMissing[i]);
  return out;
}

std::string escapeCell(std::string text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

/// The table, from the code. Every rank of a case must take the same path (else the test fails).
std::string renderTable() {
  std::ostringstream out;
  out << "<!-- generated by tests/unit/comm/path_table_doc_test.cc from src/comm/path_selector.cc; do not edit:\n"
         "     HETCCL_WRITE_DOCS=1 ctest --test-dir build -R PathTableDoc rewrites it -->\n"
         "| case | ranks (`host.domain`, kind where not CUDA) | HETCCL_GPU_EXEC | HETCCL_VENDOR_CCL | vendor loads "
         "| path | reason (rank 0's INFO line) |\n"
         "|---|---|---|---|---|---|---|\n";
  for (const Case& c : cases()) {
    const PathChoice first = decideOn(c, 0);
    for (int r = 1; r < static_cast<int>(c.job.size()); ++r) {
      const PathChoice other = decideOn(c, r);
      EXPECT_EQ(other.path, first.path) << c.situation << ": rank " << r << " decides otherwise: " << other.reason;
      EXPECT_EQ(other.warn, first.warn) << c.situation << ": rank " << r;
    }
    out << "| " << escapeCell(c.situation) << " | " << ranksOf(c) << " | " << c.gpuExec << " | " << c.vendorCcl
        << " | " << vendorColumn(c) << " | **" << execPathName(first.path) << "**" << (first.warn ? " (WARN)" : "")
        << " | " << escapeCell(first.reason) << " |\n";
  }
  return out.str();
}

constexpr const char* kBegin = "<!-- path-table:begin -->\n";
constexpr const char* kEnd = "<!-- path-table:end -->";

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// `diff -u` of the committed block and the generated one ("" when diff cannot run).
std::string unifiedDiff(const std::string& committed, const std::string& generated) {
  const std::string stem = ::testing::TempDir() + "path_table." + std::to_string(getpid());
  const std::string a = stem + ".in_docs.md", b = stem + ".from_code.md";
  writeFile(a, committed);
  writeFile(b, generated);
  std::string out;
  if (FILE* p = popen(("diff -u '" + a + "' '" + b + "' 2>&1").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  std::remove(a.c_str());
  std::remove(b.c_str());
  return out;
}

TEST(PathTableDoc, DesignMdHoldsTheTableTheSelectorDecides) {
  const std::string path = std::string(HETCCL_SOURCE_DIR) + "/docs/DESIGN.md";
  const std::string doc = readFile(path);
  ASSERT_FALSE(doc.empty()) << "cannot read " << path;
  const size_t begin = doc.find(kBegin);
  ASSERT_NE(begin, std::string::npos) << path << " has no line '" << kBegin << "'";
  const size_t from = begin + std::string(kBegin).size();
  const size_t end = doc.find(kEnd, from);
  ASSERT_NE(end, std::string::npos) << path << " has no '" << kEnd << "' after the begin marker";
  ASSERT_EQ(doc.find(kBegin, end), std::string::npos) << path << " has two path tables";

  const std::string committed = doc.substr(from, end - from);
  const std::string generated = renderTable();
  if (committed == generated) return;
  const char* write = std::getenv("HETCCL_WRITE_DOCS");
  if (write && std::string(write) == "1") {
    writeFile(path, doc.substr(0, from) + generated + doc.substr(end));
    std::printf("rewrote the path table in %s\n", path.c_str());
    return;
  }
  const std::string diff = unifiedDiff(committed, generated);
  ADD_FAILURE() << "docs/DESIGN.md's path table differs from what src/comm/path_selector.cc decides.\n"
                << (diff.empty() ? "committed:\n" + committed + "\ngenerated:\n" + generated : diff)
                << "\nRegenerate it (and commit docs/DESIGN.md):\n"
                << "  HETCCL_WRITE_DOCS=1 ctest --test-dir build -R PathTableDoc\n";
}

}  // namespace
}  // namespace hetccl
