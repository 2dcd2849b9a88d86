// Turns this machine's hwloc view, or a recorded hwloc XML export, into a NodeTopology.
#pragma once

#include <string>

#include "common/status.h"
#include "common/topology/node_topology.h"

namespace cohort::topology {

// Discovers the machine this process runs on, PCI devices and OS devices included. Honours
// hwloc's own environment (HWLOC_XMLFILE, HWLOC_FSROOT), which is how hwloc itself is tested.
// Fails with kInternal when hwloc cannot build a topology.
Result<NodeTopology> discover_local_topology();

// Loads a topology recorded with `lstopo --of xml` (hwloc v1 or v2 format, as hwloc 2.9
// reads it). Fails with kIoError naming the path when the file cannot be read, and with
// kCorrupt naming the path and hwloc's reason when hwloc rejects its contents.
Result<NodeTopology> load_topology_xml(const std::string& path);

}  // namespace cohort::topology
