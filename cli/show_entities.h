// `show node` and `show partition` (scontrol show node|partition) in Slurm's text form, or
// as JSON.
#pragma once

#include <string>

namespace cohort::cli {

// Every node, or those of the hostlist `names`.
int show_nodes(const std::string& names, bool json);
// Every partition, or the one named.
int show_partitions(const std::string& name, bool json);

}  // namespace cohort::cli
