// The options that choose and size a job's nodes, end to end on a 3-node instance whose
// nodes have features, two of them 20 units of "nvme", and whose cluster has one license:
// --exclusive, -C/--constraint, -w/--nodelist, -L/--licenses, --gres beyond GPUs, --mem-per-cpu and
// --mem=0, options kept for compatibility, and SBATCH_* input variables.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fixtures/shared_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

class NodeOptionsTest : public SharedCluster<NodeOptionsTest> {
public:
    static constexpr int kNodes = 3;

    static std::vector<std::string> start_args() {
        return with_settings(
                {{"node_features",
                  {{"node1", {"ib", "rack1"}}, {"node2", {"ib", "rack2"}}, {"node3", {"rack2"}}}},
                 {"licenses", {{"matlab", 1}}},
                 {"node_gres", {{"node[1-2]", {{"nvme", 20}}}}}});
    }

protected:
    uint64_t submit(const std::vector<std::string>& args) const {
        return submit_batch(*cluster_, args);
    }

    nlohmann::json job_json(uint64_t id) const {
        const CommandResult shown = cluster_->cohort({"show", "job", std::to_string(id), "--json"});
        auto doc = nlohmann::json::parse(shown.out, nullptr, false);
        return doc.is_discarded() ? nlohmann::json{} : doc["jobs"][0];
    }

    std::string shown(uint64_t id) const {
        return cluster_->cohort({"show", "job", std::to_string(id)}).out;
    }

    // What a refused submission printed; the queue must be as it was.
    std::string refusal(const std::vector<std::string>& options) const {
        const std::string before = cluster_->cohort({"queue", "-h"}).out;
        std::vector<std::string> args{"batch", "-H"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"--wrap", "true"});
        const CommandResult refused = cluster_->cohort(args);
        EXPECT_EQ(refused.exit_code, 1) << options.front();
        EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
        EXPECT_EQ(cluster_->cohort({"queue", "-h"}).out, before);
        return refused.err;
    }

    int node_cpus(const std::string& node) const {
        const CommandResult nodes = cluster_->cohort({"nodes", "--json"});
        auto doc = nlohmann::json::parse(nodes.out, nullptr, false);
        for (const auto& entry : doc["nodes"]) {
            if (entry["name"] == node) {
                return entry["cpus"].get<int>();
            }
        }
        return -1;
    }
};

// A bare --exclusive: every CPU of the node is the job's (its tasks see them), and a job of
// one CPU waits for the node instead of starting beside it.
TEST_F(NodeOptionsTest, AnExclusiveJobHoldsItsWholeNode) {
    const std::string out = cluster_->work_dir() + "/exclusive.out";
    const uint64_t whole = submit({"--exclusive", "-w", "node1", "-n1", "-o", out, "--wrap",
                                   "echo cpus=$SLURM_CPUS_ON_NODE; sleep 3"});
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(whole) == "RUNNING"; }, seconds(20)));
    const uint64_t beside = submit({"-w", "node1", "-n1", "--wrap", "true"});
    ASSERT_TRUE(
            eventually([&] { return shown(beside).find("Reason=Resources") != std::string::npos; },
                       seconds(10)))
            << shown(beside);
    EXPECT_EQ(cluster_->wait_final_state(whole, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(beside, seconds(30)), "COMPLETED");
    EXPECT_EQ(read_text(out), "cpus=" + std::to_string(node_cpus("node1")) + "\n");
    EXPECT_EQ(job_json(whole)["cpus"]["number"], node_cpus("node1"));
    EXPECT_NE(shown(whole).find(" OverSubscribe=NO\n"), std::string::npos) << shown(whole);
}

TEST_F(NodeOptionsTest, ConstraintsChooseNodesByTheirFeatures) {
    const uint64_t both = submit({"-C", "ib&rack2", "--wrap", "true"});
    EXPECT_EQ(cluster_->wait_final_state(both, seconds(30)), "COMPLETED");
    EXPECT_EQ(job_json(both)["nodes"], "node2");
    // [rack1|rack2] keeps all nodes alike: rack1 has one node, so two nodes come from rack2.
    const uint64_t alike = submit({"-N2", "-C", "[rack1|rack2]", "--wrap", "true"});
    EXPECT_EQ(cluster_->wait_final_state(alike, seconds(30)), "COMPLETED");
    EXPECT_EQ(job_json(alike)["nodes"], "node[2-3]");
    EXPECT_NE(shown(alike).find("   Features=[rack1|rack2] "), std::string::npos) << shown(alike);
    EXPECT_NE(refusal({"-C", "gpu"})
                      .find("--constraint: invalid feature specification: no node "
                            "has feature 'gpu' (accepted: ib, rack1, rack2"),
              std::string::npos);
    EXPECT_NE(refusal({"-C", "ib&"}).find("--constraint: invalid feature specification 'ib&'"),
              std::string::npos);
    EXPECT_NE(refusal({"-N3", "-C", "ib"})
                      .find("Requested node configuration is not available: 2 of partition "
                            "'debug' nodes left by --constraint=ib for a job of 3"),
              std::string::npos);
}

TEST_F(NodeOptionsTest, NodelistNamesTheJobsNodes) {
    const uint64_t id = submit({"-w", "node[1,3]", "--wrap", "true"});
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
    EXPECT_EQ(job_json(id)["nodes"], "node[1,3]");
    EXPECT_NE(shown(id).find("   ReqNodeList=node[1,3]\n"), std::string::npos) << shown(id);
    EXPECT_NE(refusal({"-w", "node9"})
                      .find("--nodelist: invalid node name 'node9' (accepted: the cluster's nodes, "
                            "node[1-3])"),
              std::string::npos);
    EXPECT_NE(refusal({"-N1", "-w", "node[1-2]"})
                      .find("--nodelist: 2 nodes named for a job of at most 1"),
              std::string::npos);
}

// The cluster has one matlab license: a second job that wants it waits with Slurm's reason
// until the first ends, and `scontrol show lic` shows it held meanwhile; asking for more than
// exist, or for an unknown one, is refused.
TEST_F(NodeOptionsTest, LicensesAreCountedAcrossJobs) {
    const uint64_t first = submit({"-L", "matlab", "--wrap", "sleep 3"});
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(first) == "RUNNING"; }, seconds(20)));
    const CommandResult held = cluster_->cohort({"scontrol", "show", "lic"});
    EXPECT_EQ(held.exit_code, 0) << held.err;
    EXPECT_EQ(held.out, "LicenseName=matlab\n    Total=1 Used=1 Free=0 Reserved=0 Remote=no\n");
    const CommandResult unknown = cluster_->cohort({"show", "licenses", "fluent"});
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_EQ(unknown.out, "");
    EXPECT_EQ(unknown.err, "cohort show: error: license 'fluent' not found (accepted: matlab)\n");
    const uint64_t second = submit({"-L", "matlab:1", "--wrap", "true"});
    ASSERT_TRUE(
            eventually([&] { return shown(second).find("Reason=Licenses") != std::string::npos; },
                       seconds(10)))
            << shown(second);
    EXPECT_EQ(cluster_->wait_final_state(second, seconds(30)), "COMPLETED");
    EXPECT_NE(shown(second).find(" Licenses=matlab:1\n"), std::string::npos) << shown(second);
    EXPECT_EQ(cluster_->cohort({"show", "license", "matlab"}).out,
              "LicenseName=matlab\n    Total=1 Used=0 Free=1 Reserved=0 Remote=no\n");
    EXPECT_NE(refusal({"-L", "matlab:2"})
                      .find("--licenses: invalid license specification 'matlab:2' (accepted: "
                            "matlab:1)"),
              std::string::npos);
    EXPECT_NE(refusal({"-L", "fluent"}).find("invalid license specification 'fluent'"),
              std::string::npos);
}

// node1 and node2 declare nvme:20. What a job takes per node is held until it ends: a job
// that needs more of node1 than is left waits, while one that fits on node2 starts there;
// node3 has none, so no nvme job goes there. Asking for more than a node has, or for a
// resource no node declares, is refused.
TEST_F(NodeOptionsTest, GenericResourcesAreCountedPerNode) {
    const uint64_t first = submit({"-w", "node1", "--gres=nvme:15", "--wrap", "sleep 4"});
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(first) == "RUNNING"; }, seconds(20)));
    const uint64_t waits = submit({"-w", "node1", "--gres=nvme:10", "--wrap", "true"});
    const uint64_t beside = submit({"--gres", "nvme:10", "-n1", "--wrap", "sleep 1"});
    ASSERT_TRUE(
            eventually([&] { return shown(waits).find("Reason=Resources") != std::string::npos; },
                       seconds(10)))
            << shown(waits);
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(beside) != "PENDING"; }, seconds(10)))
            << shown(beside);
    EXPECT_EQ(cluster_->job_state(waits), "PENDING");
    EXPECT_EQ(cluster_->cohort({"squeue", "-h", "-j", std::to_string(waits), "-o", "%b"}).out,
              "gres:nvme:10\n");
    EXPECT_NE(shown(beside).find(" NodeList=node2\n"), std::string::npos) << shown(beside);
    EXPECT_NE(shown(beside).find("\n   TresPerNode=gres:nvme:10\n"), std::string::npos)
            << shown(beside);
    EXPECT_EQ(job_json(beside)["tres_per_node"], "gres:nvme:10");
    EXPECT_EQ(cluster_->wait_final_state(waits, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(beside, seconds(30)), "COMPLETED");
    EXPECT_EQ(cluster_->wait_final_state(first, seconds(30)), "COMPLETED");
    const auto alloc_tres = [&] {
        return cluster_
                ->cohort(
                        {"acct", "-X", "-P", "-n", "-j", std::to_string(beside), "-o", "AllocTRES"})
                .out;
    };
    EXPECT_TRUE(eventually([&] { return alloc_tres().find(",gres/nvme=10,") != std::string::npos; },
                           seconds(10)))
            << alloc_tres();

    const CommandResult node = cluster_->cohort({"scontrol", "show", "node", "node1"});
    EXPECT_NE(node.out.find("\n   Gres=nvme:20\n"), std::string::npos) << node.out;
    const std::string per_node = cluster_->cohort({"sinfo", "-h", "-N", "-o", "%N %G"}).out;
    EXPECT_NE(per_node.find("node2 nvme:20\n"), std::string::npos) << per_node;
    EXPECT_NE(per_node.find("node3 (null)\n"), std::string::npos) << per_node;
    EXPECT_NE(refusal({"--gres=nvme:30"})
                      .find("--gres: invalid generic resource specification 'nvme:30' "
                            "(accepted: gpu, and per node at most nvme:20)"),
              std::string::npos);
    EXPECT_NE(refusal({"--gres=fpga:1"}).find("invalid generic resource specification 'fpga:1'"),
              std::string::npos);
    EXPECT_NE(refusal({"--gres=nvme:x"}).find("count 'x' of 'nvme' is not a number"),
              std::string::npos);
}

// Inside a job with nvme:20, a step that asks for nvme of its own holds it while it runs: a
// second step that needs more than is left waits for the first, and one asking for more than
// the job holds is refused. A step that asks for none shares the job's.
TEST_F(NodeOptionsTest, StepsThatAskForGenericResourcesHoldThem) {
    const std::string cohort = cohort_binary();
    const std::string dir = cluster_->work_dir();
    std::ofstream(dir + "/gres_steps.sh")
            << "#!/bin/sh\n"
            << "for i in 1 2; do " << cohort
            << " run -n1 --gres=nvme:15 sh -c 'date +%s%N; sleep 2' & done\nwait\n"
            << cohort << " run -n1 --gres=nvme:30 true || echo refused\n"
            << cohort << " run -n1 true && echo shared\n";
    const uint64_t id =
            submit({"-w", "node1", "-n2", "--gres=nvme:20", "-o", dir + "/gres_steps.out", "-e",
                    dir + "/gres_steps.err", dir + "/gres_steps.sh"});
    ASSERT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");
    std::istringstream out(read_text(dir + "/gres_steps.out"));
    std::vector<int64_t> starts;
    std::string line;
    std::vector<std::string> rest;
    while (std::getline(out, line)) {
        if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
            starts.push_back(std::stoll(line));
        } else {
            rest.push_back(line);
        }
    }
    ASSERT_EQ(starts.size(), 2u) << read_text(dir + "/gres_steps.out");
    EXPECT_GE(std::abs(starts[1] - starts[0]), 1'500'000'000) << "the second waited for nvme";
    EXPECT_EQ(rest, (std::vector<std::string>{"refused", "shared"}));
    const std::string err = read_text(dir + "/gres_steps.err");
    EXPECT_NE(err.find("5 of the job's nvme:20 on node1 are free, the step asks for 15"),
              std::string::npos)
            << err;
    EXPECT_NE(err.find("--gres: the step asks for nvme:30 per node, job " + std::to_string(id)
                       + " holds nvme:20 (accepted: at most 20)"),
              std::string::npos)
            << err;
    const std::string steps = cluster_->cohort({"acct", "-P", "-n", "-o", "JobID,AllocTRES", "-j",
                                                std::to_string(id)})
                                      .out;
    EXPECT_NE(steps.find(std::to_string(id) + ".0|cpu=1,gres/nvme=15,"), std::string::npos)
            << steps;
    EXPECT_NE(steps.find(std::to_string(id) + ".2|cpu=1,gres/nvme=20,"), std::string::npos)
            << steps;
}

TEST_F(NodeOptionsTest, MemoryPerCpuAndAllOfANodesMemory) {
    const std::string out = cluster_->work_dir() + "/mem.out";
    const uint64_t per_cpu = submit(
            {"--mem-per-cpu=100", "-n1", "-o", out, "--wrap", "echo per_cpu=$SLURM_MEM_PER_CPU"});
    EXPECT_EQ(cluster_->wait_final_state(per_cpu, seconds(30)), "COMPLETED");
    EXPECT_EQ(read_text(out), "per_cpu=100\n");
    EXPECT_NE(shown(per_cpu).find(" MinMemoryCPU=100M "), std::string::npos) << shown(per_cpu);
    const uint64_t whole =
            submit({"--mem=0", "-o", out, "--wrap", "echo node=$SLURM_MEM_PER_NODE"});
    EXPECT_EQ(cluster_->wait_final_state(whole, seconds(30)), "COMPLETED");
    EXPECT_NE(read_text(out), "node=\n");
    EXPECT_NE(read_text(out), "node=0\n");
    EXPECT_NE(refusal({"--mem=1G", "--mem-per-cpu=1G"})
                      .find("--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive"),
              std::string::npos);
}

// Options with no meaning here are kept, shown, and named in one warning line each.
TEST_F(NodeOptionsTest, KeptOptionsWarnOnceEachAndAreShown) {
    const std::string script = cluster_->work_dir() + "/kept.sh";
    std::ofstream(script) << "#!/bin/sh\n#SBATCH --wckey=proj7\n#SBATCH --hint=nomultithread\n"
                             "#SBATCH --ntasks-per-socket=2\ntrue\n";
    const CommandResult submitted = cluster_->cohort({"batch", "-H", "--parsable", script});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    EXPECT_EQ(submitted.err,
              "warning: --ntasks-per-socket=2 is kept with the job but changes nothing here: "
              "tasks are not spread by socket\n"
              "warning: --wckey=proj7 is kept with the job but changes nothing here: there is no "
              "wckey tracking\n");
    const uint64_t id = std::strtoull(submitted.out.c_str(), nullptr, 10);
    EXPECT_NE(shown(id).find("   KeptOptions=--ntasks-per-socket=2,--wckey=proj7\n"),
              std::string::npos)
            << shown(id);
    cluster_->cohort({"cancel", std::to_string(id)});
    const CommandResult quiet = cluster_->cohort({"batch", "-H", "-Q", script});
    EXPECT_EQ(quiet.err, "");
}

// scontrol show node|partition, in Slurm's key=value form, the features among them.
TEST_F(NodeOptionsTest, ShowNodeAndPartitionInSlurmsForm) {
    const CommandResult node = cluster_->cohort({"scontrol", "show", "node", "node1"});
    ASSERT_EQ(node.exit_code, 0) << node.err;
    EXPECT_EQ(node.out.rfind("NodeName=node1 CoresPerSocket=", 0), 0u) << node.out;
    EXPECT_NE(node.out.find("\n   AvailableFeatures=ib,rack1\n"), std::string::npos) << node.out;
    EXPECT_NE(node.out.find("\n   Partitions=debug\n"), std::string::npos) << node.out;
    EXPECT_NE(node.out.find(" CPUTot=" + std::to_string(node_cpus("node1")) + "\n"),
              std::string::npos)
            << node.out;
    const CommandResult partition = cluster_->cohort({"show", "partition"});
    ASSERT_EQ(partition.exit_code, 0) << partition.err;
    EXPECT_EQ(partition.out.rfind("PartitionName=debug\n", 0), 0u) << partition.out;
    EXPECT_NE(partition.out.find("\n   Nodes=node[1-3]\n"), std::string::npos) << partition.out;
    EXPECT_NE(partition.out.find(" TotalNodes=3\n"), std::string::npos) << partition.out;
    const CommandResult missing = cluster_->cohort({"show", "node", "node9"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_EQ(missing.err, "cohort show: error: node 'node9' not found\n");
}

// scontrol show config: the cluster's settings under Slurm's names, as scripts grep them.
TEST_F(NodeOptionsTest, ShowConfigListsTheSettingsUnderSlurmsNames) {
    const CommandResult shown = cluster_->cohort({"scontrol", "show", "config"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_EQ(shown.out.rfind("Configuration data as of ", 0), 0u) << shown.out;
    for (const std::string line :
         {"\nClusterName             = cohort\n", "\nJobRequeue              = 1\n",
          "\nKillWait                = 2 sec\n",
          "\nPriorityType            = priority/multifactor\n",
          "\nPriorityDecayHalfLife   = 7-00:00:00\n",
          "\nSchedulerType           = sched/backfill\n"}) {
        EXPECT_NE(shown.out.find(line), std::string::npos) << line << shown.out;
    }
    EXPECT_NE(shown.out.find(" is UP\n"), std::string::npos) << shown.out;
}

// sbatch's precedence: the command line over SBATCH_* variables over directives.
TEST_F(NodeOptionsTest, InputVariablesSitBetweenDirectivesAndTheCommandLine) {
    const std::string script = cluster_->work_dir() + "/named.sh";
    std::ofstream(script) << "#!/bin/sh\n#SBATCH --job-name=from_directive\n#SBATCH -t 5\ntrue\n";
    const auto name_of = [&](std::vector<std::string> extra) {
        std::vector<std::string> argv{"env",
                                      "SBATCH_JOB_NAME=from_env",
                                      "SBATCH_TIMELIMIT=7",
                                      cohort_binary(),
                                      "batch",
                                      "-H",
                                      "--parsable"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        argv.push_back(script);
        const CommandResult result =
                run_command(argv, cluster_->conf(), seconds(30), cluster_->work_dir());
        const uint64_t id = std::strtoull(result.out.c_str(), nullptr, 10);
        const nlohmann::json job = job_json(id);
        cluster_->cohort({"cancel", std::to_string(id)});
        return job["name"].get<std::string>() + " "
               + std::to_string(job["time_limit"]["number"].get<int>());
    };
    EXPECT_EQ(name_of({}), "from_env 7");
    EXPECT_EQ(name_of({"-J", "from_cli"}), "from_cli 7");
}

// srun's and salloc's input variables, as a user's shell profile sets them: SLURM_LABELIO
// labels srun's output, SALLOC_JOB_NAME names salloc's job; the command line still wins.
TEST_F(NodeOptionsTest, SrunAndSallocReadTheirInputVariables) {
    const auto with_env = [&](const std::string& variable, std::vector<std::string> args) {
        std::vector<std::string> argv{"env", variable, cohort_binary()};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(argv, cluster_->conf(), seconds(60), cluster_->work_dir());
    };
    const CommandResult labelled = with_env("SLURM_LABELIO=1", {"run", "-n1", "echo", "hi"});
    ASSERT_EQ(labelled.exit_code, 0) << labelled.err;
    EXPECT_EQ(labelled.out, "0: hi\n");
    const std::string print_name = "echo $SLURM_JOB_NAME";
    const CommandResult named =
            with_env("SALLOC_JOB_NAME=from_env", {"alloc", "-N1", "sh", "-c", print_name});
    ASSERT_EQ(named.exit_code, 0) << named.err;
    EXPECT_EQ(named.out, "from_env\n");
    const CommandResult overridden = with_env(
            "SALLOC_JOB_NAME=from_env", {"alloc", "-N1", "-J", "from_cli", "sh", "-c", print_name});
    ASSERT_EQ(overridden.exit_code, 0) << overridden.err;
    EXPECT_EQ(overridden.out, "from_cli\n");
}

}  // namespace
}  // namespace cohort::testing
