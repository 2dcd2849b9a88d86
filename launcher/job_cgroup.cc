#include "launcher/job_cgroup.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <signal.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "launcher/device_filter.h"

namespace cohort::agent {
namespace {

namespace fs = std::filesystem;

constexpr long kCgroupMagic = 0x27e0eb;     // CGROUP_SUPER_MAGIC: a v1 hierarchy
constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC

bool mounted_as(const std::string& path, long magic) {
    struct statfs info {};

    return statfs(path.c_str(), &info) == 0 && info.f_type == magic;
}

// The agent's own cgroup in the v1 hierarchy of `controller`, or in v2 with "".
std::string own_cgroup(const std::string& controller) {
    std::ifstream in("/proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
        const size_t first = line.find(':');
        const size_t second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) {
            continue;
        }
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (controller.empty()
                    ? controllers.empty() && line.compare(0, first, "0") == 0
                    : ("," + controllers + ",").find("," + controller + ",") != std::string::npos) {
            return path == "/" ? "" : path;
        }
    }
    return "";
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    return text;
}

Status write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text << std::flush;
    if (!out) {
        return Status::io_error(
                fmt::format("cannot write '{}' to {}: {}", text, path, std::strerror(errno)));
    }
    return Status::ok();
}

Status make_dir(const std::string& path) {
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec) {
        return Status::io_error(fmt::format("cannot create {}: {}", path, ec.message()));
    }
    return Status::ok();
}

// "0-3,8" <-> {0, 1, 2, 3, 8}, as cpuset files write CPU lists.
std::set<int> parse_cpu_list(const std::string& text) {
    std::set<int> cpus;
    std::stringstream in(text);
    for (std::string range; std::getline(in, range, ',');) {
        const size_t dash = range.find('-');
        try {
            const int low = std::stoi(range.substr(0, dash));
            const int high = dash == std::string::npos ? low : std::stoi(range.substr(dash + 1));
            for (int cpu = low; cpu <= high; ++cpu) {
                cpus.insert(cpu);
            }
        } catch (const std::exception&) {
            continue;  // an empty list
        }
    }
    return cpus;
}

std::string cpu_list(const std::set<int>& cpus) {
    std::string out;
    for (int cpu : cpus) {
        out += (out.empty() ? "" : ",") + std::to_string(cpu);
    }
    return out;
}

// A v1 cpuset accepts processes only once its cpus and mems are set: the node's directory
// takes its parent's.
Status inherit_cpuset(const std::string& dir) {
    const std::string parent = fs::path(dir).parent_path().string();
    for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
        if (read_text(dir + "/" + file).empty()) {
            if (Status written = write_text(dir + "/" + file, read_text(parent + "/" + file));
                !written) {
                return written;
            }
        }
    }
    return Status::ok();
}

std::vector<pid_t> read_pids(const std::string& procs_file) {
    std::vector<pid_t> pids;
    std::ifstream in(procs_file);
    for (pid_t pid = 0; in >> pid;) {
        pids.push_back(pid);
    }
    return pids;
}

uint64_t number_in(const std::string& text) {
    try {
        return std::stoull(text);
    } catch (const std::exception&) {
        return 0;  // absent (an older kernel, a controller not enabled) or "max"
    }
}

// The value of `key` in a flat keyed file ("user_usec 1200\nsystem_usec 300").
uint64_t keyed_number(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    for (std::string name, value; in >> name >> value;) {
        if (name == key) {
            return number_in(value);
        }
    }
    return 0;
}

// Polls `done` every 5 ms for at most `limit_ms`.
template <typename Predicate>
bool polled_for(int limit_ms, Predicate done) {
    for (int waited = 0; waited < limit_ms; waited += 5) {
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
}

}  // namespace

JobCgroups::JobCgroups(const std::string& mode,
                       const std::string& mount,
                       const std::string& agent_dir,
                       int64_t pids_max)
    : pids_max_(pids_max) {
    const std::string leaf = "/" + agent_dir;
    if (mode == "none") {
        why_disabled_ = "the config's cgroup is none";
        return;
    }
    const bool v1_here = mounted_as(mount + "/freezer", kCgroupMagic);
    if (mode == "v1" || (mode == "auto" && v1_here)) {
        if (!v1_here) {
            why_disabled_ = "no v1 freezer hierarchy at " + mount + "/freezer";
            return;
        }
        freezer_ = mount + "/freezer" + own_cgroup("freezer") + leaf;
        if (Status made = make_dir(freezer_); !made) {
            why_disabled_ = made.message();
            return;
        }
        if (mounted_as(mount + "/memory", kCgroupMagic)) {
            memory_ = mount + "/memory" + own_cgroup("memory") + leaf;
            if (!make_dir(memory_)) {
                memory_.clear();
            }
        }
        if (pids_max_ > 0 && mounted_as(mount + "/pids", kCgroupMagic)) {
            pids_ = mount + "/pids" + own_cgroup("pids") + leaf;
            if (!make_dir(pids_)) {
                pids_.clear();
            }
        }
        if (mounted_as(mount + "/devices", kCgroupMagic)) {
            devices_ = mount + "/devices" + own_cgroup("devices") + leaf;
            if (!make_dir(devices_)) {
                devices_.clear();
            }
        }
        if (mounted_as(mount + "/cpuacct", kCgroupMagic)) {
            cpuacct_ = mount + "/cpuacct" + own_cgroup("cpuacct") + leaf;
            if (!make_dir(cpuacct_)) {
                cpuacct_.clear();
            }
        }
        if (mounted_as(mount + "/cpuset", kCgroupMagic)) {
            cpuset_ = mount + "/cpuset" + own_cgroup("cpuset") + leaf;
            if (!make_dir(cpuset_) || !inherit_cpuset(cpuset_)) {
                cpuset_.clear();
            }
        }
        version_ = CgroupVersion::kV1;
        return;
    }
    std::string root;
    if (mounted_as(mount, kCgroup2Magic)) {
        root = mount;
    } else if (mounted_as(mount + "/unified", kCgroup2Magic)) {
        root = mount + "/unified";
    } else {
        why_disabled_ = "no cgroup2 hierarchy at " + mount + " or " + mount + "/unified";
        return;
    }
    unified_ = root + own_cgroup("") + leaf;
    if (Status made = make_dir(unified_); !made) {
        why_disabled_ = made.message();
        return;
    }
    // Limits need the controllers delegated to the node's directory; tracking does not.
    write_text(unified_ + "/cgroup.subtree_control", "+memory +cpuset +pids");
    version_ = CgroupVersion::kV2;
}

JobCgroups::~JobCgroups() {
    for (const std::string& base : bases()) {
        rmdir(base.c_str());  // fails, as it should, while a job's directory remains
    }
}

std::string JobCgroups::job_dir(const std::string& base, uint64_t job_id) const {
    return base + "/job_" + std::to_string(job_id);
}

std::string JobCgroups::step_dir(const std::string& base,
                                 uint64_t job_id,
                                 const std::string& step) const {
    return job_dir(base, job_id) + "/step_" + step;
}

std::vector<std::string> JobCgroups::tracking_dirs(uint64_t job_id) const {
    const std::string job = job_dir(version_ == CgroupVersion::kV1 ? freezer_ : unified_, job_id);
    std::vector<std::string> dirs = {job};
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(job, ec)) {
        if (entry.is_directory(ec) && entry.path().filename().string().rfind("step_", 0) == 0) {
            dirs.push_back(entry.path().string());
        }
    }
    return dirs;
}

std::vector<std::string> JobCgroups::bases() const {
    std::vector<std::string> out;
    for (const std::string* base :
         {&freezer_, &memory_, &cpuset_, &cpuacct_, &pids_, &devices_, &unified_}) {
        if (!base->empty()) {
            out.push_back(*base);
        }
    }
    return out;
}

Status JobCgroups::create(uint64_t job_id,
                          const std::vector<int>& cpus,
                          int64_t memory_mib,
                          const std::vector<std::string>& denied_devices) const {
    if (!enabled()) {
        return Status::ok();
    }
    const std::string tracker =
            job_dir(version_ == CgroupVersion::kV1 ? freezer_ : unified_, job_id);
    if (fs::exists(tracker)) {
        return Status::ok();  // a later step of the job: its limits stand
    }
    for (const std::string& base : bases()) {
        if (Status made = make_dir(job_dir(base, job_id)); !made) {
            return made;
        }
    }
    if (version_ == CgroupVersion::kV2) {
        // Its processes live in its steps' cgroups, so the job's may hand its controllers
        // down (v2 allows that only to a cgroup with no processes of its own).
        write_text(job_dir(unified_, job_id) + "/cgroup.subtree_control", "+memory +pids");
    }
    const std::string memory_dir =
            job_dir(version_ == CgroupVersion::kV1 ? memory_ : unified_, job_id);
    const char* memory_file =
            version_ == CgroupVersion::kV1 ? "memory.limit_in_bytes" : "memory.max";
    if (memory_mib > 0 && fs::exists(memory_dir + "/" + memory_file)) {
        const std::string bytes = std::to_string(memory_mib << 20);
        if (Status limited = write_text(memory_dir + "/" + memory_file, bytes); !limited) {
            return limited;
        }
        // Nor may the job go past its memory into swap, where the host has swap accounting.
        const char* swap_file =
                version_ == CgroupVersion::kV1 ? "memory.memsw.limit_in_bytes" : "memory.swap.max";
        if (fs::exists(memory_dir + "/" + swap_file)) {
            write_text(memory_dir + "/" + swap_file, version_ == CgroupVersion::kV1 ? bytes : "0");
        }
    }
    // Denied before any process enters; its steps' cgroups inherit the list when made (v1),
    // or run the job's program (v2).
    if (version_ == CgroupVersion::kV2 && !denied_devices.empty()) {
        if (Status denied = deny_devices_v2(job_dir(unified_, job_id), denied_devices); !denied) {
            return denied;
        }
    }
    for (const std::string& rule : denied_devices) {
        if (devices_.empty()) {
            break;
        }
        if (Status denied = write_text(job_dir(devices_, job_id) + "/devices.deny", rule);
            !denied) {
            return denied;
        }
    }
    const std::string pids_dir = job_dir(version_ == CgroupVersion::kV1 ? pids_ : unified_, job_id);
    if (pids_max_ > 0 && fs::exists(pids_dir + "/pids.max")) {
        if (Status capped = write_text(pids_dir + "/pids.max", std::to_string(pids_max_));
            !capped) {
            return capped;
        }
    }
    const std::string cpuset_dir =
            job_dir(version_ == CgroupVersion::kV1 ? cpuset_ : unified_, job_id);
    if (fs::exists(cpuset_dir + "/cpuset.cpus")) {
        // CPUs the job was given that this machine offers the agent (a recorded topology may
        // name more); none of them: all of the agent's.
        const std::string parent = fs::path(cpuset_dir).parent_path().string();
        const std::set<int> offered = parse_cpu_list(read_text(parent + "/cpuset.cpus"));
        std::set<int> chosen;
        for (int cpu : cpus) {
            if (offered.count(cpu) > 0) {
                chosen.insert(cpu);
            }
        }
        const std::string mems = read_text(parent + "/cpuset.mems");
        if (!mems.empty() && version_ == CgroupVersion::kV1) {
            if (Status written = write_text(cpuset_dir + "/cpuset.mems", mems); !written) {
                return written;
            }
        }
        if (Status written = write_text(cpuset_dir + "/cpuset.cpus",
                                        cpu_list(chosen.empty() ? offered : chosen));
            !written) {
            return written;
        }
    }
    return Status::ok();
}

Status JobCgroups::create_step(uint64_t job_id, const std::string& step) const {
    if (!enabled()) {
        return Status::ok();
    }
    for (const std::string& base : bases()) {
        if (Status made = make_dir(step_dir(base, job_id, step)); !made) {
            return made;
        }
    }
    if (!cpuset_.empty()) {
        if (Status inherited = inherit_cpuset(step_dir(cpuset_, job_id, step)); !inherited) {
            return inherited;
        }
    }
    const bool v1 = version_ == CgroupVersion::kV1;
    const std::string memory_base = v1 ? memory_ : unified_;
    for (const char* file :
         v1 ? std::vector<const char*>{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"}
            : std::vector<const char*>{"memory.max", "memory.swap.max"}) {
        const std::string limit = read_text(job_dir(memory_base, job_id) + "/" + file);
        const std::string target = step_dir(memory_base, job_id, step) + "/" + file;
        if (!memory_base.empty() && !limit.empty() && fs::exists(target)) {
            write_text(target, limit);  // best effort: the job's own limit holds regardless
        }
    }
    return Status::ok();
}

std::vector<std::string> JobCgroups::procs_files(uint64_t job_id, const std::string& step) const {
    std::vector<std::string> files;
    for (const std::string& base : bases()) {
        files.push_back(step_dir(base, job_id, step) + "/cgroup.procs");
    }
    return files;
}

protocol::JobUsage JobCgroups::step_usage(uint64_t job_id, const std::string& step) const {
    if (version_ == CgroupVersion::kV1) {
        return usage_in(cpuacct_.empty() ? "" : step_dir(cpuacct_, job_id, step),
                        memory_.empty() ? "" : step_dir(memory_, job_id, step));
    }
    if (version_ == CgroupVersion::kV2) {
        const std::string dir = step_dir(unified_, job_id, step);
        return usage_in(dir, dir);
    }
    return {};
}

void JobCgroups::remove_step(uint64_t job_id, const std::string& step) const {
    const uint32_t oom_kills =
            version_ == CgroupVersion::kV1 ? step_usage(job_id, step).oom_kills : 0;
    const bool removed = !memory_.empty() && rmdir(step_dir(memory_, job_id, step).c_str()) == 0;
    if (removed && oom_kills > 0) {
        removed_steps_oom_kills_[job_id] += oom_kills;
    }
    for (const std::string& base : bases()) {
        rmdir(step_dir(base, job_id, step).c_str());
    }
}

std::vector<pid_t> JobCgroups::processes(uint64_t job_id) const {
    if (!enabled()) {
        return {};
    }
    std::vector<pid_t> pids;
    for (const std::string& dir : tracking_dirs(job_id)) {
        std::vector<pid_t> here = read_pids(dir + "/cgroup.procs");
        pids.insert(pids.end(), here.begin(), here.end());
    }
    return pids;
}

int JobCgroups::kill_all(uint64_t job_id) const {
    if (!enabled()) {
        return 0;
    }
    const std::string dir = job_dir(version_ == CgroupVersion::kV1 ? freezer_ : unified_, job_id);
    if (!fs::exists(dir)) {
        return 0;
    }
    std::vector<pid_t> pids = processes(job_id);
    if (pids.empty()) {
        return 0;
    }
    // Both kill and freeze act on the whole subtree, the steps' cgroups included.
    if (version_ == CgroupVersion::kV2 && fs::exists(dir + "/cgroup.kill")) {
        write_text(dir + "/cgroup.kill", "1");
        return static_cast<int>(pids.size());
    }
    // Frozen, no process can fork a new one between the listing and the kill.
    const bool v1 = version_ == CgroupVersion::kV1;
    write_text(dir + (v1 ? "/freezer.state" : "/cgroup.freeze"), v1 ? "FROZEN" : "1");
    polled_for(1000, [&] {  // freezing is asynchronous
        return v1 ? read_text(dir + "/freezer.state") == "FROZEN"
                  : read_text(dir + "/cgroup.events").find("frozen 1") != std::string::npos;
    });
    pids = processes(job_id);
    for (pid_t pid : pids) {
        kill(pid, SIGKILL);
    }
    write_text(dir + (v1 ? "/freezer.state" : "/cgroup.freeze"), v1 ? "THAWED" : "0");
    return static_cast<int>(pids.size());
}

protocol::JobUsage JobCgroups::usage(uint64_t job_id) const {
    if (version_ == CgroupVersion::kV1) {
        protocol::JobUsage used = usage_in(cpuacct_.empty() ? "" : job_dir(cpuacct_, job_id),
                                           memory_.empty() ? "" : job_dir(memory_, job_id));
        // v1 counts an out-of-memory kill only in the cgroup whose limit was hit.
        auto removed = removed_steps_oom_kills_.find(job_id);
        if (removed != removed_steps_oom_kills_.end()) {
            used.oom_kills += removed->second;
        }
        std::error_code ec;
        const std::string memory_job = memory_.empty() ? "" : job_dir(memory_, job_id);
        for (const auto& entry : fs::directory_iterator(memory_job, ec)) {
            if (entry.is_directory(ec)) {
                used.oom_kills += static_cast<uint32_t>(keyed_number(
                        read_text(entry.path().string() + "/memory.oom_control"), "oom_kill"));
            }
        }
        return used;
    }
    if (version_ == CgroupVersion::kV2) {
        const std::string dir = job_dir(unified_, job_id);
        return usage_in(dir, dir);  // v2 counts a step's kills in the job's too
    }
    return {};
}

protocol::JobUsage JobCgroups::usage_in(const std::string& cpu_dir,
                                        const std::string& memory_dir) const {
    protocol::JobUsage used;
    if (version_ == CgroupVersion::kV1) {
        if (!cpu_dir.empty()) {
            used.cpu_user_usec = number_in(read_text(cpu_dir + "/cpuacct.usage_user")) / 1000;
            used.cpu_system_usec = number_in(read_text(cpu_dir + "/cpuacct.usage_sys")) / 1000;
        }
        if (!memory_dir.empty()) {
            used.max_rss_kib =
                    number_in(read_text(memory_dir + "/memory.max_usage_in_bytes")) >> 10;
            used.oom_kills = static_cast<uint32_t>(
                    keyed_number(read_text(memory_dir + "/memory.oom_control"), "oom_kill"));
        }
    } else if (version_ == CgroupVersion::kV2) {
        const std::string cpu = read_text(cpu_dir + "/cpu.stat");
        used.cpu_user_usec = keyed_number(cpu, "user_usec");
        used.cpu_system_usec = keyed_number(cpu, "system_usec");
        used.max_rss_kib = number_in(read_text(memory_dir + "/memory.peak")) >> 10;
        used.oom_kills = static_cast<uint32_t>(
                keyed_number(read_text(memory_dir + "/memory.events"), "oom_kill"));
    }
    return used;
}

void JobCgroups::remove(uint64_t job_id) const {
    removed_steps_oom_kills_.erase(job_id);
    for (const std::string& base : bases()) {
        const std::string dir = job_dir(base, job_id);
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            if (entry.is_directory(ec)) {
                const std::string step = entry.path().string();
                polled_for(200, [&] { return rmdir(step.c_str()) == 0 || errno == ENOENT; });
            }
        }
        // The killed leave the cgroup once they are reaped: a short, bounded wait.
        polled_for(200, [&] { return rmdir(dir.c_str()) == 0 || errno == ENOENT; });
    }
}

}  // namespace cohort::agent
