#include "launcher/batch_record.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "launcher/spool_file.h"

namespace cohort::agent {

namespace fs = std::filesystem;

BatchFiles batch_files(const std::string& spool_dir, uint64_t job_id) {
    const std::string stem = spool_dir + "/job" + std::to_string(job_id);
    return {stem + ".sh", stem + ".status", stem + ".run"};
}

Status write_batch_record(const std::string& path, const BatchRecord& record) {
    const nlohmann::json doc{
            {"job_id", record.job_id},     {"attempt", record.attempt},
            {"shepherd", record.shepherd}, {"shepherd_start", record.shepherd_start},
            {"end_time", record.end_time}, {"signal", record.signal},
            {"warned", record.warned}};
    return replace_file(path, doc.dump() + "\n");
}

Result<BatchRecord> read_batch_record(const std::string& path) {
    std::ifstream in(path);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) {
        return Status::invalid(path + ": not a batch record");
    }
    try {
        BatchRecord record;
        record.job_id = doc.at("job_id").get<uint64_t>();
        record.attempt = doc.at("attempt").get<uint32_t>();
        record.shepherd = doc.at("shepherd").get<pid_t>();
        record.shepherd_start = doc.at("shepherd_start").get<uint64_t>();
        record.end_time = doc.at("end_time").get<int64_t>();
        record.signal = doc.at("signal").get<std::string>();
        record.warned = doc.at("warned").get<bool>();
        return record;
    } catch (const nlohmann::json::exception& e) {
        return Status::invalid(path + ": " + e.what());
    }
}

std::vector<std::string> batch_record_paths(const std::string& spool_dir) {
    std::vector<std::string> paths;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(spool_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("job", 0) == 0 && entry.path().extension() == ".run") {
            paths.push_back(entry.path().string());
        }
    }
    return paths;
}

std::optional<BatchExit> read_batch_exit(const std::string& status_path) {
    std::ifstream in(status_path);
    BatchExit exit;
    if (!(in >> exit.exit_code >> exit.signal)) {
        return std::nullopt;
    }
    std::getline(in >> std::ws, exit.error);
    return exit;
}

uint64_t process_start_ticks(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat)) {
        return 0;
    }
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const size_t name_end = stat.rfind(')');
    if (name_end == std::string::npos) {
        return 0;
    }
    std::istringstream fields(stat.substr(name_end + 2));
    std::string field;
    // Field 3 (state) is the first here; the start time is field 22. A zombie counts as gone.
    for (int i = 3; i <= 22 && fields >> field; ++i) {
        if (i == 3 && field == "Z") {
            return 0;
        }
        if (i == 22) {
            return std::strtoull(field.c_str(), nullptr, 10);
        }
    }
    return 0;
}

bool shepherd_running(const BatchRecord& record) {
    return record.shepherd > 0 && record.shepherd_start != 0
           && process_start_ticks(record.shepherd) == record.shepherd_start;
}

}  // namespace cohort::agent
