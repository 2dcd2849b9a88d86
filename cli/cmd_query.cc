// cohort queue / nodes / show / acct (squeue, sinfo, scontrol show job, sacct).
#include <cstdio>
#include <ctime>
#include <iostream>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "common/hostlist.h"
#include "common/time_spec.h"
#include "common/topology/topology_report.h"

namespace cohort::cli {
namespace {

std::string fit(const std::string& text, size_t width) {
    return text.size() > width ? text.substr(0, width) : text;
}

int64_t elapsed_of(const protocol::JobRecord& job) {
    if (job.start_time == 0) {
        return 0;
    }
    int64_t end = job.end_time != 0 ? job.end_time : static_cast<int64_t>(std::time(nullptr));
    return std::max<int64_t>(end - job.start_time, 0);
}

void print_queue_header() {
    std::printf("%18s %9s %8s %8s %2s %10s %6s %s\n", "JOBID", "PARTITION", "NAME", "USER", "ST",
                "TIME", "NODES", "NODELIST(REASON)");
}

void print_queue_row(const protocol::JobRecord& job) {
    std::string where =
            job.state == JobState::kPending ? "(" + job.reason + ")" : compress_hostlist(job.nodes);
    size_t node_count =
            job.nodes.empty() ? std::max<uint32_t>(job.spec.nodes_min, 1) : job.nodes.size();
    std::printf("%18s %9s %8s %8s %2s %10s %6zu %s\n", job.display_id().c_str(),
                fit(job.partition, 9).c_str(), fit(job.spec.name, 8).c_str(),
                fit(job.user_name, 8).c_str(), std::string(job_state_code(job.state)).c_str(),
                format_duration(elapsed_of(job)).c_str(), node_count, where.c_str());
}

// As squeue --start: pending jobs only, with the planned start (N/A when none).
void print_start_header() {
    std::printf("%18s %9s %8s %8s %2s %19s %6s %s\n", "JOBID", "PARTITION", "NAME", "USER", "ST",
                "START_TIME", "NODES", "NODELIST(REASON)");
}

void print_start_row(const protocol::JobRecord& job) {
    std::string when = job.expected_start != 0 ? format_time(job.expected_start) : "N/A";
    std::printf("%18s %9s %8s %8s %2s %19s %6u %s\n", job.display_id().c_str(),
                fit(job.partition, 9).c_str(), fit(job.spec.name, 8).c_str(),
                fit(job.user_name, 8).c_str(), "PD", when.c_str(),
                std::max<uint32_t>(job.spec.nodes_min, 1), ("(" + job.reason + ")").c_str());
}

void print_acct_job(const protocol::JobRecord& job) {
    std::string exit = std::to_string(job.exit_code) + ":" + std::to_string(job.exit_signal);
    std::printf("%-12s %-10s %-9s %-8s %10s %8s %-19s %-19s %s\n", job.display_id().c_str(),
                fit(job.spec.name, 10).c_str(), fit(job.partition, 9).c_str(),
                fit(job.user_name, 8).c_str(), std::string(job_state_name(job.state)).c_str(),
                exit.c_str(), format_time(job.start_time).c_str(),
                format_time(job.end_time).c_str(), compress_hostlist(job.nodes).c_str());
}

void print_acct_step(const protocol::JobRecord& job, const protocol::StepRecord& step) {
    std::string id = job.display_id() + "." + std::to_string(step.step_id);
    std::string exit = std::to_string(step.exit_code) + ":" + std::to_string(step.exit_signal);
    std::printf("%-12s %-10s %-9s %-8s %10s %8s %-19s %-19s %s\n", id.c_str(),
                fit(step.name, 10).c_str(), "", "", std::string(job_state_name(step.state)).c_str(),
                exit.c_str(), format_time(step.start_time).c_str(),
                format_time(step.end_time).c_str(), compress_hostlist(step.nodes).c_str());
}

}  // namespace

int cmd_queue(const Args& args) {
    CLI::App app{"List pending and running jobs (squeue)"};
    bool json = false;
    bool start = false;
    std::string user, states_text;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_option("-u,--user", user, "only this user's jobs");
    app.add_option("-t,--states", states_text, "only these states, e.g. PD,R");
    app.add_flag("--start", start, "pending jobs with the start the scheduler plans for them");
    if (int rc = parse_args(app, "queue", args); rc >= 0) {
        return rc;
    }
    auto states = parse_job_states("--states", states_text);
    if (!states) {
        return report_error("queue", states.status());
    }
    protocol::QueryJobsRequest request;
    request.user = user;
    request.states = *states;
    nlohmann::json jobs = nlohmann::json::array();
    bool header_printed = false;
    Status listed = ask_job_list(request, [&](protocol::JobListReply& frame) {
        if (!json && !header_printed) {
            start ? print_start_header() : print_queue_header();
            header_printed = true;
        }
        for (const auto& job : frame.jobs) {
            if (json) {
                jobs.push_back(job_to_json(job));
            } else if (!start) {
                print_queue_row(job);
            } else if (job.state == JobState::kPending) {
                print_start_row(job);
            }
        }
    });
    if (!listed) {
        return report_error("queue", listed);
    }
    if (json) {
        std::cout << wrap_payload("jobs", jobs).dump(2) << "\n";
    }
    return 0;
}

int cmd_nodes(const Args& args) {
    CLI::App app{"List nodes (sinfo -N)"};
    bool json = false;
    std::string topology_of;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_option("--topology", topology_of,
                   "print NODE's GPU link matrix, NUMA nodes, local CPUs and closest NICs");
    if (int rc = parse_args(app, "nodes", args); rc >= 0) {
        return rc;
    }
    auto reply = ask<protocol::NodeListReply>(protocol::QueryNodesRequest{topology_of});
    if (!reply) {
        return report_error("nodes", reply.status());
    }
    if (!topology_of.empty()) {
        const protocol::NodeInfo& node = reply->nodes.front();
        const topology::NodeTopology& t = node.resources.topology;
        std::cout << (json ? topology::topology_json(t)
                           : node.name
                                      + (node.resources.gpu_type.empty()
                                                 ? ""
                                                 : " (gpu type " + node.resources.gpu_type + ")")
                                      + "\n" + topology::topology_text(t));
        return 0;
    }
    if (json) {
        nlohmann::json nodes = nlohmann::json::array();
        for (const auto& node : reply->nodes) {
            nodes.push_back(node_to_json(node));
        }
        std::cout << wrap_payload("nodes", nodes).dump(2) << "\n";
        return 0;
    }
    std::printf("%-12s %-10s %9s %10s %5s %-12s %s\n", "NODELIST", "STATE", "CPUS(A/T)", "MEMORY",
                "GPUS", "PARTITION", "REASON");
    for (const auto& node : reply->nodes) {
        std::string partitions;
        for (const auto& p : node.partitions) {
            partitions += (partitions.empty() ? "" : ",") + p;
        }
        std::string cpus =
                std::to_string(node.cpus_alloc) + "/" + std::to_string(node.resources.cpus);
        std::printf("%-12s %-10s %9s %10lld %5d %-12s %s\n", node.name.c_str(),
                    std::string(node_state_name(node.state)).c_str(), cpus.c_str(),
                    static_cast<long long>(node.resources.memory_mib), node.resources.gpus,
                    partitions.c_str(), node.reason.c_str());
    }
    return 0;
}

int cmd_show(const Args& args) {
    CLI::App app{"Show one job (scontrol show job): cohort show job ID"};
    bool json = false;
    std::string what;
    uint64_t job_id = 0;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_option("what", what, "job")->required();
    app.add_option("id", job_id, "job id")->required();
    if (int rc = parse_args(app, "show", args); rc >= 0) {
        return rc;
    }
    if (what != "job") {
        return report_error("show",
                            Status::invalid("invalid entity '" + what + "' (accepted: job)"));
    }
    protocol::QueryJobsRequest request;
    request.job_ids = {job_id};
    request.states = {JobState::kPending, JobState::kRunning, JobState::kCompleting};
    std::vector<protocol::JobRecord> found;
    auto keep = [&found](protocol::JobListReply& frame) {
        std::move(frame.jobs.begin(), frame.jobs.end(), std::back_inserter(found));
    };
    Status listed = ask_job_list(request, keep);
    if (listed && found.empty()) {
        protocol::AcctQueryRequest acct;
        acct.job_ids = {job_id};
        listed = ask_job_list(acct, keep);
    }
    if (!listed) {
        return report_error("show", listed);
    }
    if (found.empty()) {
        return report_error("show", Status::not_found(fmt::format("job {}: no such job", job_id)));
    }
    const protocol::JobRecord& job = found.front();
    if (json) {
        std::cout << wrap_payload("jobs", nlohmann::json::array({job_to_json(job)})).dump(2)
                  << "\n";
        return 0;
    }
    std::cout << "JobId=" << job.job_id;
    if (job.is_array_task()) {
        std::cout << " ArrayJobId=" << job.array_job_id << " ArrayTaskId=" << job.array_task_id;
    }
    std::cout << " JobName=" << job.spec.name << "\n"
              << "   UserId=" << job.user_name << "(" << job.uid << ") GroupId=" << job.gid << "\n"
              << "   JobState=" << job_state_name(job.state) << " Reason=" << job.reason
              << " ExitCode=" << job.exit_code << ":" << job.exit_signal << "\n"
              << "   RunTime=" << format_duration(elapsed_of(job))
              << " TimeLimit=" << format_duration(job.time_limit_s) << "\n"
              << "   SubmitTime=" << format_time(job.submit_time)
              << " StartTime=" << format_time(job.start_time)
              << " EndTime=" << format_time(job.end_time) << "\n"
              << "   Partition=" << job.partition << " NodeList=" << compress_hostlist(job.nodes)
              << "\n"
              << "   NumNodes=" << job.nodes.size() << " NumTasks=" << job.spec.ntasks
              << " CPUs/Task=" << job.spec.cpus_per_task << " MinMemoryNode=" << job.spec.mem_mib
              << "M\n";
    if (job.spec.switches > 0) {
        // Without @max-wait the cluster's max_switch_wait applies.
        std::cout << "   Switches=" << job.spec.switches
                  << (job.spec.switches_wait_s >= 0
                              ? "@" + format_duration(job.spec.switches_wait_s)
                              : "")
                  << "\n";
    }
    std::cout << "   WorkDir=" << job.spec.cwd << "\n"
              << "   StdOut=" << (job.spec.output.empty() ? "slurm-%j.out" : job.spec.output)
              << "\n";
    return 0;
}

int cmd_acct(const Args& args) {
    CLI::App app{"Accounting records of jobs and steps (sacct)"};
    bool json = false;
    std::string user, states_text, jobs_text;
    app.add_flag("--json", json, "print Slurm-shaped JSON");
    app.add_option("-u,--user", user, "only this user's jobs");
    app.add_option("-s,--state", states_text, "only these states, e.g. CD,F");
    app.add_option("-j,--jobs", jobs_text, "only these job ids, comma separated");
    if (int rc = parse_args(app, "acct", args); rc >= 0) {
        return rc;
    }
    protocol::AcctQueryRequest request;
    request.user = user;
    auto states = parse_job_states("--state", states_text);
    if (!states) {
        return report_error("acct", states.status());
    }
    request.states = *states;
    for (size_t start = 0; !jobs_text.empty() && start <= jobs_text.size();) {
        size_t comma = jobs_text.find(',', start);
        std::string id = jobs_text.substr(start, comma - start);
        char* end = nullptr;
        uint64_t value = std::strtoull(id.c_str(), &end, 10);
        if (id.empty() || *end != '\0' || value == 0) {
            return report_error("acct", Status::invalid("--jobs: invalid job id '" + id
                                                        + "' (accepted: comma-separated job ids)"));
        }
        request.job_ids.push_back(value);
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    nlohmann::json jobs = nlohmann::json::array();
    bool header_printed = false;
    Status listed = ask_job_list(request, [&](protocol::JobListReply& frame) {
        std::map<uint64_t, std::vector<const protocol::StepRecord*>> steps_of;
        for (const auto& step : frame.steps) {
            steps_of[step.job_id].push_back(&step);
        }
        if (!json && !header_printed) {
            std::printf("%-12s %-10s %-9s %-8s %10s %8s %-19s %-19s %s\n", "JobID", "JobName",
                        "Partition", "User", "State", "ExitCode", "Start", "End", "NodeList");
            header_printed = true;
        }
        for (const auto& job : frame.jobs) {
            const auto& steps = steps_of[job.job_id];
            if (json) {
                nlohmann::json entry = job_to_json(job);
                entry["steps"] = nlohmann::json::array();
                for (const protocol::StepRecord* step : steps) {
                    entry["steps"].push_back(step_to_json(*step));
                }
                jobs.push_back(std::move(entry));
                continue;
            }
            print_acct_job(job);
            for (const protocol::StepRecord* step : steps) {
                print_acct_step(job, *step);
            }
        }
    });
    if (!listed) {
        return report_error("acct", listed);
    }
    if (json) {
        std::cout << wrap_payload("jobs", jobs).dump(2) << "\n";
    }
    return 0;
}

}  // namespace cohort::cli
