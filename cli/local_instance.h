// A local multi-node instance on this machine: one cohortctld and N cohortd on loopback,
// with a generated key, SQLite state and logs in one state directory.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace cohort::cli {

struct InstanceOptions {
    std::string state_dir;
    int nodes = 4;
    std::string topology_xml;
    int cpus_per_node = 0;  // 0: what each agent discovers
    int64_t kill_wait_s = 5;
    int64_t launch_fanout = 8;  // children per agent when a step launch fans out
    std::string network_file;   // JSON of the config's "network" key; empty: a flat network
    // The address cohortctld listens on, which agents and clients dial: one of this host's,
    // so agents in other network namespaces or on other hosts can join.
    std::string listen_address = "127.0.0.1";
    // A JSON object of cluster settings (keys of cohort.json, such as node_timeout_ms or
    // job_requeue) over the defaults of a new instance; empty: none.
    std::string settings_file;
    // "munge": users' commands prove who they are with MUNGE; the instance runs a munged of
    // its own (key, socket and pid in the state dir) and lets other users reach it.
    std::string auth = "cluster_key";
};

// Starts the daemons (or resumes a state dir that holds state) and waits until every node
// has registered. Returns the config path.
Result<std::string> start_instance(const InstanceOptions& options);

// SIGTERM to every daemon of the instance, SIGKILL after a bounded wait.
Status stop_instance(const std::string& state_dir);

}  // namespace cohort::cli
