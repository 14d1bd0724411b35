#include "common/slurm_lists.hpp"

#include <optional>

#include "common/env_reader.hpp"
#include "core/error.hpp"

namespace hetccl::tools {
namespace {

/// The first comma-separated entry at bracket depth 0; checks that brackets match in that entry.
std::string_view firstTopLevelEntry(std::string_view what, std::string_view list) {
  int depth = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (c == '[') {
      if (++depth > 1) throw InvalidArgument(concat(what, "='", list, "' has nested '[' brackets"));
    } else if (c == ']') {
      if (--depth < 0) throw InvalidArgument(concat(what, "='", list, "' has a ']' without '['"));
    } else if (c == ',' && depth == 0) {
      return list.substr(0, i);
    }
  }
  if (depth != 0) throw InvalidArgument(concat(what, "='", list, "' has a '[' without ']'"));
  return list;
}

}  // namespace

std::string firstHostOfNodeList(std::string_view what, std::string_view nodeList) {
  std::string_view entry = firstTopLevelEntry(what, nodeList);
  if (entry.empty()) throw InvalidArgument(concat(what, "='", nodeList, "' does not start with a host name"));
  std::string host;
  size_t i = 0;
  while (i < entry.size()) {
    if (entry[i] != '[') {
      host += entry[i++];
      continue;
    }
    size_t close = entry.find(']', i);
    std::string_view range = entry.substr(i + 1, close - i - 1);
    std::string_view first = range.substr(0, range.find_first_of(",-"));
    if (first.empty()) throw InvalidArgument(concat(what, "='", nodeList, "' has an empty bracket range"));
    host += first;
    i = close + 1;
  }
  return host;
}

int tasksOnNode(std::string_view what, std::string_view tasksPerNode, int nodeIndex) {
  int firstNodeOfEntry = 0;
  std::optional<int> found;
  std::string_view rest = tasksPerNode;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    int repeat = 1;
    size_t paren = entry.find('(');
    if (paren != std::string_view::npos) {
      std::string_view rep = entry.substr(paren);  // "(xN)"
      if (rep.size() < 4 || rep.substr(0, 2) != "(x" || rep.back() != ')')
        throw InvalidArgument(concat(what, "='", tasksPerNode, "': expected COUNT or COUNT(xREPEAT), got '",
                                     entry, "'"));
      repeat = static_cast<int>(parseDecimal(what, rep.substr(2, rep.size() - 3), 1, 1 << 20));
      entry = entry.substr(0, paren);
    }
    int count = static_cast<int>(parseDecimal(what, entry, 1, 1 << 20));
    if (!found && nodeIndex < firstNodeOfEntry + repeat) found = count;  // parse on: validate the whole list
    firstNodeOfEntry += repeat;
  }
  if (found) return *found;
  throw InvalidArgument(concat(what, "='", tasksPerNode, "' lists ", firstNodeOfEntry,
                               " nodes; node index ", nodeIndex, " is not among them"));
}

}  // namespace hetccl::tools
