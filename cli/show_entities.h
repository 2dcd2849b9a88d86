// `show node`, `show partition`, `show reservation`, `show licenses` and `show config` (scontrol
// show ...) in Slurm's text form, or as JSON.
#pragma once

#include <string>

namespace cohort::cli {

// Every node, or those of the hostlist `names`.
int show_nodes(const std::string& names, bool json);
// Every partition, or the one named.
int show_partitions(const std::string& name, bool json);
// Every reservation, or the one named.
int show_reservations(const std::string& name, bool json);
// Every license, or the one named: its total, and what running jobs hold (scontrol show lic).
int show_licenses(const std::string& name);
// The cluster's configuration as `scontrol show config` prints it, under Slurm's names.
int show_config();

}  // namespace cohort::cli
