// Slurm data_parser shapes: unset-able numbers as {set, infinite, number}, states as arrays.
#include "cli/json_output.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "common/comma_list.h"
#include "common/gpu_options.h"
#include "common/hostlist.h"
#include "common/mail_type.h"

namespace cohort::cli {
namespace {

using nlohmann::json;

json number(int64_t value, bool set = true, bool infinite = false) {
    return {{"set", set}, {"infinite", infinite}, {"number", set && !infinite ? value : 0}};
}

json time_limit_minutes(int64_t seconds) {
    if (seconds < 0) {
        return number(0, true, true);
    }
    return number((seconds + 59) / 60);
}

// Slurm's mail_type array: the event names, none when no mail is asked for.
json mail_type_list(uint32_t events) {
    json names = json::array();
    if (events == 0) {
        return names;
    }
    const std::string joined = mail_type_name(events);
    for (size_t start = 0; start <= joined.size();) {
        const size_t comma = std::min(joined.find(',', start), joined.size());
        names.push_back(joined.substr(start, comma - start));
        start = comma + 1;
    }
    return names;
}

json exit_code(int32_t code, int32_t signal, bool finished) {
    std::string status = !finished     ? "PENDING"
                         : signal != 0 ? "SIGNALED"
                         : code != 0   ? "ERROR"
                                       : "SUCCESS";
    return {{"status", json::array({status})},
            {"return_code", number(code, finished)},
            {"signal", {{"id", number(signal, signal != 0)}, {"name", ""}}}};
}

int64_t total(const std::vector<uint32_t>& counts) {
    int64_t sum = 0;
    for (uint32_t c : counts) {
        sum += c;
    }
    return sum;
}

// Slurm's base state and its flags: ["IDLE", "DRAIN"].
json node_state_flags(const protocol::NodeInfo& node) {
    json state = json::array({node_state_name(node.state)});
    if (node.drain) {
        state.push_back("DRAIN");
    }
    return state;
}

json kept_options_json(const std::vector<std::pair<std::string, std::string>>& kept) {
    json out = json::object();
    for (const auto& [name, value] : kept) {
        out[name] = value;
    }
    return out;
}

// CPU time as sacct --json gives it.
json cpu_time_json(uint64_t usec) {
    return {{"seconds", usec / 1000000}, {"microseconds", usec % 1000000}};
}

// A job's or step's CPU time into `time` (beside what is there), its memory as `usage`.
void add_usage_json(const protocol::JobUsage& used, json& time, json& out) {
    time["user"] = cpu_time_json(used.cpu_user_usec);
    time["system"] = cpu_time_json(used.cpu_system_usec);
    time["total"] = cpu_time_json(used.cpu_user_usec + used.cpu_system_usec);
    out["usage"] = {{"max_rss_kib", used.max_rss_kib},
                    {"max_rss_node", used.max_rss_node},
                    {"oom_kills", used.oom_kills}};
}

}  // namespace

std::string tres_per_node(const protocol::JobSpec& spec) {
    std::vector<std::string> items;
    if (spec.gpu.per_node > 0) {
        items.push_back("gres:gpu:" + (spec.gpu.type.empty() ? "" : spec.gpu.type + ":")
                        + std::to_string(spec.gpu.per_node));
    }
    for (const std::string& gres : split_comma_list(spec.gres)) {
        items.push_back("gres:" + gres);
    }
    return join_comma_list(items);
}

std::string node_gres(const protocol::NodeInfo& node) {
    const protocol::NodeResources& r = node.resources;
    std::string gpus;
    if (r.gpus > 0) {
        gpus = "gpu:" + (r.gpu_type.empty() ? "" : r.gpu_type + ":") + std::to_string(r.gpus);
    }
    return gpus.empty() || node.gres.empty() ? gpus + node.gres : gpus + "," + node.gres;
}

// Slurm's OverSubscribe= words for how the job shares its nodes.
std::string node_sharing_name(protocol::NodeSharing sharing) {
    switch (sharing) {
        case protocol::NodeSharing::kDefault:
            return "OK";
        case protocol::NodeSharing::kExclusive:
            return "NO";
        case protocol::NodeSharing::kExclusiveUser:
            return "USER";
        case protocol::NodeSharing::kExclusiveMcs:
            return "MCS";
        case protocol::NodeSharing::kOversubscribe:
            return "YES";
    }
    return "OK";
}

std::string shown_partition(const protocol::JobRecord& job) {
    const bool several = job.spec.partition.find(',') != std::string::npos;
    return job.state == JobState::kPending && several ? job.spec.partition : job.partition;
}

std::string het_job_id_set(const protocol::JobRecord& job) {
    const uint64_t last = job.het_job_id + std::max<uint32_t>(job.het_size, 1) - 1;
    return last == job.het_job_id ? std::to_string(last)
                                  : std::to_string(job.het_job_id) + "-" + std::to_string(last);
}

json job_to_json(const protocol::JobRecord& job) {
    const bool finished = is_final(job.state);
    // Tasks and CPUs per task as the GPU options imply them (--cpus-per-gpu, ...).
    const protocol::JobSpec& spec = job.spec;
    const TaskGeometry geometry =
            gpu_shape(spec.gpu, {spec.nodes_min, spec.nodes_max, spec.ntasks, spec.ntasks_per_node,
                                 spec.cpus_per_task, spec.cpus_per_task_set, spec.mem_mib})
                    .geometry;
    json out = {
            {"job_id", job.job_id},
            {"name", job.spec.name},
            {"array_job_id", number(static_cast<int64_t>(job.array_job_id), job.is_array_task())},
            {"array_task_id",
             number(job.array_task_id, job.is_array_task() && !job.is_array_remainder())},
            {"array_task_string", job.array_pending},
            {"array_max_tasks", number(job.array_max_running, job.array_max_running != 0)},
            {"het_job_id", number(static_cast<int64_t>(job.het_job_id), job.is_het_component())},
            {"het_job_id_set", job.is_het_component() ? het_job_id_set(job) : ""},
            {"het_job_offset", number(job.het_job_offset, job.is_het_component())},
            {"dependency", job.spec.dependency},
            {"user_name", job.user_name},
            {"user_id", job.uid},
            {"group_id", job.gid},
            {"partition", shown_partition(job)},
            {"account", job.spec.account},
            {"qos", job.spec.qos},
            {"job_state", json::array({std::string(job_state_name(job.state))})},
            {"state_reason", job.reason},
            {"nodes", compress_hostlist(job.nodes)},
            {"node_count", number(job.nodes.empty() ? job.spec.nodes_min : job.nodes.size())},
            {"cpus", number(total(job.cpus_per_node))},
            {"tasks", number(geometry.ntasks, geometry.ntasks != 0)},
            {"cpus_per_task", number(geometry.cpus_per_task)},
            {"tasks_per_node", number(job.spec.ntasks_per_node, job.spec.ntasks_per_node != 0)},
            {"memory_per_node", number(job.spec.mem_mib, job.spec.mem_mib != 0)},
            {"time_limit", time_limit_minutes(job.time_limit_s)},
            {"submit_time", number(job.submit_time)},
            {"eligible_time", number(job.eligible_time)},
            {"start_time", job.state == JobState::kPending
                                   ? number(job.expected_start, job.expected_start != 0)
                                   : number(job.start_time, job.start_time != 0)},
            {"end_time", number(job.end_time, job.end_time != 0)},
            {"priority", number(job.priority)},
            {"restart_cnt", job.restart_count},
            {"requeue", job.spec.requeue > 0},
            {"exit_code", exit_code(job.exit_code, job.exit_signal, finished)},
            {"standard_output", job.spec.output},
            {"standard_error", job.spec.error},
            {"current_working_directory", job.spec.cwd},
            {"batch_flag", !job.interactive},
            {"hold", job.held},
            {"comment", {{"job", job.spec.comment}}},
            {"mail_type", mail_type_list(job.spec.mail_type)},
            {"mail_user", job.spec.mail_user.empty() ? job.user_name : job.spec.mail_user},
            {"excluded_nodes", compress_hostlist(job.spec.exclude)},
            {"required_nodes", compress_hostlist(job.spec.nodelist)},
            {"features", job.spec.constraint},
            {"prefer", job.spec.prefer},
            {"licenses", job.spec.licenses},
            {"tres_per_node", tres_per_node(job.spec)},
            {"shared", node_sharing_name(job.spec.sharing)},
            {"exclusive", job.spec.sharing == protocol::NodeSharing::kExclusive
                                  || job.spec.sharing == protocol::NodeSharing::kExclusiveUser
                                  || job.spec.sharing == protocol::NodeSharing::kExclusiveMcs},
            {"memory_per_cpu", number(job.spec.mem_per_cpu_mib, job.spec.mem_per_cpu_mib != 0)},
            {"minimum_cpus_per_node", number(job.spec.mincpus, job.spec.mincpus != 0)},
            {"overcommit", job.spec.overcommit},
            {"time_minimum", time_limit_minutes(job.spec.time_min_s)},
            {"wait_all_nodes", job.spec.wait_all_nodes},
            {"hint", job.spec.hint},
            {"kept_options", kept_options_json(job.spec.kept_options)}};
    out["time"] = json::object();
    add_usage_json(job.usage, out["time"], out);
    return out;
}

json node_to_json(const protocol::NodeInfo& node) {
    return {{"name", node.name},
            {"hostname", node.name},
            {"address", node.address},
            {"port", node.port},
            {"state", node_state_flags(node)},
            {"reason", node.reason},
            {"reason_set_by_user", node.reason_user},
            {"reason_changed_at", number(node.reason_time, node.reason_time != 0)},
            {"cpus", node.resources.cpus},
            {"sockets", node.resources.sockets},
            {"cores", node.resources.cores},
            {"alloc_cpus", node.cpus_alloc},
            {"real_memory", node.resources.memory_mib},
            {"alloc_memory", node.memory_alloc_mib},
            {"gres", node_gres(node)},
            {"partitions", node.partitions},
            {"boot_time", number(node.boot_time / 1000000, node.boot_time != 0)},
            {"last_busy", number(node.last_heartbeat, node.last_heartbeat != 0)}};
}

json step_to_json(const protocol::StepRecord& step) {
    json out = {{"step",
                 {{"id", std::to_string(step.job_id) + "." + std::to_string(step.step_id)},
                  {"name", step.name}}},
                {"state", json::array({std::string(job_state_name(step.state))})},
                {"nodes", {{"count", step.nodes.size()}, {"range", compress_hostlist(step.nodes)}}},
                {"tasks", {{"count", step.ntasks}}},
                {"time", {{"start", number(step.start_time)}, {"end", number(step.end_time)}}},
                {"exit_code", exit_code(step.exit_code, step.exit_signal, step.end_time != 0)}};
    add_usage_json(step.usage, out["time"], out);
    return out;
}

json wrap_payload(const char* key, json items) {
    return {{key, std::move(items)},
            {"meta", {{"plugin", {{"type", "cohort"}, {"name", "cohort"}}}}},
            {"errors", json::array()},
            {"warnings", json::array()}};
}

JsonPayloadStream::JsonPayloadStream(std::ostream& out, const char* key) : out_(out) {
    const std::string document = wrap_payload(key, json::array()).dump(2);
    const std::string empty_items = fmt::format("\"{}\": []", key);
    const size_t at = document.find(empty_items) + empty_items.size() - 1;  // at its ']'
    out_ << document.substr(0, at);
    after_items_ = document.substr(at);
}

void JsonPayloadStream::add(const json& item) {
    // An item of the document sits two levels deep: four more spaces on every line.
    const std::string text = item.dump(2);
    std::string indented;
    indented.reserve(text.size() + text.size() / 8);
    indented += empty_ ? "\n    " : ",\n    ";
    size_t line = 0;  // appended a line at a time: a character at a time was a tenth of --json
    for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', line)) {
        indented.append(text, line, end + 1 - line).append("    ");
        line = end + 1;
    }
    indented.append(text, line);
    out_ << indented;
    empty_ = false;
}

void JsonPayloadStream::finish() {
    out_ << (empty_ ? "" : "\n  ") << after_items_ << "\n";
}

// Local time as Slurm prints it, "Unknown" for 0.
std::string format_time(int64_t unix_seconds) {
    if (unix_seconds == 0) {
        return "Unknown";
    }
    std::time_t t = unix_seconds;
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
}

}  // namespace cohort::cli
