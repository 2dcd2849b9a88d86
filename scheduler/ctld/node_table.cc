// Nodes: registration state, liveness and what jobs hold on them.
#include "scheduler/ctld/node_table.h"

#include <algorithm>

#include "scheduler/ctld/gpu_allocation.h"

namespace cohort::ctld {

void refresh_node_state(NodeEntry& node) {
    if (node.info.state == NodeState::kDown) {
        return;
    }
    if (node.info.cpus_alloc <= 0) {
        node.info.state = NodeState::kIdle;
    } else if (node.info.cpus_alloc >= node.info.resources.cpus) {
        node.info.state = NodeState::kAllocated;
    } else {
        node.info.state = NodeState::kMixed;
    }
}

NodeTable::NodeTable(const ClusterConfig& config) {
    const std::vector<std::string> gres_names = config.gres_names();
    nodes_.reserve(config.nodes.size());
    for (const auto& name : config.nodes) {
        NodeEntry node;
        node.info.name = name;
        if (auto declared = config.node_gres.find(name); declared != config.node_gres.end()) {
            node.info.gres = generic_gres_text(declared->second);
            node.gres.assign(gres_names.size(), 0);
            for (const GresCount& gres : declared->second) {
                const auto kind = std::lower_bound(gres_names.begin(), gres_names.end(), gres.name);
                node.gres[static_cast<size_t>(kind - gres_names.begin())] = gres.count;
            }
        }
        for (const auto& partition : config.partitions) {
            if (std::find(partition.nodes.begin(), partition.nodes.end(), name)
                != partition.nodes.end()) {
                node.info.partitions.push_back(partition.name);
            }
        }
        index_.emplace(name, nodes_.size());
        nodes_.push_back(std::move(node));
    }
}

NodeEntry* NodeTable::find(const std::string& name) {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &nodes_[it->second];
}

const NodeEntry* NodeTable::find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &nodes_[it->second];
}

int NodeTable::index_of(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : static_cast<int>(it->second);
}

void NodeTable::heard_from(NodeEntry& node, const Clock& clock) {
    node.last_heard_ms = clock.steady_ms();
    node.info.last_heartbeat = clock.unix_seconds();
}

std::vector<NodeEntry*> NodeTable::silent_nodes(int64_t now_ms, int64_t timeout_ms) {
    std::vector<NodeEntry*> silent;
    for (auto& node : nodes_) {
        if ((node.registered || !node.jobs.empty()) && node.info.state != NodeState::kDown
            && now_ms - node.last_heard_ms > timeout_ms) {
            silent.push_back(&node);
        }
    }
    return silent;
}

std::vector<NodeEntry*> NodeTable::disconnected_nodes(int64_t now_ms, int64_t grace_ms) {
    std::vector<NodeEntry*> gone;
    for (auto& node : nodes_) {
        if (node.registered && !node.connection && node.info.state != NodeState::kDown
            && now_ms - node.last_heard_ms > grace_ms) {
            gone.push_back(&node);
        }
    }
    return gone;
}

void NodeTable::claim(const Job& job) {
    for (size_t i = 0; i < job.nodes.size(); ++i) {
        NodeEntry* node = find(job.nodes[i]);
        if (node == nullptr) {
            continue;
        }
        node->info.cpus_alloc += static_cast<int32_t>(job.cpus_per_node.at(i));
        node->info.memory_alloc_mib += job.mem_per_node_mib;
        node->jobs.insert(job.job_id);
        if (i < job.gpu_alloc.size()) {
            node->gpu_jobs[job.job_id] = job.gpu_alloc[i];
        }
        refresh_node_state(*node);
    }
}

void NodeTable::release(const Job& job) {
    for (size_t i = 0; i < job.nodes.size(); ++i) {
        NodeEntry* node = find(job.nodes[i]);
        if (node == nullptr || node->jobs.erase(job.job_id) == 0) {
            continue;
        }
        node->gpu_jobs.erase(job.job_id);
        node->info.cpus_alloc -= static_cast<int32_t>(job.cpus_per_node.at(i));
        node->info.memory_alloc_mib -= job.mem_per_node_mib;
        refresh_node_state(*node);
    }
}

std::vector<sched::NodeCapacity> NodeTable::capacities() const {
    std::vector<sched::NodeCapacity> out;
    out.reserve(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
        const NodeEntry& node = nodes_[i];
        sched::NodeCapacity cap;
        cap.name = node.info.name;
        cap.cpus = node.info.resources.cpus;
        cap.memory_mib = node.info.resources.memory_mib;
        cap.gpus = node.info.resources.gpus;
        cap.gpu_type = node.info.resources.gpu_type;
        cap.up = takes_jobs(i);
        cap.gres = node.gres;
        cap.threads_per_core = node.info.resources.threads_per_core();
        if (cap.gpus > 0) {
            cap.gpu_layout = node.gpu_layout;
            cap.free_gpus = free_gpus(node);  // CPU ids are not ranked on: skip them
        }
        out.push_back(std::move(cap));
    }
    return out;
}

bool NodeTable::takes_jobs(size_t index) const {
    const NodeEntry& node = nodes_[index];
    return node.registered && node.responding && node.info.state != NodeState::kDown
           && !node.info.drain;
}

int64_t NodeTable::total_cpus() const {
    int64_t cpus = 0;
    for (const auto& node : nodes_) {
        cpus += node.info.resources.cpus;
    }
    return cpus;
}

}  // namespace cohort::ctld
