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

// Slurm's unset-able number: {"set": false, ...} when the value does not apply.
void write_number(JsonWriter& w, int64_t value, bool set = true, bool infinite = false) {
    w.begin_object()
            .member("set", set)
            .member("infinite", infinite)
            .member("number", set && !infinite ? value : 0)
            .end_object();
}

void write_time_limit_minutes(JsonWriter& w, int64_t seconds) {
    if (seconds < 0) {
        write_number(w, 0, true, true);
        return;
    }
    write_number(w, (seconds + 59) / 60);
}

// Slurm's mail_type array: the event names, none when no mail is asked for.
void write_mail_types(JsonWriter& w, uint32_t events) {
    w.begin_array();
    for (const std::string& name : split_comma_list(events == 0 ? "" : mail_type_name(events))) {
        w.value(name);
    }
    w.end_array();
}

void write_exit_code(JsonWriter& w, int32_t code, int32_t signal, bool finished) {
    const char* status = !finished     ? "PENDING"
                         : signal != 0 ? "SIGNALED"
                         : code != 0   ? "ERROR"
                                       : "SUCCESS";
    w.begin_object().key("status").begin_array().value(status).end_array();
    w.key("return_code");
    write_number(w, code, finished);
    w.key("signal").begin_object().key("id");
    write_number(w, signal, signal != 0);
    w.member("name", "").end_object();
    w.end_object();
}

int64_t total(const std::vector<uint32_t>& counts) {
    int64_t sum = 0;
    for (uint32_t c : counts) {
        sum += c;
    }
    return sum;
}

// CPU time as sacct --json gives it.
void write_cpu_time(JsonWriter& w, uint64_t usec) {
    w.begin_object()
            .member("seconds", usec / 1000000)
            .member("microseconds", usec % 1000000)
            .end_object();
}

// A job's or step's CPU time as members of its open `time` object.
void write_cpu_times(JsonWriter& w, const protocol::JobUsage& used) {
    write_cpu_time(w.key("user"), used.cpu_user_usec);
    write_cpu_time(w.key("system"), used.cpu_system_usec);
    write_cpu_time(w.key("total"), used.cpu_user_usec + used.cpu_system_usec);
}

// What a job or step used at most, as its open `usage` object's first members.
void write_peak_usage(JsonWriter& w, const protocol::JobUsage& used) {
    w.member("max_rss_kib", used.max_rss_kib)
            .member("max_rss_node", used.max_rss_node)
            .member("oom_kills", used.oom_kills);
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

void write_job_fields(JsonWriter& w, const protocol::JobRecord& job) {
    const bool finished = is_final(job.state);
    // Tasks and CPUs per task as the GPU options imply them (--cpus-per-gpu, ...).
    const protocol::JobSpec& spec = job.spec;
    const TaskGeometry geometry =
            gpu_shape(spec.gpu, {spec.nodes_min, spec.nodes_max, spec.ntasks, spec.ntasks_per_node,
                                 spec.cpus_per_task, spec.cpus_per_task_set, spec.mem_mib})
                    .geometry;
    w.member("job_id", job.job_id).member("name", spec.name);
    write_number(w.key("array_job_id"), static_cast<int64_t>(job.array_job_id),
                 job.is_array_task());
    write_number(w.key("array_task_id"), job.array_task_id,
                 job.is_array_task() && !job.is_array_remainder());
    w.member("array_task_string", job.array_pending);
    write_number(w.key("array_max_tasks"), job.array_max_running, job.array_max_running != 0);
    write_number(w.key("het_job_id"), static_cast<int64_t>(job.het_job_id), job.is_het_component());
    w.member("het_job_id_set", job.is_het_component() ? het_job_id_set(job) : "");
    write_number(w.key("het_job_offset"), job.het_job_offset, job.is_het_component());
    w.member("dependency", spec.dependency)
            .member("user_name", job.user_name)
            .member("user_id", job.uid)
            .member("group_id", job.gid)
            .member("partition", shown_partition(job))
            .member("account", spec.account)
            .member("qos", spec.qos);
    w.key("job_state").begin_array().value(job_state_name(job.state)).end_array();
    w.member("state_reason", job.reason).member("nodes", compress_hostlist(job.nodes));
    write_number(w.key("node_count"), job.nodes.empty() ? spec.nodes_min : job.nodes.size());
    write_number(w.key("cpus"), total(job.cpus_per_node));
    write_number(w.key("tasks"), geometry.ntasks, geometry.ntasks != 0);
    write_number(w.key("cpus_per_task"), geometry.cpus_per_task);
    write_number(w.key("tasks_per_node"), spec.ntasks_per_node, spec.ntasks_per_node != 0);
    write_number(w.key("memory_per_node"), spec.mem_mib, spec.mem_mib != 0);
    write_time_limit_minutes(w.key("time_limit"), job.time_limit_s);
    write_number(w.key("submit_time"), job.submit_time);
    write_number(w.key("eligible_time"), job.eligible_time);
    // A pending job's start is when the scheduler expects it.
    const int64_t start = job.state == JobState::kPending ? job.expected_start : job.start_time;
    write_number(w.key("start_time"), start, start != 0);
    write_number(w.key("end_time"), job.end_time, job.end_time != 0);
    write_number(w.key("priority"), job.priority);
    w.member("restart_cnt", job.restart_count).member("requeue", spec.requeue > 0);
    write_exit_code(w.key("exit_code"), job.exit_code, job.exit_signal, finished);
    w.member("standard_output", spec.output)
            .member("standard_error", spec.error)
            .member("current_working_directory", spec.cwd)
            .member("batch_flag", !job.interactive)
            .member("hold", job.held);
    w.key("comment").begin_object().member("job", spec.comment).end_object();
    write_mail_types(w.key("mail_type"), spec.mail_type);
    w.member("mail_user", spec.mail_user.empty() ? job.user_name : spec.mail_user)
            .member("excluded_nodes", compress_hostlist(spec.exclude))
            .member("required_nodes", compress_hostlist(spec.nodelist))
            .member("features", spec.constraint)
            .member("prefer", spec.prefer)
            .member("licenses", spec.licenses)
            .member("tres_per_node", tres_per_node(spec))
            .member("shared", node_sharing_name(spec.sharing))
            .member("exclusive", spec.sharing == protocol::NodeSharing::kExclusive
                                         || spec.sharing == protocol::NodeSharing::kExclusiveUser
                                         || spec.sharing == protocol::NodeSharing::kExclusiveMcs);
    write_number(w.key("memory_per_cpu"), spec.mem_per_cpu_mib, spec.mem_per_cpu_mib != 0);
    write_number(w.key("minimum_cpus_per_node"), spec.mincpus, spec.mincpus != 0);
    w.member("overcommit", spec.overcommit);
    write_time_limit_minutes(w.key("time_minimum"), spec.time_min_s);
    w.member("wait_all_nodes", spec.wait_all_nodes).member("hint", spec.hint);
    w.key("kept_options").begin_object();
    for (const auto& [name, value] : spec.kept_options) {
        w.member(name, value);
    }
    w.end_object();
    w.key("time").begin_object();
    write_cpu_times(w, job.usage);
    w.end_object();
    w.key("usage").begin_object();
    write_peak_usage(w, job.usage);
    w.end_object();
}

void write_node_fields(JsonWriter& w, const protocol::NodeInfo& node) {
    w.member("name", node.name)
            .member("hostname", node.name)
            .member("address", node.address)
            .member("port", node.port);
    // Slurm's base state and its flags: ["IDLE", "DRAIN"].
    w.key("state").begin_array().value(node_state_name(node.state));
    if (node.drain) {
        w.value("DRAIN");
    }
    w.end_array();
    w.member("reason", node.reason).member("reason_set_by_user", node.reason_user);
    write_number(w.key("reason_changed_at"), node.reason_time, node.reason_time != 0);
    w.member("cpus", node.resources.cpus)
            .member("sockets", node.resources.sockets)
            .member("cores", node.resources.cores)
            .member("alloc_cpus", node.cpus_alloc)
            .member("real_memory", node.resources.memory_mib)
            .member("alloc_memory", node.memory_alloc_mib)
            .member("gres", node_gres(node));
    w.key("partitions").begin_array();
    for (const std::string& partition : node.partitions) {
        w.value(partition);
    }
    w.end_array();
    write_number(w.key("boot_time"), node.boot_time / 1000000, node.boot_time != 0);
    write_number(w.key("last_busy"), node.last_heartbeat, node.last_heartbeat != 0);
}

void write_step_fields(JsonWriter& w, const protocol::StepRecord& step, int64_t gpu_seconds) {
    w.key("step")
            .begin_object()
            .member("id", std::to_string(step.job_id) + "." + std::to_string(step.step_id))
            .member("name", step.name)
            .end_object();
    w.key("state").begin_array().value(job_state_name(step.state)).end_array();
    w.key("nodes")
            .begin_object()
            .member("count", step.nodes.size())
            .member("range", compress_hostlist(step.nodes))
            .end_object();
    w.key("tasks").begin_object().member("count", step.ntasks).end_object();
    w.key("time").begin_object();
    write_number(w.key("start"), step.start_time);
    write_number(w.key("end"), step.end_time);
    write_cpu_times(w, step.usage);
    w.end_object();
    write_exit_code(w.key("exit_code"), step.exit_code, step.exit_signal, step.end_time != 0);
    w.key("usage").begin_object();
    write_peak_usage(w, step.usage);
    w.member("gpu_seconds", gpu_seconds).end_object();
}

JsonPayloadStream::JsonPayloadStream(std::ostream& out, const char* key)
    : out_(out), writer_(text_) {
    writer_.begin_object().key(key).begin_array();
}

void JsonPayloadStream::flush_when_full() {
    if (text_.size() >= 64 * 1024) {
        out_ << text_;
        text_.clear();
    }
}

void JsonPayloadStream::finish() {
    writer_.end_array();
    writer_.key("meta")
            .begin_object()
            .key("plugin")
            .begin_object()
            .member("type", "cohort")
            .member("name", "cohort")
            .end_object()
            .end_object();
    writer_.key("errors").begin_array().end_array();
    writer_.key("warnings").begin_array().end_array();
    writer_.end_object();
    out_ << text_ << "\n";
    text_.clear();
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
