// Boost.Serialization for the plain topology values a node agent registers. Free functions,
// so common/topology stays free of serialization headers.
#pragma once

#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include "common/serialize_fields.h"
#include "common/topology/node_topology.h"

namespace cohort::topology {

template <class Archive>
void serialize(Archive& ar, NumaNode& n, unsigned /*version*/) {
    serialize_fields(ar, n.os_index, n.cpus, n.memory_mib);
}

template <class Archive>
void serialize(Archive& ar, GpuLink& l, unsigned /*version*/) {
    serialize_fields(ar, l.kind, l.links);
}

template <class Archive>
void serialize(Archive& ar, PcieSwitch& s, unsigned /*version*/) {
    serialize_fields(ar, s.id, s.pci_bus_id, s.parent, s.host_bridge);
}

template <class Archive>
void serialize(Archive& ar, Gpu& g, unsigned /*version*/) {
    serialize_fields(ar, g.index, g.pci_bus_id, g.vendor, g.model, g.numa, g.socket, g.local_cpus,
                     g.pcie_path, g.host_bridge, g.nvlink_clique, g.closest_nic);
}

template <class Archive>
void serialize(Archive& ar, Nic& n, unsigned /*version*/) {
    serialize_fields(ar, n.name, n.numa, n.pci_bus_id, n.compute, n.socket, n.pcie_path,
                     n.host_bridge);
}

template <class Archive>
void serialize(Archive& ar, NodeTopology& t, unsigned /*version*/) {
    serialize_fields(ar, t.sockets, t.cores, t.pus, t.memory_mib, t.numa_nodes, t.gpus, t.nics,
                     t.pcie_switches, t.gpu_links, t.link_source);
}

}  // namespace cohort::topology
