// Slurm's compressed list formats, as found in SLURM_NODELIST and SLURM_TASKS_PER_NODE.
// Pure string functions (no environment access) so they can be tested on their own.
#pragma once

#include <string>
#include <string_view>

namespace hetccl::tools {

/// The first host of a Slurm node list: "node[01-04,07],gpu5" -> "node01", "a,b" -> "a",
/// "rack[1-2]-n[3-4]" -> "rack1-n3". Throws InvalidArgument naming `what` (the variable) when the list
/// is empty or its brackets do not match.
std::string firstHostOfNodeList(std::string_view what, std::string_view nodeList);

/// The task count of node `nodeIndex` in a tasks-per-node list: "2(x3),1" means nodes 0..2 run 2
/// tasks and node 3 runs 1. Throws InvalidArgument naming `what` when the list is malformed or does
/// not reach `nodeIndex`.
int tasksOnNode(std::string_view what, std::string_view tasksPerNode, int nodeIndex);

}  // namespace hetccl::tools
