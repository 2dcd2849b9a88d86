#include "scheduler/ctld/job.h"

#include <limits>

#include <fmt/format.h>

#include "scheduler/ctld/submit_validation.h"

namespace cohort::ctld {
namespace {

JobRequest request_from_spec(const protocol::JobSpec& spec) {
    JobRequest request;
    request.name = spec.name;
    request.partition = spec.partition;
    request.nodes_min = spec.nodes_min;
    request.nodes_max = spec.nodes_max;
    request.ntasks = spec.ntasks;
    request.ntasks_per_node = spec.ntasks_per_node;
    request.cpus_per_task = spec.cpus_per_task;
    request.cpus_per_task_set = spec.cpus_per_task_set;
    request.hold = spec.hold;
    request.kill_on_invalid_dep = spec.kill_on_invalid_dep;
    request.nice = spec.nice;
    request.mem_mib = spec.mem_mib;
    request.time_limit_s = spec.time_limit_s;
    request.output = spec.output;
    request.error = spec.error;
    request.cwd = spec.cwd;
    request.export_spec = spec.export_spec;
    request.dependency = spec.dependency;
    request.array = spec.array;
    request.begin_time = spec.begin_time;
    request.account = spec.account;
    request.qos = spec.qos;
    request.reservation = spec.reservation;
    request.gpu = JobGpuRequest(spec.gpu);
    request.switches = spec.switches;
    request.segment = spec.segment;
    request.switches_wait_s = spec.switches_wait_s;
    request.distribution = spec.distribution;
    request.requeue = spec.requeue;
    request.open_mode = spec.open_mode;
    request.signal = spec.signal;
    request.comment = spec.comment;
    request.mail_type = spec.mail_type;
    request.mail_user = spec.mail_user;
    request.exclude = spec.exclude;
    request.sharing = spec.sharing;
    request.mem_whole_node = spec.mem_whole_node;
    request.overcommit = spec.overcommit;
    request.wait_all_nodes = spec.wait_all_nodes;
    request.mincpus = spec.mincpus;
    request.mem_per_cpu_mib = spec.mem_per_cpu_mib;
    request.time_min_s = spec.time_min_s;
    request.constraint = spec.constraint;
    request.prefer = spec.prefer;
    request.licenses = spec.licenses;
    request.gres = spec.gres;
    request.hint = spec.hint;
    request.nodelist = spec.nodelist;
    request.kept_options = spec.kept_options;
    return request;
}

protocol::JobSpec spec_from_request(const JobRequest& request) {
    protocol::JobSpec spec;
    spec.name = request.name;
    spec.partition = request.partition;
    spec.nodes_min = request.nodes_min;
    spec.nodes_max = request.nodes_max;
    spec.ntasks = request.ntasks;
    spec.ntasks_per_node = request.ntasks_per_node;
    spec.cpus_per_task = request.cpus_per_task;
    spec.cpus_per_task_set = request.cpus_per_task_set;
    spec.hold = request.hold;
    spec.kill_on_invalid_dep = request.kill_on_invalid_dep;
    spec.nice = request.nice;
    spec.mem_mib = request.mem_mib;
    spec.time_limit_s = request.time_limit_s;
    spec.output = request.output;
    spec.error = request.error;
    spec.cwd = request.cwd;
    spec.export_spec = request.export_spec;
    spec.dependency = request.dependency;
    spec.array = request.array;
    spec.begin_time = request.begin_time;
    spec.account = request.account;
    spec.qos = request.qos;
    spec.reservation = request.reservation;
    spec.gpu = request.gpu.options();
    spec.switches = request.switches;
    spec.segment = request.segment;
    spec.switches_wait_s = request.switches_wait_s;
    spec.distribution = request.distribution;
    spec.requeue = request.requeue;
    spec.open_mode = request.open_mode;
    spec.signal = request.signal;
    spec.comment = request.comment;
    spec.mail_type = request.mail_type;
    spec.mail_user = request.mail_user;
    spec.exclude = request.exclude;
    spec.sharing = request.sharing;
    spec.mem_whole_node = request.mem_whole_node;
    spec.overcommit = request.overcommit;
    spec.wait_all_nodes = request.wait_all_nodes;
    spec.mincpus = request.mincpus;
    spec.mem_per_cpu_mib = request.mem_per_cpu_mib;
    spec.time_min_s = request.time_min_s;
    spec.constraint = request.constraint;
    spec.prefer = request.prefer;
    spec.licenses = request.licenses;
    spec.gres = request.gres;
    spec.hint = request.hint;
    spec.nodelist = request.nodelist;
    spec.kept_options = request.kept_options;
    return spec;
}

}  // namespace

JobGpuRequest::JobGpuRequest(const GpuOptions& options)
    : type(options.type),
      bind(options.bind),
      gpus(options.gpus),
      per_node(options.per_node),
      per_task(options.per_task),
      cpus_per_gpu(options.cpus_per_gpu),
      ntasks_per_gpu(options.ntasks_per_gpu),
      mem_per_gpu_mib(options.mem_per_gpu_mib) {}

GpuOptions JobGpuRequest::options() const {
    GpuOptions options;
    options.type = type;
    options.bind = bind;
    options.gpus = gpus;
    options.per_node = per_node;
    options.per_task = per_task;
    options.cpus_per_gpu = cpus_per_gpu;
    options.ntasks_per_gpu = ntasks_per_gpu;
    options.mem_per_gpu_mib = mem_per_gpu_mib;
    return options;
}

JobUsageSum::JobUsageSum(const protocol::JobUsage& usage)
    : cpu_user_usec(usage.cpu_user_usec),
      cpu_system_usec(usage.cpu_system_usec),
      max_rss_kib(usage.max_rss_kib),
      max_rss_node(usage.max_rss_node),
      oom_kills(usage.oom_kills) {}

protocol::JobUsage JobUsageSum::record() const {
    protocol::JobUsage usage;
    usage.cpu_user_usec = cpu_user_usec;
    usage.cpu_system_usec = cpu_system_usec;
    usage.max_rss_kib = max_rss_kib;
    usage.max_rss_node = max_rss_node;
    usage.oom_kills = oom_kills;
    return usage;
}

void JobUsageSum::add(const protocol::JobUsage& node) {
    protocol::JobUsage sum = record();
    sum.add(node);
    *this = JobUsageSum(sum);
}

TaskGeometry Job::geometry() const {
    return gpu_shape(spec.gpu.options(),
                     {spec.nodes_min, spec.nodes_max, spec.ntasks, spec.ntasks_per_node,
                      spec.cpus_per_task, spec.cpus_per_task_set, spec.mem_mib})
            .geometry;
}

std::string Job::display_id() const {
    if (is_het_component()) {
        return fmt::format("{}+{}", het_job_id, het_job_offset);
    }
    return is_array_task() ? fmt::format("{}_{}", array_job_id, array_task_id)
                           : std::to_string(job_id);
}

protocol::JobRecord to_columns_record(const Job& job) {
    protocol::JobRecord record;
    record.job_id = job.job_id;
    record.spec.name = job.spec.name;
    record.spec.account = job.spec.account;
    record.spec.qos = job.spec.qos;
    record.spec.mem_mib = job.spec.mem_mib;
    record.spec.nodes_min = job.spec.nodes_min;
    record.spec.ntasks = job.spec.ntasks;
    record.spec.ntasks_per_node = job.spec.ntasks_per_node;
    record.spec.cpus_per_task = job.spec.cpus_per_task;
    record.uid = job.uid;
    record.user_name = job.user_name;
    record.partition = job.partition;
    record.state = job.state;
    record.reason = job.reason;
    record.priority = job.priority;
    record.submit_time = job.submit_time;
    record.eligible_time = job.eligible_time;
    record.start_time = job.start_time;
    record.end_time = job.end_time;
    record.time_limit_s = job.time_limit_s;
    record.nodes = job.nodes;
    record.cpus_per_node = job.cpus_per_node;
    record.mem_per_node_mib = job.mem_per_node_mib;
    record.expected_start = job.expected_start;
    record.array_job_id = job.array_job_id;
    record.array_task_id = job.array_task_id;
    record.array_max_running = job.array_max_running;
    record.het_job_id = job.het_job_id;
    record.het_job_offset = job.het_job_offset;
    record.het_size = job.het_size;
    return record;
}

protocol::JobRecord to_record(const Job& job) {
    protocol::JobRecord record = to_columns_record(job);
    record.spec = spec_from_request(job.spec);
    record.gid = job.gid;
    record.final_state = job.final_state;
    record.held = job.held;
    record.interactive = job.interactive;
    record.exit_code = job.exit_code;
    record.exit_signal = job.exit_signal;
    record.restart_count = job.restart_count;
    record.next_step_id = job.next_step_id;
    record.tasks_per_node = job.tasks_per_node;
    record.nodes_cleaning = job.nodes_cleaning;
    record.gpu_alloc = job.gpu_alloc;
    record.array_count = job.array_count;
    record.array_min = job.array_min;
    record.array_max = job.array_max;
    record.array_step = job.array_step;
    record.failed_nodes = job.failed_nodes;
    record.requeue_action = job.requeue_action;
    record.usage = job.usage.record();
    return record;
}

protocol::JobEndTimeMessage end_time_of(const Job& job) {
    return {job.job_id, job.restart_count,
            job.time_limit_s < 0 ? -1 : job.start_time + job.time_limit_s};
}

Job job_from_record(const protocol::JobRecord& record) {
    Job job;
    job.job_id = record.job_id;
    job.spec = request_from_spec(record.spec);
    job.uid = record.uid;
    job.gid = record.gid;
    job.user_name = record.user_name;
    job.partition = record.partition;
    job.state = record.state;
    job.final_state = record.final_state;
    job.held = record.held;
    job.interactive = record.interactive;
    job.reason = record.reason;
    job.priority = record.priority;
    job.submit_time = record.submit_time;
    job.eligible_time = record.eligible_time;
    job.start_time = record.start_time;
    job.end_time = record.end_time;
    job.time_limit_s = record.time_limit_s;
    job.mem_per_node_mib = record.mem_per_node_mib;
    job.expected_start = record.expected_start;
    job.exit_code = record.exit_code;
    job.exit_signal = record.exit_signal;
    job.restart_count = record.restart_count;
    job.next_step_id = record.next_step_id;
    job.nodes = record.nodes;
    job.tasks_per_node = record.tasks_per_node;
    job.cpus_per_node = record.cpus_per_node;
    job.nodes_cleaning = record.nodes_cleaning;
    job.gpu_alloc = record.gpu_alloc;
    job.array_job_id = record.array_job_id;
    job.array_task_id = record.array_task_id;
    job.array_max_running = record.array_max_running;
    job.array_count = record.array_count;
    job.array_min = record.array_min;
    job.array_max = record.array_max;
    job.array_step = record.array_step;
    job.failed_nodes = record.failed_nodes;
    job.usage = JobUsageSum(record.usage);
    job.requeue_action = record.requeue_action;
    job.het_job_id = record.het_job_id;
    job.het_job_offset = record.het_job_offset;
    job.het_size = record.het_size;
    job.resources = request_of(record.spec);
    return job;
}

std::string ArrayRemainder::display_id() const {
    return to_record(*this).display_id();
}

protocol::JobRecord to_record(const ArrayRemainder& remainder) {
    protocol::JobRecord record = to_record(remainder.job);
    record.array_pending = remainder.pending.to_string();
    return record;
}

protocol::JobRecord to_columns_record(const ArrayRemainder& remainder) {
    protocol::JobRecord record = to_columns_record(remainder.job);
    record.array_pending = remainder.pending.to_string();
    return record;
}

Result<ArrayRemainder> remainder_from_record(const protocol::JobRecord& record) {
    constexpr uint32_t kAnyIndex = std::numeric_limits<uint32_t>::max();
    auto pending = sched::parse_array_spec(record.array_pending, kAnyIndex);
    auto all = sched::parse_array_spec(record.spec.array, kAnyIndex);
    if (!pending || !all) {
        return Status::corrupt(
                fmt::format("array {}: stored task indexes '{}' of '{}' do not parse",
                            record.job_id, record.array_pending, record.spec.array));
    }
    return ArrayRemainder{job_from_record(record), std::move(pending->indexes),
                          std::move(all->indexes)};
}

}  // namespace cohort::ctld
