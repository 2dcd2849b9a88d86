#include "launcher/step_record.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "launcher/batch_record.h"
#include "launcher/spool_file.h"

namespace cohort::agent {

namespace fs = std::filesystem;

std::string step_record_path(const std::string& spool_dir, uint64_t job_id, uint32_t step_id) {
    return fmt::format("{}/step{}.{}.run", spool_dir, job_id, step_id);
}

std::string step_task_status_path(const std::string& spool_dir,
                                  uint64_t job_id,
                                  uint32_t step_id,
                                  uint32_t rank) {
    return fmt::format("{}/step{}.{}.{}.status", spool_dir, job_id, step_id, rank);
}

Status write_step_record(const std::string& path, const StepRecord& record) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const StepTaskRecord& task : record.tasks) {
        tasks.push_back({{"rank", task.rank},
                         {"shepherd", task.shepherd},
                         {"shepherd_start", task.shepherd_start},
                         {"out_fd", task.out_fd},
                         {"err_fd", task.err_fd}});
    }
    const nlohmann::json doc{{"job_id", record.job_id},
                             {"step_id", record.step_id},
                             {"local_job", record.local_job},
                             {"attempt", record.attempt},
                             {"node_index", record.node_index},
                             {"client_host", record.client_host},
                             {"client_port", record.client_port},
                             {"owner_uid", record.owner_uid},
                             {"job_end_time", record.job_end_time},
                             {"job_signal", record.job_signal},
                             {"signal", record.signal},
                             {"warned", record.warned},
                             {"step_manager", record.step_manager},
                             {"step_manager_start", record.step_manager_start},
                             {"shm_dir", record.shm_dir},
                             {"tasks", tasks}};
    return replace_file(path, doc.dump() + "\n");
}

Result<StepRecord> read_step_record(const std::string& path) {
    std::ifstream in(path);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) {
        return Status::invalid(path + ": not a step record");
    }
    try {
        StepRecord record;
        record.job_id = doc.at("job_id").get<uint64_t>();
        record.step_id = doc.at("step_id").get<uint32_t>();
        record.local_job = doc.at("local_job").get<uint64_t>();
        record.attempt = doc.at("attempt").get<uint32_t>();
        record.node_index = doc.at("node_index").get<uint32_t>();
        record.client_host = doc.at("client_host").get<std::string>();
        record.client_port = doc.at("client_port").get<uint16_t>();
        record.owner_uid = doc.at("owner_uid").get<uint32_t>();
        record.job_end_time = doc.at("job_end_time").get<int64_t>();
        record.job_signal = doc.at("job_signal").get<std::string>();
        record.signal = doc.at("signal").get<std::string>();
        record.warned = doc.at("warned").get<bool>();
        record.step_manager = doc.at("step_manager").get<pid_t>();
        record.step_manager_start = doc.at("step_manager_start").get<uint64_t>();
        record.shm_dir = doc.at("shm_dir").get<std::string>();
        for (const auto& task : doc.at("tasks")) {
            record.tasks.push_back({task.at("rank").get<uint32_t>(),
                                    task.at("shepherd").get<pid_t>(),
                                    task.at("shepherd_start").get<uint64_t>(),
                                    task.at("out_fd").get<int>(), task.at("err_fd").get<int>()});
        }
        return record;
    } catch (const nlohmann::json::exception& e) {
        return Status::invalid(path + ": " + e.what());
    }
}

std::vector<std::string> step_record_paths(const std::string& spool_dir) {
    std::vector<std::string> paths;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(spool_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("step", 0) == 0 && entry.path().extension() == ".run") {
            paths.push_back(entry.path().string());
        }
    }
    return paths;
}

bool same_process_running(pid_t pid, uint64_t start_ticks) {
    return pid > 0 && start_ticks != 0 && process_start_ticks(pid) == start_ticks;
}

std::vector<pid_t> recorded_processes(const std::string& spool_dir) {
    std::vector<pid_t> running;
    for (const std::string& path : batch_record_paths(spool_dir)) {
        auto record = read_batch_record(path);
        if (record && shepherd_running(*record)) {
            running.push_back(record->shepherd);
        }
    }
    for (const std::string& path : step_record_paths(spool_dir)) {
        auto record = read_step_record(path);
        if (!record) {
            continue;
        }
        for (const StepTaskRecord& task : record->tasks) {
            if (same_process_running(task.shepherd, task.shepherd_start)) {
                running.push_back(task.shepherd);
            }
        }
        if (same_process_running(record->step_manager, record->step_manager_start)) {
            running.push_back(record->step_manager);
        }
    }
    return running;
}

}  // namespace cohort::agent
