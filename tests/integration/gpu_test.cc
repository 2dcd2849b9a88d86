// GPU jobs end to end on a local instance whose agent registers a recorded DGX-2 topology:
// the chosen GPU sets, what tasks see (CUDA_VISIBLE_DEVICES, bus ids, NIC) and CPU binding.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/comma_list.h"
#include "tests/fixtures/local_cluster.h"

namespace cohort::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kDgx2 = "tests/data/topologies/hwloc-nvidiaDGX2.xml";
// IBM Minsky: 4 GPUs in two NVLink pairs, 0-1 and 2-3.
const fs::path kMinsky = "tests/data/topologies/hwloc-power8gpudistances.xml";

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) {
        out.push_back(w);
    }
    return out;
}

std::vector<int> ids(const std::string& list) {
    std::vector<int> out;
    std::stringstream in(list);
    for (std::string id; std::getline(in, id, ',');) {
        out.push_back(std::stoi(id));
    }
    return out;
}

// "0-2,5" -> {0,1,2,5}
std::set<int> cpu_set(const std::string& list) {
    std::set<int> out;
    std::stringstream in(list);
    for (std::string part; std::getline(in, part, ',');) {
        const size_t dash = part.find('-');
        const int lo = std::stoi(part.substr(0, dash));
        const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
        for (int c = lo; c <= hi; ++c) {
            out.insert(c);
        }
    }
    return out;
}

std::set<int> cpus_here() {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof(set), &set);
    std::set<int> out;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) {
            out.insert(c);
        }
    }
    return out;
}

class GpuTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (fs::exists(kDgx2)) {
            cluster_ = new LocalCluster(1, {"--topology", fs::absolute(kDgx2).string()});
        }
    }

    static void TearDownTestSuite() {
        delete cluster_;
        cluster_ = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(cluster_, nullptr) << kDgx2 << " not found (run from the repository root)";
        ASSERT_TRUE(cluster_->up()) << "the local instance did not start";
        CommandResult topo = cluster_->cohort({"nodes", "--topology", "node1", "--json"});
        ASSERT_EQ(topo.exit_code, 0) << topo.err;
        topology_ = nlohmann::json::parse(topo.out);
    }

    void TearDown() override {
        if (HasFailure()) {
            cluster_->dump_logs();
        }
    }

    const nlohmann::json& gpu(int index) const { return topology_["gpus"][index]; }

    static LocalCluster* cluster_;
    nlohmann::json topology_;
};

LocalCluster* GpuTest::cluster_ = nullptr;

TEST_F(GpuTest, NodesTopologyShowsTheRegisteredLayout) {
    ASSERT_EQ(topology_["gpus"].size(), 16u);
    EXPECT_EQ(topology_["gpu_links"].size(), 16u);
    CommandResult text = cluster_->cohort({"nodes", "--topology", "node1"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("gpu type v100"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("GPU15"), std::string::npos) << text.out;
    CommandResult unknown = cluster_->cohort({"nodes", "--topology", "node9"});
    EXPECT_NE(unknown.exit_code, 0);
    EXPECT_NE(unknown.err.find("node9"), std::string::npos) << unknown.err;
}

// A running 2-GPU job, then a second one: disjoint pairs, each under one PCIe switch, and
// each task's variables name exactly its GPUs' bus ids and the NIC closest to them.
TEST_F(GpuTest, SecondPairJobGetsAnotherPairUnderOneSwitch) {
    const std::string marker = cluster_->work_dir() + "/first.txt";
    CommandResult first = cluster_->cohort(
            {"batch", "--parsable", "--gpus-per-node=2", "--wrap",
             "echo $CUDA_VISIBLE_DEVICES $COHORT_GPU_PCI_BUS_IDS > first.tmp; mv first.tmp "
             "first.txt; sleep 60"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const std::string first_id = words(first.out).at(0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(marker) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(fs::exists(marker)) << "the first job did not start";
    std::ifstream in(marker);
    std::string line;
    std::getline(in, line);

    CommandResult second = cluster_->cohort(
            {"run", "-N1", "--gpus-per-node=2", "sh", "-c",
             "echo $CUDA_VISIBLE_DEVICES $COHORT_GPU_PCI_BUS_IDS ${UCX_NET_DEVICES:-none}"
             " $CUDA_DEVICE_ORDER"});
    cluster_->cohort({"cancel", first_id});
    ASSERT_EQ(second.exit_code, 0) << second.err;

    const auto a = words(line);
    const auto b = words(second.out);
    ASSERT_EQ(a.size(), 2u) << line;
    ASSERT_EQ(b.size(), 4u) << second.out;
    EXPECT_EQ(b[3], "PCI_BUS_ID");
    for (const auto& got : {a, b}) {
        const std::vector<int> gpus = ids(got[0]);
        ASSERT_EQ(gpus.size(), 2u) << got[0];
        std::string bus_ids;
        for (int g : gpus) {
            bus_ids += (bus_ids.empty() ? "" : ",") + gpu(g)["pci_bus_id"].get<std::string>();
        }
        EXPECT_EQ(got[1], bus_ids);
        // One NVLink clique on DGX-2; the best pair also shares the innermost PCIe switch.
        EXPECT_EQ(gpu(gpus[0])["pcie_switches"], gpu(gpus[1])["pcie_switches"]);
        EXPECT_EQ(gpu(gpus[0])["nvlink_clique"], gpu(gpus[1])["nvlink_clique"]);
    }
    std::set<int> both;
    for (int g : ids(a[0])) {
        both.insert(g);
    }
    for (int g : ids(b[0])) {
        EXPECT_EQ(both.count(g), 0u) << "GPU " << g << " given twice";
    }
    // The recorded DGX-2 lists no NIC: then none is exported.
    const nlohmann::json& nic = gpu(ids(b[0])[0])["closest_nic"];
    EXPECT_EQ(b[2], nic.is_null() ? "none" : nic.get<std::string>() + ":1");
    EXPECT_NE(cluster_->wait_final_state(std::stoull(first_id), std::chrono::seconds(30)), "");
}

// The task is bound to CPUs local to its GPU where this machine has them; where it has none
// of them (the recorded node is bigger than this one) the task runs unbound, not failed.
TEST_F(GpuTest, TaskIsBoundToCpusLocalToItsGpu) {
    CommandResult run = cluster_->cohort(
            {"run", "-N1", "--gpus-per-node=1", "--cpus-per-gpu=1", "sh", "-c",
             "echo $CUDA_VISIBLE_DEVICES; grep Cpus_allowed_list /proc/self/status"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto got = words(run.out);
    ASSERT_EQ(got.size(), 3u) << run.out;
    const int g = std::stoi(got[0]);
    const std::set<int> allowed = cpu_set(got[2]);
    std::set<int> local;
    for (int c : gpu(g)["local_cpus"]) {
        local.insert(c);
    }
    const std::set<int> here = cpus_here();
    std::set<int> usable;
    std::set_intersection(local.begin(), local.end(), here.begin(), here.end(),
                          std::inserter(usable, usable.begin()));
    if (usable.empty()) {
        EXPECT_EQ(allowed, here) << "no CPU local to GPU " << g << " exists here: unbound";
    } else {
        EXPECT_EQ(allowed.size(), 1u) << got[2];
        for (int c : allowed) {
            EXPECT_EQ(usable.count(c), 1u) << "CPU " << c << " is not local to GPU " << g;
        }
    }
}

// Accounting of a GPU job's step: its AllocTRES names the job's GPUs on its node, and its
// GPU-seconds are those GPUs times its run time.
TEST_F(GpuTest, AStepsGpusAndGpuSecondsAreAccounted) {
    std::ofstream(cluster_->work_dir() + "/gpu_step.sh") << "#!/bin/sh\n"
                                                         << cohort_binary() << " run -n1 sleep 2\n";
    const CommandResult batch = cluster_->cohort(
            {"batch", "--parsable", "-N1", "--gpus-per-node=2", "-o", "/dev/null", "gpu_step.sh"});
    ASSERT_EQ(batch.exit_code, 0) << batch.err;
    const std::string id = batch.out.substr(0, batch.out.find('\n'));
    ASSERT_EQ(cluster_->wait_final_state(std::stoull(id), std::chrono::seconds(60)), "COMPLETED");
    const std::string steps =
            cluster_->cohort({"acct", "-P", "-n", "-o", "JobID,AllocTRES", "-j", id}).out;
    EXPECT_NE(steps.find(id + ".0|cpu=1,gres/gpu=2,"), std::string::npos) << steps;
    const auto listed = nlohmann::json::parse(cluster_->cohort({"acct", "--json", "-j", id}).out);
    ASSERT_EQ(listed["jobs"].size(), 1u);
    int64_t gpu_seconds = -1;
    for (const auto& step : listed["jobs"][0]["steps"]) {
        if (step["step"]["id"] == id + ".0") {
            gpu_seconds = step["usage"]["gpu_seconds"].get<int64_t>();
        }
    }
    EXPECT_GE(gpu_seconds, 2 * 2);
    EXPECT_LE(gpu_seconds, 2 * 10);
}

// Task farming inside one allocation, as with Slurm: steps that ask for GPUs of their own
// (srun --gpus=1) get distinct GPUs of the job's, a step waits while others hold them, and a
// step that asks for none shares all of them. (The recorded node has 4 CPUs: the job holds
// all of them and 2 GPUs, so the third step waits for a GPU, not a CPU.)
TEST_F(GpuTest, StepsThatAskForGpusGetDistinctOnesAndWaitForThem) {
    const std::string cohort = cohort_binary();
    std::ofstream(cluster_->work_dir() + "/farm.sh")
            << "#!/bin/sh\n"
            << "for i in 0 1 2; do " << cohort
            << " run -n1 --gpus=1 sh -c 'echo $CUDA_VISIBLE_DEVICES $(date +%s%N); sleep 2' & "
               "done\nwait\n"
            << cohort << " run -n1 sh -c 'echo all $CUDA_VISIBLE_DEVICES'\n"
            << cohort << " run -n2 --gpus-per-task=1 sh -c 'echo task $CUDA_VISIBLE_DEVICES'\n"
            << cohort << " run -n1 --gpus=3 true || echo refused\n";
    const CommandResult batch =
            cluster_->cohort({"batch", "--parsable", "-N1", "-n4", "--gpus-per-node=2", "-o",
                              "farm.out", "-e", "farm.err", "farm.sh"});
    ASSERT_EQ(batch.exit_code, 0) << batch.err;
    const uint64_t id = std::stoull(batch.out);
    ASSERT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(60)), "COMPLETED");
    const std::string out = read_text(cluster_->work_dir() + "/farm.out");
    std::istringstream lines(out);
    std::vector<std::pair<int64_t, std::string>> farmed;  // start (ns), GPU
    std::string all, line;
    std::vector<std::string> per_task;
    bool refused = false;
    while (std::getline(lines, line)) {
        const auto got = words(line);
        if (got.size() == 2 && got[0] == "all") {
            all = got[1];
        } else if (got.size() == 2 && got[0] == "task") {
            per_task.push_back(got[1]);
        } else if (got.size() == 2) {
            farmed.emplace_back(std::stoll(got[1]), got[0]);
        } else if (line == "refused") {
            refused = true;
        }
    }
    ASSERT_EQ(farmed.size(), 3u) << out;
    std::sort(farmed.begin(), farmed.end());
    const std::set<std::string> first_two{farmed[0].second, farmed[1].second};
    EXPECT_EQ(first_two.size(), 2u) << out;
    EXPECT_GE(farmed[2].first - farmed[0].first, 1'500'000'000) << "the third waited for a GPU";
    const auto job_gpus = split_comma_list(all);
    ASSERT_EQ(job_gpus.size(), 2u) << out;
    for (const std::string& gpu : first_two) {
        EXPECT_NE(std::find(job_gpus.begin(), job_gpus.end(), gpu), job_gpus.end()) << gpu;
    }
    ASSERT_EQ(per_task.size(), 2u) << out;
    EXPECT_EQ(split_comma_list(per_task[0]).size(), 1u) << out;
    EXPECT_NE(per_task[0], per_task[1]) << out;
    EXPECT_TRUE(refused) << out;
    const std::string err = read_text(cluster_->work_dir() + "/farm.err");
    EXPECT_NE(err.find("GPU(s) on node1 are free, the step asks for 1"), std::string::npos) << err;
    EXPECT_NE(err.find("--gpus: the step asks for 3 GPU(s) on node1, where the job holds 2"),
              std::string::npos)
            << err;
    const std::string steps = cluster_->cohort({"acct", "-P", "-n", "-o", "JobID,AllocTRES", "-j",
                                                std::to_string(id)})
                                      .out;
    EXPECT_NE(steps.find(std::to_string(id) + ".0|cpu=1,gres/gpu=1,"), std::string::npos) << steps;
}

TEST_F(GpuTest, GpuTypeMustExistOnSomeNode) {
    CommandResult bad = cluster_->cohort({"run", "-N1", "--gpus-per-node=h100:1", "true"});
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("h100"), std::string::npos) << bad.err;
    CommandResult good = cluster_->cohort(
            {"run", "-N1", "--gres=gpu:v100:1", "sh", "-c", "echo $SLURM_GPUS_ON_NODE"});
    ASSERT_EQ(good.exit_code, 0) << good.err;
    EXPECT_EQ(good.out, "1\n");
}

// As sbatch merges directives before it judges them: --gpus-per-task on one line and the
// task count on another (or on the command line) is one valid request, and the job runs with
// a GPU per task. A value that is wrong by itself still names its line.
TEST_F(GpuTest, DirectivesAreJudgedTogetherNotLineByLine) {
    const std::string script = cluster_->work_dir() + "/split.sh";
    std::ofstream(script) << "#!/bin/bash\n"
                             "#SBATCH --gpus-per-task=1\n"
                             "#SBATCH -o split-%j.out\n"
                             "echo gpus $SLURM_GPUS_ON_NODE\n";
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"-n", "2"}, std::vector<std::string>{"--ntasks=3"}}) {
        std::vector<std::string> args{"batch", "--parsable"};
        args.insert(args.end(), extra.begin(), extra.end());
        args.push_back(script);
        CommandResult submitted = cluster_->cohort(args);
        ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
        const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
        EXPECT_EQ(cluster_->wait_final_state(std::stoull(id), std::chrono::seconds(60)),
                  "COMPLETED");
        const std::string tasks = extra.size() == 2 ? "2" : "3";
        std::ifstream out(cluster_->work_dir() + "/split-" + id + ".out");
        std::string line;
        std::getline(out, line);
        EXPECT_EQ(line, "gpus " + tasks);
    }
    std::ofstream(script) << "#!/bin/bash\n#SBATCH -n 2\n#SBATCH --gpus-per-task=lots\ntrue\n";
    CommandResult bad = cluster_->cohort({"batch", script});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("script line 3"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("lots"), std::string::npos) << bad.err;
}

// Two Minsky nodes, so that which node a job lands on depends on the NVLink pairs.
class GpuNodeChoiceTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(fs::exists(kMinsky)) << kMinsky << " not found (run from the repository root)";
        cluster_ = std::make_unique<LocalCluster>(
                2, std::vector<std::string>{"--topology", fs::absolute(kMinsky).string()});
        ASSERT_TRUE(cluster_->up()) << "the local instance did not start";
    }

    void TearDown() override {
        if (HasFailure()) {
            cluster_->dump_logs();
        }
    }

    // Starts a 1-GPU batch job that sleeps; returns its id and "NODE GPUS" as it saw them.
    std::pair<std::string, std::string> start_one_gpu_job(const std::string& name) {
        const std::string marker = cluster_->work_dir() + "/" + name + ".txt";
        CommandResult submitted = cluster_->cohort(
                {"batch", "--parsable", "--gpus-per-node=1", "--wrap",
                 "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES > " + name + ".tmp; mv " + name
                         + ".tmp " + name + ".txt; sleep 120"});
        EXPECT_EQ(submitted.exit_code, 0) << submitted.err;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!fs::exists(marker) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        std::ifstream in(marker);
        std::string line;
        std::getline(in, line);
        return {words(submitted.out).at(0), line};
    }

    std::unique_ptr<LocalCluster> cluster_;
};

// node1 is left with GPUs 1 and 3 free (one of each pair), node2 with 1, 2 and 3. Best fit
// by count would put a 2-GPU job on node1, across the sockets; it goes to node2's whole pair.
TEST_F(GpuNodeChoiceTest, TwoGpuJobGoesWhereAWholeNvLinkPairIsFree) {
    std::vector<std::pair<std::string, std::string>> jobs;
    for (const char* name : {"j1", "j2", "j3", "j4", "j5"}) {
        jobs.push_back(start_one_gpu_job(name));
    }
    ASSERT_EQ(jobs[0].second, "node1 0");
    ASSERT_EQ(jobs[1].second, "node1 1");  // completes the pair it broke
    ASSERT_EQ(jobs[2].second, "node1 2");
    ASSERT_EQ(jobs[3].second, "node1 3");
    ASSERT_EQ(jobs[4].second, "node2 0");  // node1 is full
    for (size_t done : {1u, 3u}) {
        cluster_->cohort({"cancel", jobs[done].first});
        EXPECT_NE(
                cluster_->wait_final_state(std::stoull(jobs[done].first), std::chrono::seconds(30)),
                "");
    }
    CommandResult pair = cluster_->cohort({"run", "-N1", "--gpus-per-node=2", "sh", "-c",
                                           "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"});
    for (size_t running : {0u, 2u, 4u}) {
        cluster_->cohort({"cancel", jobs[running].first});
    }
    ASSERT_EQ(pair.exit_code, 0) << pair.err;
    EXPECT_EQ(pair.out, "node2 2,3\n");
}

// The job's cgroup keeps it off the GPUs it was not given: the v1 devices controller, or
// under v2 (the parameter) a BPF device program. The recorded DGX-2 has 16 GPUs and no driver
// here, so each gets a character device the test makes (no driver behind them either):
// opening one that is allowed fails with ENXIO from the kernel's lookup, past the cgroup's
// check; one that is denied fails with EPERM before it.
class GpuDeviceTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        const bool v2 = GetParam() == "v2";
        if (geteuid() != 0) {
            GTEST_SKIP() << "needs root";
        }
        if (!v2 && !fs::exists("/sys/fs/cgroup/devices/devices.deny")) {
            GTEST_SKIP() << "needs the v1 devices controller";
        }
        if (v2 && !fs::exists("/sys/fs/cgroup/unified/cgroup.procs")
            && !fs::exists("/sys/fs/cgroup/cgroup.procs")) {
            GTEST_SKIP() << "needs a cgroup2 hierarchy";
        }
        ASSERT_TRUE(fs::exists(kDgx2)) << kDgx2 << " not found (run from the repository root)";
        devices_ = fs::temp_directory_path() / ("cohort-gpus-" + std::to_string(getpid()));
        fs::create_directories(devices_);
        for (unsigned gpu = 0; gpu < 16; ++gpu) {
            const std::string file = (devices_ / ("gpu" + std::to_string(gpu))).string();
            // Major 240 is set aside for local use: no driver answers it.
            ASSERT_EQ(mknod(file.c_str(), S_IFCHR | 0666, makedev(240, gpu)), 0) << file;
        }
        std::vector<std::string> start_args = with_settings(
                {{"gpu_device_files", devices_.string() + "/gpu[0-15]"}, {"cgroup", GetParam()}});
        start_args.insert(start_args.end(), {"--topology", fs::absolute(kDgx2).string()});
        cluster_ = std::make_unique<LocalCluster>(1, start_args);
        ASSERT_TRUE(cluster_->up());
        if (const std::string log = why_no_cgroups(*cluster_); !log.empty()) {
            GTEST_SKIP() << "the agent runs jobs without cgroups here: " << log;
        }
    }

    void TearDown() override {
        if (HasFailure() && cluster_) {
            cluster_->dump_logs();
        }
        cluster_.reset();
        std::error_code ignored;
        fs::remove_all(devices_, ignored);
    }

    fs::path devices_;
    std::unique_ptr<LocalCluster> cluster_;
};

TEST_P(GpuDeviceTest, AJobMayOpenOnlyTheGpusItWasGiven) {
    // Each GPU's device: "allowed" past the cgroup (ENXIO), or "denied" by it (EPERM).
    const std::string probe = "echo gpus $CUDA_VISIBLE_DEVICES; for i in $(seq 0 15); do "
                              "if err=$( (exec 3<" + devices_.string() + "/gpu$i) 2>&1 ); then "
                              "echo $i opened; else case \"$err\" in *ermitted*) echo $i denied;; "
                              "*) echo $i allowed;; esac; fi; done";

    struct Probe {
        std::vector<std::string> given;  // CUDA_VISIBLE_DEVICES
        std::map<std::string, std::vector<std::string>> by_verdict;
    };

    const auto probed = [&](const std::vector<std::string>& options) {
        std::vector<std::string> args{"run", "-N1"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"sh", "-c", probe});
        const CommandResult run = cluster_->cohort(args);
        EXPECT_EQ(run.exit_code, 0) << run.err;
        Probe out;
        std::istringstream lines(run.out);
        for (std::string line; std::getline(lines, line);) {
            std::istringstream words(line);
            std::string first, second;
            words >> first >> second;
            if (first == "gpus") {
                std::istringstream visible(second);
                for (std::string gpu; std::getline(visible, gpu, ',');) {
                    out.given.push_back(gpu);
                }
            } else {
                out.by_verdict[second].push_back(first);
            }
        }
        return out;
    };
    Probe two = probed({"--gpus-per-node=2"});
    ASSERT_EQ(two.given.size(), 2u);
    EXPECT_EQ(two.by_verdict["allowed"], two.given);
    EXPECT_EQ(two.by_verdict["denied"].size(), 14u);
    EXPECT_TRUE(two.by_verdict["opened"].empty());
    // A job without GPUs may open none.
    Probe none = probed({});
    EXPECT_TRUE(none.by_verdict["allowed"].empty());
    EXPECT_EQ(none.by_verdict["denied"].size(), 16u);
}

INSTANTIATE_TEST_SUITE_P(Layouts,
                         GpuDeviceTest,
                         ::testing::Values("v1", "v2"),
                         [](const auto& layout) { return layout.param; });

}  // namespace
}  // namespace cohort::testing
