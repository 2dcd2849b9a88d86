#include "cli/node_format.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "cli/json_output.h"
#include "common/comma_list.h"
#include "common/hostlist.h"
#include "common/node_state.h"
#include "common/time_spec.h"

namespace cohort::cli {
namespace {

constexpr std::string_view kCodes = "PRaltTDNcCmGfEnoFsrhgzdw";

std::string header_of(char code) {
    switch (code) {
        case 'P':
        case 'R':
            return "PARTITION";
        case 'a':
            return "AVAIL";
        case 'l':
            return "TIMELIMIT";
        case 't':
        case 'T':
            return "STATE";
        case 'D':
            return "NODES";
        case 'N':
            return "NODELIST";
        case 'c':
            return "CPUS";
        case 'C':
            return "CPUS(A/I/O/T)";
        case 'm':
            return "MEMORY";
        case 'G':
            return "GRES";
        case 'f':
            return "AVAIL_FEATURES";
        case 'E':
            return "REASON";
        case 'n':
            return "HOSTNAMES";
        case 'o':
            return "NODE_ADDR";
        case 'F':
            return "NODES(A/I/O/T)";
        case 's':
            return "JOB_SIZE";
        case 'r':
            return "ROOT";
        case 'h':
            return "OVERSUBSCRIBE";
        case 'g':
            return "GROUPS";
        case 'z':
            return "S:C:T";
        case 'd':
            return "TMP_DISK";
        case 'w':
            return "WEIGHT";
        default:
            return "";
    }
}

// sinfo's state words: "idle", "mix", "alloc", "down", "drain", "drng", "unk"; %T in full.
std::string state_of(const protocol::NodeInfo& node, bool full) {
    if (node.drain && node.state != NodeState::kDown) {
        const bool busy = !node.jobs.empty();
        return full ? (busy ? "DRAINING" : "DRAINED") : (busy ? "drng" : "drain");
    }
    switch (node.state) {
        case NodeState::kIdle:
            return full ? "IDLE" : "idle";
        case NodeState::kMixed:
            return full ? "MIXED" : "mix";
        case NodeState::kAllocated:
            return full ? "ALLOCATED" : "alloc";
        case NodeState::kDown:
            return full ? "DOWN" : "down";
        case NodeState::kUnknown:
            return full ? "UNKNOWN" : "unk";
    }
    return "unk";
}

// The value of a field that is the same for every node of a row; the aggregates (node count,
// node list, CPU counts) are filled in per row.
std::string node_value(char code,
                       const protocol::NodeInfo& node,
                       const PartitionConfig& partition,
                       const ClusterConfig& config) {
    switch (code) {
        case 'P':
            return partition.name + (&partition == config.default_partition() ? "*" : "");
        case 'R':
            return partition.name;
        case 'a':
            return "up";
        case 'l':
            return partition.max_time_s < 0 ? "infinite" : format_duration(partition.max_time_s);
        case 't':
            return state_of(node, false);
        case 'T':
            return state_of(node, true);
        case 'c':
            return std::to_string(node.resources.cpus);
        case 'm':
            return std::to_string(node.resources.memory_mib);
        case 'G':
            return node_gres(node).empty() ? "(null)" : node_gres(node);
        case 'f':
            return join_comma_list(config.features_of(node.name, node.resources.gpu_type),
                                   "(null)");
        case 'E':
            return node.reason.empty() ? "none" : node.reason;
        case 's':
            return "1-"
                   + (partition.max_nodes < 0 ? std::string("infinite")
                                              : std::to_string(partition.max_nodes));
        case 'r':
            return "no";  // no partition is kept for root alone
        case 'h':
            return "NO";  // jobs share a node's CPUs only as the node's free CPUs allow
        case 'g':
            return "all";  // partitions limit accounts, not groups
        case 'z': {
            const protocol::NodeResources& r = node.resources;
            const int sockets = std::max(r.sockets, 1);
            const int cores = std::max(r.cores, sockets);
            return fmt::format("{}:{}:{}", sockets, cores / sockets, std::max(r.cpus / cores, 1));
        }
        case 'd':
            return "0";  // temporary disk is not tracked
        case 'w':
            return "1";  // nodes have no scheduling weights
        default:
            return "";
    }
}

bool aggregate(char code) {
    return code == 'D' || code == 'N' || code == 'C' || code == 'n' || code == 'o' || code == 'F';
}

struct Row {
    std::vector<std::string> values;  // per field; aggregates filled last
    std::vector<const protocol::NodeInfo*> nodes;
};

std::string aggregate_value(char code, const Row& row) {
    std::vector<std::string> names;
    int64_t allocated = 0;
    int64_t idle = 0;
    int64_t other = 0;
    int64_t nodes_allocated = 0;  // allocated or mixed, as sinfo's %F counts them
    int64_t nodes_idle = 0;
    for (const protocol::NodeInfo* node : row.nodes) {
        names.push_back(code == 'o' ? node->address : node->name);
        const bool usable = node->state != NodeState::kDown && !node->drain;
        allocated += node->cpus_alloc;
        (usable ? idle : other) += node->resources.cpus - node->cpus_alloc;
        if (usable && node->state == NodeState::kIdle) {
            ++nodes_idle;
        } else if (usable
                   && (node->state == NodeState::kAllocated || node->state == NodeState::kMixed)) {
            ++nodes_allocated;
        }
    }
    switch (code) {
        case 'D':
            return std::to_string(row.nodes.size());
        case 'N':
        case 'n':
            return compress_hostlist(names);
        case 'o': {
            std::string out;
            for (const std::string& address : names) {
                out += (out.empty() ? "" : ",") + address;
            }
            return out;
        }
        case 'C':
            return fmt::format("{}/{}/{}/{}", allocated, idle, other, allocated + idle + other);
        case 'F': {
            const auto total = static_cast<int64_t>(row.nodes.size());
            return fmt::format("{}/{}/{}/{}", nodes_allocated, nodes_idle,
                               total - nodes_allocated - nodes_idle, total);
        }
        default:
            return "";
    }
}

std::string padded(const std::string& value, const NodeField& field, size_t width) {
    if (width == 0) {
        return value;
    }
    const std::string cut = value.substr(0, width);
    return field.right ? fmt::format("{:>{}}", cut, width) : fmt::format("{:<{}}", cut, width);
}

}  // namespace

std::vector<NodeField> default_node_format(bool node_oriented, NodeListing listing) {
    if (listing == NodeListing::kSummary) {
        return *parse_node_format("%#P %.5a %.10l %.16F  %N");
    }
    if (listing == NodeListing::kLong) {
        return *parse_node_format(node_oriented
                                          ? "%#N %.6D %#P %.11T %.4c %.8z %.6m %.8d %.6w %.8f %20E"
                                          : "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N");
    }
    return *parse_node_format(node_oriented ? "%#N %.6D %.#P %6t" : "%#P %.5a %.10l %.6D %.6t %N");
}

Result<std::vector<NodeField>> parse_node_format(std::string_view format) {
    std::vector<NodeField> fields;
    std::string literal;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') {
            literal += format[i];
            continue;
        }
        if (!literal.empty()) {
            fields.push_back({0, 0, false, false, literal});
            literal.clear();
        }
        NodeField field;
        size_t j = i + 1;
        if (j < format.size() && format[j] == '.') {
            field.right = true;
            ++j;
        }
        if (j < format.size() && format[j] == '#') {
            field.fit = true;
            ++j;
        }
        while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j])) != 0) {
            field.width = field.width * 10 + static_cast<size_t>(format[j] - '0');
            ++j;
        }
        if (j >= format.size() || kCodes.find(format[j]) == std::string_view::npos) {
            return Status::invalid(fmt::format(
                    "--format: invalid field in '{}' at '{}' (accepted: %P %R %a %l %t %T %D %N "
                    "%c %C %F %m %G %f %E %n %o %s %r %h %g %z %d %w, each as "
                    "%[.][#][width]X)",
                    format, format.substr(i)));
        }
        field.code = format[j];
        fields.push_back(field);
        i = j;
    }
    if (!literal.empty()) {
        fields.push_back({0, 0, false, false, literal});
    }
    return fields;
}

std::vector<std::string> node_lines(const std::vector<NodeField>& fields,
                                    const std::vector<protocol::NodeInfo>& nodes,
                                    const ClusterConfig& config,
                                    bool node_oriented,
                                    bool header) {
    // Nodes are split by partition only when a partition's field is printed; rows group the
    // nodes whose printed fields are alike (sinfo -h -o %D counts every node once).
    const bool per_partition = std::any_of(fields.begin(), fields.end(), [](const NodeField& f) {
        return f.code == 'P' || f.code == 'R' || f.code == 'a' || f.code == 'l';
    });
    std::vector<const PartitionConfig*> partitions;
    for (const PartitionConfig& partition : config.partitions) {
        partitions.push_back(&partition);
    }
    if (!per_partition && !partitions.empty()) {
        partitions.resize(1);
    }

    struct Keyed {
        std::vector<std::string> values;
        size_t partition = 0;
        size_t node = 0;
        const protocol::NodeInfo* info = nullptr;
    };

    std::vector<Keyed> entries;
    for (size_t p = 0; p < partitions.size(); ++p) {
        for (size_t n = 0; n < nodes.size(); ++n) {
            const protocol::NodeInfo& node = nodes[n];
            const auto& members = partitions[p]->nodes;
            if (per_partition
                && std::find(members.begin(), members.end(), node.name) == members.end()) {
                continue;
            }
            Keyed entry{{}, p, n, &node};
            for (const NodeField& field : fields) {
                entry.values.push_back(
                        field.code == 0 ? ""
                                        : node_value(field.code, node, *partitions[p], config));
            }
            entries.push_back(std::move(entry));
        }
    }
    // As sinfo orders them: -N by node, then partition; else by partition, then by the
    // fields' text (so a partition's drained nodes come before its idle ones).
    std::stable_sort(entries.begin(), entries.end(), [&](const Keyed& a, const Keyed& b) {
        return node_oriented ? std::tie(a.node, a.partition) < std::tie(b.node, b.partition)
                             : std::tie(a.partition, a.values) < std::tie(b.partition, b.values);
    });
    std::vector<Row> rows;
    std::map<std::pair<size_t, std::vector<std::string>>, size_t> row_of;
    for (Keyed& entry : entries) {
        auto [it, fresh] = row_of.try_emplace({entry.partition, entry.values}, rows.size());
        if (fresh || node_oriented) {
            it->second = rows.size();
            rows.push_back({std::move(entry.values), {}});
        }
        rows[it->second].nodes.push_back(entry.info);
    }
    for (Row& row : rows) {
        for (size_t i = 0; i < fields.size(); ++i) {
            if (aggregate(fields[i].code)) {
                row.values[i] = aggregate_value(fields[i].code, row);
            } else if (fields[i].code == 0) {
                row.values[i] = fields[i].literal;
            }
        }
    }
    std::vector<size_t> widths;
    for (size_t i = 0; i < fields.size(); ++i) {
        size_t width = fields[i].width;
        if (fields[i].fit) {
            // As sinfo sizes them: the longest value, and never under 9 (as measured against
            // sinfo 22.05 with node names of 5 and 17 characters).
            width = std::max<size_t>(width, 9);
            for (const Row& row : rows) {
                width = std::max(width, row.values[i].size());
            }
        }
        widths.push_back(fields[i].code == 0 ? 0 : width);
    }
    std::vector<std::string> lines;
    if (header) {
        std::string line;
        for (size_t i = 0; i < fields.size(); ++i) {
            line += fields[i].code == 0 ? fields[i].literal
                                        : padded(header_of(fields[i].code), fields[i], widths[i]);
        }
        lines.push_back(line);
    }
    for (const Row& row : rows) {
        std::string line;
        for (size_t i = 0; i < fields.size(); ++i) {
            line += padded(row.values[i], fields[i], widths[i]);
        }
        lines.push_back(line);
    }
    return lines;
}

}  // namespace cohort::cli
