// Parsing and resolving GPU requests.
#include "common/gpu_options.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/size_spec.h"

namespace cohort {
namespace {

constexpr const char* kCountOptions = "--gpus, --gpus-per-node, --gres=gpu:N or --gpus-per-task";

bool valid_type(const std::string& type) {
    return !type.empty() && std::all_of(type.begin(), type.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
    });
}

Result<int32_t> positive(const std::string& option,
                         const std::string& whole,
                         const std::string& number,
                         const std::string& accepted) {
    auto count = parse_positive_count(number);
    if (!count || *count > 1024) {
        return Status::invalid(option + ": invalid value '" + whole + "' (accepted: " + accepted
                               + ")");
    }
    return static_cast<int32_t>(*count);
}

// Types match node features case-insensitively: "A100" asks for an a100.
std::string lowered(const std::string& text) {
    std::string out;
    for (char c : text) {
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

uint32_t ceil_div(uint32_t a, uint32_t b) {
    return (a + b - 1) / b;
}

// The option that set a GPU count, for messages about combinations.
std::string count_option(const GpuOptions& gpu) {
    return gpu.gpus > 0 ? "--gpus" : gpu.per_node > 0 ? "--gpus-per-node" : "--gpus-per-task";
}

Status check_combinations(const GpuOptions& gpu, const TaskGeometry& g) {
    const int counts =
            (gpu.gpus > 0 ? 1 : 0) + (gpu.per_node > 0 ? 1 : 0) + (gpu.per_task > 0 ? 1 : 0);
    if (counts > 1) {
        return Status::invalid(count_option(gpu) + ": cannot be combined with another GPU count"
                " (accepted: one of " + std::string(kCountOptions) + ")");
    }
    if (!gpu.requested()) {
        const std::pair<bool, const char*> needs[] = {{gpu.cpus_per_gpu > 0, "--cpus-per-gpu"},
                                                      {gpu.mem_per_gpu_mib > 0, "--mem-per-gpu"},
                                                      {gpu.ntasks_per_gpu > 0, "--ntasks-per-gpu"},
                                                      {!gpu.bind.empty(), "--gpu-bind"}};
        for (const auto& [given, name] : needs) {
            if (given) {
                return Status::invalid(std::string(name) + ": needs a GPU count (accepted with "
                                       + kCountOptions + ")");
            }
        }
        return Status::ok();
    }
    if (gpu.ntasks_per_gpu > 0 && gpu.per_task > 0) {
        return Status::invalid("--ntasks-per-gpu: cannot be combined with --gpus-per-task");
    }
    if (gpu.ntasks_per_gpu > 0 && g.ntasks_per_node > 0) {
        return Status::invalid("--ntasks-per-gpu: cannot be combined with --ntasks-per-node");
    }
    if (gpu.per_task > 0 && g.ntasks == 0 && !(g.nodes_min > 0 && g.ntasks_per_node > 0)) {
        return Status::invalid(
                "--gpus-per-task: needs a task count (accepted with --ntasks, "
                "or --nodes with --ntasks-per-node)");
    }
    if (gpu.cpus_per_gpu > 0 && g.cpus_per_task_set) {
        return Status::invalid("--cpus-per-gpu: cannot be combined with --cpus-per-task");
    }
    if (gpu.mem_per_gpu_mib > 0 && g.mem_mib != 0) {
        return Status::invalid("--mem-per-gpu: --mem and --mem-per-gpu are mutually exclusive");
    }
    if (gpu.gpus > 0 && g.nodes_max != 0 && g.nodes_max != g.nodes_min) {
        return Status::invalid(
                fmt::format("--gpus: needs a fixed node count, not --nodes={}-{} "
                            "(accepted: --nodes=N, or --gpus-per-node)",
                            g.nodes_min, g.nodes_max));
    }
    return Status::ok();
}

}  // namespace

Result<GpuCount> parse_gpu_count(const std::string& option, const std::string& value) {
    const std::string accepted = "[type:]N with N from 1 to 1024, e.g. 2 or a100:2";
    if (value.find(',') != std::string::npos) {
        return Status::invalid(option + ": invalid value '" + value
                               + "' (accepted: one GPU type per job, " + accepted + ")");
    }
    GpuCount out;
    std::string number = value;
    if (size_t colon = value.rfind(':'); colon != std::string::npos) {
        out.type = lowered(value.substr(0, colon));
        number = value.substr(colon + 1);
        if (!valid_type(out.type)) {
            return Status::invalid(option + ": invalid GPU type in '" + value
                                   + "' (accepted: " + accepted + ")");
        }
    }
    auto count = positive(option, value, number, accepted);
    if (!count) {
        return count.status();
    }
    out.count = *count;
    return out;
}

Result<GpuCount> parse_gres(const std::string& value) {
    const std::string accepted = "gpu, gpu:N or gpu:type:N, e.g. gpu:a100:2";
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
        size_t colon = value.find(':', start);
        parts.push_back(value.substr(start, colon == std::string::npos ? colon : colon - start));
        if (colon == std::string::npos) {
            break;
        }
        start = colon + 1;
    }
    if (value.find(',') != std::string::npos || parts.front() != "gpu" || parts.size() > 3) {
        return Status::invalid("--gres: invalid generic resource '" + value
                               + "' (accepted: " + accepted + ")");
    }
    GpuCount out{"", 1};
    if (parts.size() == 3) {
        out.type = lowered(parts[1]);
    }
    if (parts.size() >= 2) {
        const std::string& last = parts.back();
        const bool numeric = !last.empty() && std::isdigit(static_cast<unsigned char>(last[0]));
        if (parts.size() == 2 && !numeric) {
            out.type = lowered(last);  // gpu:a100 means one a100
        } else {
            auto count = positive("--gres", value, last, accepted);
            if (!count) {
                return count.status();
            }
            out.count = *count;
        }
    }
    if (parts.size() >= 2 && !out.type.empty() && !valid_type(out.type)) {
        return Status::invalid("--gres: invalid GPU type in '" + value + "' (accepted: " + accepted
                               + ")");
    }
    return out;
}

Result<std::string> parse_gpu_bind(const std::string& value) {
    std::string bind = value;
    if (bind.rfind("verbose,", 0) == 0) {
        bind = bind.substr(8);
    }
    if (bind == "closest" || bind == "none") {
        return bind;
    }
    for (const char* prefix : {"map_gpu:", "map:"}) {
        const std::string p = prefix;
        if (bind.rfind(p, 0) != 0) {
            continue;
        }
        const std::string ids = bind.substr(p.size());
        bool ok = !ids.empty() && ids.front() != ',' && ids.back() != ','
                  && ids.find(",,") == std::string::npos;
        ok = ok && std::all_of(ids.begin(), ids.end(), [](char c) {
                 return c == ',' || std::isdigit(static_cast<unsigned char>(c)) != 0;
             });
        if (ok) {
            return "map_gpu:" + ids;
        }
    }
    return Status::invalid("--gpu-bind: invalid value '" + value
                           + "' (accepted: [verbose,]closest, none or map_gpu:<id>[,<id>...])");
}

std::vector<int> gpu_bind_map(const std::string& bind) {
    std::vector<int> ids;
    if (bind.rfind("map_gpu:", 0) != 0) {
        return ids;
    }
    for (size_t at = 8; at < bind.size();) {
        size_t comma = bind.find(',', at);
        ids.push_back(std::stoi(bind.substr(at, comma == std::string::npos ? comma : comma - at)));
        at = comma == std::string::npos ? bind.size() : comma + 1;
    }
    return ids;
}

Status check_gpus(const GpuOptions& gpu, const TaskGeometry& geometry) {
    if (Status s = check_combinations(gpu, geometry); !s) {
        return s;
    }
    const uint32_t nodes = std::max<uint32_t>(geometry.nodes_min, 1);
    if (gpu.gpus > 0 && static_cast<uint32_t>(gpu.gpus) % nodes != 0) {
        return Status::invalid(
                fmt::format("--gpus: {} GPUs do not split evenly over {} nodes "
                            "(accepted: a multiple of --nodes, or --gpus-per-node)",
                            gpu.gpus, nodes));
    }
    return Status::ok();
}

GpuShape gpu_shape(const GpuOptions& gpu, const TaskGeometry& geometry) {
    GpuShape shape{0, geometry};
    TaskGeometry& g = shape.geometry;
    if (!gpu.requested()) {
        return shape;
    }
    const uint32_t nodes = std::max<uint32_t>(g.nodes_min, 1);
    if (gpu.gpus > 0) {
        g.nodes_min = nodes;
        shape.gpus_per_node = static_cast<int32_t>(static_cast<uint32_t>(gpu.gpus) / nodes);
    } else if (gpu.per_node > 0) {
        shape.gpus_per_node = gpu.per_node;
    } else {
        // --gpus-per-task: every node takes the same number of tasks, each with its GPUs.
        const uint32_t per_node =
                g.ntasks_per_node > 0 ? g.ntasks_per_node : ceil_div(g.ntasks, nodes);
        g.ntasks_per_node = per_node;
        g.nodes_min = g.ntasks > 0 ? std::max(nodes, ceil_div(g.ntasks, per_node)) : nodes;
        shape.gpus_per_node = static_cast<int32_t>(per_node) * gpu.per_task;
    }
    const auto per_node = static_cast<uint32_t>(shape.gpus_per_node);
    if (gpu.ntasks_per_gpu > 0) {
        g.ntasks_per_node = static_cast<uint32_t>(gpu.ntasks_per_gpu) * per_node;
        if (g.ntasks == 0) {
            g.ntasks = g.ntasks_per_node * std::max<uint32_t>(g.nodes_min, 1);
        }
    }
    if (gpu.cpus_per_gpu > 0) {
        const uint32_t tasks = g.ntasks_per_node > 0 ? g.ntasks_per_node
                               : g.ntasks > 0
                                       ? ceil_div(g.ntasks, std::max<uint32_t>(g.nodes_min, 1))
                                       : 1;
        g.cpus_per_task =
                std::max<uint32_t>(static_cast<uint32_t>(gpu.cpus_per_gpu) * per_node / tasks, 1);
    }
    if (gpu.mem_per_gpu_mib > 0) {
        g.mem_mib = gpu.mem_per_gpu_mib * shape.gpus_per_node;
    }
    return shape;
}

Result<GpuShape> resolve_gpus(const GpuOptions& gpu, const TaskGeometry& geometry) {
    if (Status s = check_gpus(gpu, geometry); !s) {
        return s;
    }
    return gpu_shape(gpu, geometry);
}

std::string gpu_type_of(const std::string& model) {
    const std::string lower = lowered(model);
    size_t at = 0;
    while (at < lower.size()) {
        size_t end = at;
        while (end < lower.size() && std::isalnum(static_cast<unsigned char>(lower[end])) != 0) {
            ++end;
        }
        const std::string token = lower.substr(at, end - at);
        at = end + 1;
        // A type is letters then digits (h100, mi250x, t4), not a form factor or memory kind.
        size_t letters = 0;
        while (letters < token.size() && std::isalpha(static_cast<unsigned char>(token[letters]))) {
            ++letters;
        }
        if (letters == 0 || letters > 3 || letters == token.size()
            || std::isdigit(static_cast<unsigned char>(token[letters])) == 0) {
            continue;
        }
        const std::string word = token.substr(0, letters);
        if (word == "sxm" || word == "hbm" || word == "gen" || word == "ddr" || word == "gb") {
            continue;
        }
        return token;
    }
    return "";
}

}  // namespace cohort
