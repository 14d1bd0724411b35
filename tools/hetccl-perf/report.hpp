// Output of hetccl-perf: the nccl-tests text table, JSON, and an SVG plot of bus bandwidth.
#pragma once

#include <cstdio>
#include <string>

#include "perf_options.hpp"
#include "perf_result.hpp"

namespace hetccl::perf {

/// Prints the header lines (options, ranks, column titles) as nccl-tests does.
void printHeader(std::FILE* out, const PerfOptions& options, const PerfRun& run);
/// Prints one row of the table (call as each size completes).
void printRow(std::FILE* out, const PerfRun& run, const SizeResult& row);
/// Prints "# Out of bounds values" and "# Avg bus bandwidth".
void printFooter(std::FILE* out, const PerfRun& run);
/// The verdict line: "# hetccl-perf: PASS|FAIL|UNCHECKED: what ran and was checked, ranks per domain"; then a
/// note when more ranks share this host than it has cores (`coresHere`): the times are then the processes
/// taking turns on the cores, not the bandwidth of the links.
void printVerdict(std::FILE* out, const PerfOptions& options, const PerfRun& run, unsigned coresHere);
/// CPU cores this process may run on (sched_getaffinity), at least 1.
unsigned onlineCores();

/// The whole run as JSON text.
std::string toJson(const PerfOptions& options, const PerfRun& run);
/// An SVG line chart of busbw (GB/s) against size (log2 axis), out-of-place and in-place.
std::string toSvgPlot(const PerfRun& run);

/// Writes `text` to `path`; throws std::runtime_error naming the path on failure.
void writeTextFile(const std::string& path, const std::string& text);

}  // namespace hetccl::perf
