// Slurm-shaped JSON (as squeue/sinfo/sacct --json print it) for Cohort's records.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/protocol/job_types.h"

namespace cohort::cli {

// Local time as Slurm prints it (2026-12-02T21:00:00), "Unknown" for 0.
std::string format_time(int64_t unix_seconds);

// As sinfo prints a node's GRES: "gpu:h100:8,nvme:20", "gpu:8" when the GPUs' type is
// unknown; "" when it has none.
std::string node_gres(const protocol::NodeInfo& node);

// What the job asks of each node, as scontrol's TresPerNode= prints it:
// "gres:gpu:a100:2,gres:nvme:20"; "" when nothing per node.
std::string tres_per_node(const protocol::JobSpec& spec);

// Slurm's OverSubscribe= word for how a job shares its nodes: OK, NO, USER, MCS, YES.
std::string node_sharing_name(protocol::NodeSharing sharing);

// A pending job that may run in several partitions (-p a,b) shows them all, as squeue does.
std::string shown_partition(const protocol::JobRecord& job);

// A heterogeneous job's component ids as Slurm's HetJobIdSet prints them: "120-122".
std::string het_job_id_set(const protocol::JobRecord& job);

nlohmann::json job_to_json(const protocol::JobRecord& job);
nlohmann::json node_to_json(const protocol::NodeInfo& node);
nlohmann::json step_to_json(const protocol::StepRecord& step);

// {"jobs": [...], "meta": {...}, "errors": [], "warnings": []}
nlohmann::json wrap_payload(const char* key, nlohmann::json items);

// Prints wrap_payload(key, items) one item at a time, as items arrive, in the text that
// dump(2) of the whole document gives: a listing of 100,000 jobs never exists as one JSON
// value (that took 2.4 GB and 15 s).
class JsonPayloadStream {
public:
    JsonPayloadStream(std::ostream& out, const char* key);
    void add(const nlohmann::json& item);
    // Closes the array and prints the rest of the document.
    void finish();

private:
    std::ostream& out_;
    std::string after_items_;  // the document's text after its items
    bool empty_ = true;
};

}  // namespace cohort::cli
