// Slurm-shaped JSON (as squeue/sinfo/sacct --json print it) for Cohort's records.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/json_writer.h"
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

// A job's members, as squeue --json gives them, into the object `writer` has open.
void write_job_fields(JsonWriter& writer, const protocol::JobRecord& job);
// A step's members, as sacct --json gives them, with its GPU time in its usage.
void write_step_fields(JsonWriter& writer, const protocol::StepRecord& step, int64_t gpu_seconds);
void write_node_fields(JsonWriter& writer, const protocol::NodeInfo& node);

// Prints {"jobs": [...], "meta": {...}, "errors": [], "warnings": []} an item at a time, as
// items arrive: a listing of 100,000 jobs never exists as one document (that took 2.4 GB and
// 15 s) nor as one string.
class JsonPayloadStream {
public:
    JsonPayloadStream(std::ostream& out, const char* key);

    // One item, which `write(JsonWriter&)` writes at its place in the list.
    template <class Write>
    void add(Write&& write) {
        write(writer_);
        flush_when_full();
    }

    // Closes the list and prints the rest of the document.
    void finish();

private:
    void flush_when_full();

    std::ostream& out_;
    std::string text_;  // written, not yet printed
    JsonWriter writer_;
};

}  // namespace cohort::cli
