// A per-machine tuning table (HETCCL_TUNING_FILE): which all-reduce algorithm host calls take up to which
// size, measured for one layout of ranks on one machine (bench/run_algo_sweep.py --write-tuning writes it).
// Under HETCCL_ALGO=auto its bands come before the built-in rules of algo::chooseAllReduce; sizes above
// its last band, and layouts it has no rows for, keep the built-in rules.
//
// The file, one row per line, '#' starts a comment, fields separated by blanks:
//
//     # collective  ranks  domains  hosts  transport  up_to_bytes  algorithm
//     all_reduce    8      8        1      shm        65536        rd
//     all_reduce    8      8        1      shm        1048576      tree
//     all_reduce    8      8        1      shm        max          ring
//
// A row applies to a communicator of `ranks` ranks in `domains` domains on `hosts` hosts whose transport
// setting (HETCCL_TRANSPORT, or the communicator's option) is `transport`, for calls of up to
// `up_to_bytes` bytes (K/M/G suffixes; `max`: any size) not taken by an earlier row of that layout. Rows
// of one layout are in increasing size order. Only all_reduce can be tuned; algorithms are ring, tree,
// rd, hier (hier only with several domains).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "algo/tuning.hpp"

namespace hetccl::algo {

/// The layout a row applies to.
struct TuningLayout {
  int ranks = 0;
  int domains = 0;
  int hosts = 0;
  std::string transport;  ///< auto, shm, tcp or ucx
  bool operator==(const TuningLayout&) const = default;
};

struct TuningRow {
  TuningLayout layout;
  TuningBand band;
};

/// Every row of a tuning file's text, in file order. Throws InvalidArgument naming `source`, the line and
/// what is wrong with it (an unknown collective or algorithm, a field missing or out of range, sizes of
/// one layout not increasing, a row after a layout's `max` row).
std::vector<TuningRow> parseTuningTable(std::string_view text, std::string_view source);

/// The all-reduce bands of `rows` for `layout`, in increasing size order (empty: none).
std::vector<TuningBand> bandsFor(const std::vector<TuningRow>& rows, const TuningLayout& layout);

/// The bands in one line, e.g. "rd<=65536 tree<=1048576 ring" ("none" when empty): what the ranks of a
/// communicator compare at creation and what the INFO log shows.
std::string describeBands(const std::vector<TuningBand>& bands);

}  // namespace hetccl::algo
