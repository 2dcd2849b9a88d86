// A job's GPU request as given (--gpus, --gpus-per-node, --gres=gpu, --gpus-per-task,
// --cpus-per-gpu, --mem-per-gpu, --ntasks-per-gpu, --gpu-bind) and the per-node shape the
// scheduler plans with. Pure: the CLI and the controller run the same checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/serialize_fields.h"
#include "common/status.h"

namespace cohort {

struct GpuOptions {
    std::string type;      // a node feature such as "h100"; empty: any GPU
    int32_t gpus = 0;      // --gpus / -G: for the whole job
    int32_t per_node = 0;  // --gpus-per-node or --gres=gpu:N
    int32_t per_task = 0;  // --gpus-per-task
    int32_t cpus_per_gpu = 0;
    int64_t mem_per_gpu_mib = 0;
    int32_t ntasks_per_gpu = 0;
    std::string bind;  // "", "closest", "none" or "map_gpu:0,1,..." (without "verbose,")

    bool requested() const { return gpus > 0 || per_node > 0 || per_task > 0; }

    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        serialize_fields(ar, type, gpus, per_node, per_task, cpus_per_gpu, mem_per_gpu_mib,
                         ntasks_per_gpu, bind);
    }
};

// The task geometry a GPU request is resolved against (the JobSpec's fields).
struct TaskGeometry {
    uint32_t nodes_min = 0;
    uint32_t nodes_max = 0;
    uint32_t ntasks = 0;
    uint32_t ntasks_per_node = 0;
    uint32_t cpus_per_task = 1;
    bool cpus_per_task_set = false;
    int64_t mem_mib = 0;
};

// What the scheduler plans with once the GPU options are applied: a uniform count per node
// and the task geometry they imply.
struct GpuShape {
    int32_t gpus_per_node = 0;
    TaskGeometry geometry;
};

struct GpuCount {
    std::string type;
    int32_t count = 0;
};

// "[type:]N" as --gpus, --gpus-per-node and --gpus-per-task take it; `option` names the
// option in errors.
Result<GpuCount> parse_gpu_count(const std::string& option, const std::string& value);

// "gpu[:type][:N]" (N defaults to 1), the only generic resource Cohort knows.
Result<GpuCount> parse_gres(const std::string& value);

// "[verbose,]closest|none|map_gpu:<ids>|map:<ids>"; returns it without "verbose," and with
// "map:" spelled "map_gpu:".
Result<std::string> parse_gpu_bind(const std::string& value);

// Checks Slurm's rules for what combines. Errors name the option, the value and what is
// accepted.
Status check_gpus(const GpuOptions& gpu, const TaskGeometry& geometry);

// The per-node shape of a checked request: without -N, --gpus and --gpus-per-task place the
// job's tasks on one node; --gpus splits evenly over a fixed node count; --cpus-per-gpu
// and --mem-per-gpu set the CPUs per task and the memory per node. Applying it again to
// its own memory gives the same shape, so the controller may store the memory it derived.
GpuShape gpu_shape(const GpuOptions& gpu, const TaskGeometry& geometry);

// check_gpus, then gpu_shape.
Result<GpuShape> resolve_gpus(const GpuOptions& gpu, const TaskGeometry& geometry);

// The GPU ids of `map_gpu:` (empty for any other binding).
std::vector<int> gpu_bind_map(const std::string& bind);

// A GPU type for a model name, as node features spell it: "NVIDIA H100 80GB HBM3" -> "h100",
// "Tesla V100-SXM3-32GB-H" -> "v100", "AMD Instinct MI250X" -> "mi250x"; "" when none.
std::string gpu_type_of(const std::string& model);

}  // namespace cohort
