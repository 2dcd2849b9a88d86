// The controller's nodes, in config order: what each has, what its jobs hold, when its agent
// was last heard from. Owned by the controller's strand like every table of the controller.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/protocol/job_types.h"
#include "common/transport/connection.h"
#include "scheduler/ctld/job.h"
#include "scheduler/placement/gpu_layout.h"
#include "scheduler/snapshot.h"

namespace cohort::ctld {

using ConnectionPtr = std::shared_ptr<transport::Connection>;

struct NodeEntry {
    protocol::NodeInfo info;
    bool registered = false;  // its resources are known
    bool responding = false;
    bool held_down = false;  // DOWN until an operator resumes it (see return_to_service)
    int64_t last_heard_ms = 0;
    ConnectionPtr connection;
    std::set<uint64_t> jobs;
    // From the registered topology; shared with the scheduling passes' snapshots. Never null.
    std::shared_ptr<const sched::NodeGpuLayout> gpu_layout =
            std::make_shared<const sched::NodeGpuLayout>();
    std::map<uint64_t, protocol::NodeGpuAlloc> gpu_jobs;  // GPUs (and bound CPUs) per job
    std::vector<int64_t> gres;  // of each generic resource, by kind (ClusterConfig::gres_names)
};

// Sets IDLE, MIXED or ALLOCATED from the node's allocated CPUs; a DOWN node stays DOWN.
void refresh_node_state(NodeEntry& node);

class NodeTable {
public:
    // Every configured node, UNKNOWN until its agent registers.
    explicit NodeTable(const ClusterConfig& config);

    NodeEntry* find(const std::string& name);
    const NodeEntry* find(const std::string& name) const;
    // Its position in config order, which the scheduling snapshot's node indexes follow.
    int index_of(const std::string& name) const;  // -1: unknown

    NodeEntry& operator[](size_t index) { return nodes_[index]; }

    size_t size() const { return nodes_.size(); }

    auto begin() { return nodes_.begin(); }

    auto end() { return nodes_.end(); }

    auto begin() const { return nodes_.begin(); }

    auto end() const { return nodes_.end(); }

    // The node's agent spoke: it is alive as of now.
    void heard_from(NodeEntry& node, const Clock& clock);
    // Registered nodes, or nodes holding jobs, not yet DOWN, not heard from for longer than
    // `timeout_ms`.
    std::vector<NodeEntry*> silent_nodes(int64_t now_ms, int64_t timeout_ms);
    // Registered nodes, not yet DOWN, whose agent's connection closed and that have not been
    // heard from for longer than `grace_ms`: an agent restarting reconnects well within it.
    std::vector<NodeEntry*> disconnected_nodes(int64_t now_ms, int64_t grace_ms);

    // What the job's allocation holds on its nodes, added and taken away.
    void claim(const Job& job);
    void release(const Job& job);

    // The scheduling pass's view: capacity, up or not, and free GPUs.
    std::vector<sched::NodeCapacity> capacities() const;
    // Whether jobs may start on the node: registered, responding, neither DOWN nor draining.
    bool takes_jobs(size_t index) const;
    int64_t total_cpus() const;

private:
    std::vector<NodeEntry> nodes_;
    std::unordered_map<std::string, size_t> index_;
};

}  // namespace cohort::ctld
