// Partition, QoS and account rules at submit, the policy config, and fair-share priority.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/config.h"
#include "scheduler/ctld/core_inputs.h"
#include "scheduler/ctld/submit_validation.h"
#include "tests/unit/ctld/validate_for_test.h"

namespace cohort::ctld {
namespace {

ClusterConfig cluster() {
    ClusterConfig config;
    config.nodes = {"node1", "node2"};
    PartitionConfig batch;
    batch.name = "batch";
    batch.nodes = config.nodes;
    batch.is_default = true;
    batch.max_nodes = 1;
    batch.def_mem_per_cpu_mib = 100;
    batch.max_mem_per_cpu_mib = 1000;
    PartitionConfig physics = batch;
    physics.name = "physics";
    physics.is_default = false;
    physics.allowed_accounts = {"phys"};
    physics.priority_tier = 2;
    config.partitions = {batch, physics};
    config.policy.qos = {QosConfig{.name = "normal",
                                   .max_jobs_per_user = 2,
                                   .max_cpus_per_user = 8,
                                   .max_wall_s = 3600},
                         QosConfig{.name = "high", .priority = 100}};
    config.policy.default_qos = "normal";
    config.policy.accounts = {AccountConfig{"phys", "root", 3, {{"alice", 1}, {"bob", 1}}},
                              AccountConfig{"chem", "root", 1, {{"alice", 1}}}};
    return config;
}

std::string error_of(const protocol::JobSpec& spec,
                     const ClusterConfig& config,
                     const std::string& user = "alice",
                     const Reservations& reservations = {}) {
    auto result = validate(spec, config, user, reservations);
    return result ? "accepted" : result.status().message();
}

TEST(PolicySubmit, DefaultsAreTheUsersFirstAccountAndTheDefaultQos) {
    auto job = validate(protocol::JobSpec{}, cluster());
    ASSERT_TRUE(job) << job.status().message();
    EXPECT_EQ(job->account, "phys");
    EXPECT_EQ(job->qos, "normal");
    EXPECT_EQ(job->time_limit_s, 3600);  // no --time: the QoS MaxWall caps the default
    EXPECT_EQ(job->mem_mib, 100);        // DefMemPerCPU x 1 CPU
}

TEST(PolicySubmit, AccountMustListTheUser) {
    protocol::JobSpec spec;
    spec.account = "chem";
    EXPECT_EQ(error_of(spec, cluster(), "bob"),
              "--account: invalid account 'chem' for user 'bob' (accepted: phys)");
    EXPECT_EQ(error_of(protocol::JobSpec{}, cluster(), "carol"),
              "--account: user 'carol' belongs to no account (accepted: an account that lists "
              "the user)");
    EXPECT_EQ(error_of(spec, cluster(), "alice"), "accepted");
}

TEST(PolicySubmit, PartitionAllowsOnlyItsAccounts) {
    protocol::JobSpec spec;
    spec.partition = "physics";
    spec.account = "chem";
    EXPECT_EQ(error_of(spec, cluster()),
              "--partition: account 'chem' may not use partition 'physics' (allowed accounts: "
              "phys)");
    spec.account = "phys";
    EXPECT_EQ(error_of(spec, cluster()), "accepted");
}

TEST(PolicySubmit, QosNameWallAndCpuCapsAreChecked) {
    protocol::JobSpec spec;
    spec.qos = "gold";
    EXPECT_EQ(error_of(spec, cluster()), "--qos: invalid value 'gold' (accepted: normal, high)");
    spec.qos = "";
    spec.time_limit_s = 7200;
    EXPECT_EQ(error_of(spec, cluster()),
              "--time: requested time limit 2:00:00 exceeds MaxWall 1:00:00 of QoS 'normal'");
    spec.qos = "high";
    EXPECT_EQ(error_of(spec, cluster()), "accepted");
    spec.qos = "normal";
    spec.time_limit_s = 60;
    spec.ntasks = 9;
    EXPECT_EQ(error_of(spec, cluster()), "--ntasks: 9 CPUs exceed MaxCpuPerUser 8 of QoS 'normal'");
}

TEST(PolicySubmit, PartitionNodeAndMemoryLimits) {
    protocol::JobSpec spec;
    spec.nodes_min = 2;
    EXPECT_EQ(error_of(spec, cluster()), "--nodes: 2 nodes exceed MaxNodes 1 of partition 'batch'");
    spec.nodes_min = 1;
    spec.ntasks = 2;
    spec.mem_mib = 4000;
    EXPECT_EQ(error_of(spec, cluster()),
              "--mem: 4000 MiB for 2 CPUs per node exceeds MaxMemPerCPU 1000 MiB of partition "
              "'batch'");
    spec.mem_mib = 2000;
    EXPECT_EQ(error_of(spec, cluster()), "accepted");
}

// A raw request may repeat a name a million times; it is refused at once, not checked name by
// name against the cluster.
TEST(PolicySubmit, ANodeListLongerThanTheClusterIsRefused) {
    protocol::JobSpec spec;
    spec.nodelist.assign(1000000, "node1");
    EXPECT_EQ(error_of(spec, cluster()),
              "--nodelist: 1000000 node names for a cluster of 2 (accepted: each node once)");
    spec.nodelist = {"node3"};
    EXPECT_EQ(error_of(spec, cluster()),
              "--nodelist: invalid node name 'node3' (accepted: the cluster's nodes, node[1-2])");
}

TEST(PolicySubmit, ReservationMustExistAndAllowTheUser) {
    Reservations reservations;
    protocol::ReservationRecord maint;
    maint.name = "maint";
    maint.users = {"root"};
    reservations["maint"] = maint;
    protocol::JobSpec spec;
    spec.reservation = "nope";
    EXPECT_EQ(error_of(spec, cluster(), "alice", reservations),
              "--reservation: invalid reservation 'nope' (accepted: maint)");
    spec.reservation = "maint";
    EXPECT_EQ(error_of(spec, cluster(), "alice", reservations),
              "--reservation: user 'alice' (account 'phys') may not use reservation 'maint'");
    reservations["maint"].accounts = {"phys"};
    EXPECT_EQ(error_of(spec, cluster(), "alice", reservations), "accepted");
}

TEST(PolicyConfigFile, BadValuesNameTheKey) {
    using nlohmann::json;
    auto bad_qos = read_policy(json{{"qos", {{{"name", "q"}, {"max_jobs_per_user", -5}}}}});
    ASSERT_FALSE(bad_qos);
    EXPECT_EQ(bad_qos.status().message(),
              "qos q: max_jobs_per_user: invalid value -5 (accepted: an integer >= -1)");
    auto bad_parent = read_policy(json{{"accounts", {{{"name", "a"}, {"parent", "b"}}}}});
    ASSERT_FALSE(bad_parent);
    EXPECT_EQ(bad_parent.status().message(),
              "account a: parent: invalid value 'b' (accepted: root or an account listed before "
              "it)");
    auto bad_fs = read_policy(json{{"priority", {{"fairshare", "fifo"}}}});
    ASSERT_FALSE(bad_fs);
    EXPECT_EQ(bad_fs.status().message(),
              "priority.fairshare: invalid value 'fifo' (accepted: classic, fair_tree)");
    auto defaults = read_policy(json::object());
    ASSERT_TRUE(defaults);
    ASSERT_EQ(defaults->qos.size(), 1u);
    EXPECT_EQ(defaults->default_qos, "normal");
}

Job pending_job(const std::string& user, const std::string& account) {
    Job job;
    job.user_name = user;
    job.spec.account = account;
    job.spec.qos = "normal";
    job.partition = "batch";
    job.submit_time = 1000;
    return job;
}

TEST(PriorityModel, HeavyUserRanksBelowAndRecoversAsUsageDecays) {
    const ClusterConfig config = cluster();
    sched::PriorityModel model(config);
    sched::UsageLedger ledger;
    const int64_t half_life = 3600;
    ledger.decay_to(1000, half_life);
    ledger.charge("alice", "phys", 1e6);  // alice used much, bob a little
    ledger.charge("bob", "phys", 1e4);
    model.refresh(ledger, {}, 16);
    const auto alice = model.factors(priority_job_of(pending_job("alice", "phys")), 1000);
    const auto bob = model.factors(priority_job_of(pending_job("bob", "phys")), 1000);
    EXPECT_LT(alice.fairshare, bob.fairshare);
    EXPECT_LT(alice.priority, bob.priority);

    // Ten half-lives later bob has run a big job, alice nothing: the order flips.
    ledger.decay_to(1000 + 10 * half_life, half_life);
    ledger.charge("bob", "phys", 5e4);
    model.refresh(ledger, {}, 16);
    const int64_t later = 1000 + 10 * half_life;
    EXPECT_GT(model.factors(priority_job_of(pending_job("alice", "phys")), later).priority,
              model.factors(priority_job_of(pending_job("bob", "phys")), later).priority);
}

TEST(PriorityModel, PartitionTierAndQosRaisePriority) {
    const ClusterConfig config = cluster();
    sched::PriorityModel model(config);
    model.refresh(sched::UsageLedger{}, {}, 16);
    Job plain = pending_job("alice", "phys");
    Job boosted = plain;
    boosted.partition = "physics";
    boosted.spec.qos = "high";
    const auto a = model.factors(priority_job_of(plain), 1000);
    const auto b = model.factors(priority_job_of(boosted), 1000);
    EXPECT_DOUBLE_EQ(b.partition, 1.0);
    EXPECT_DOUBLE_EQ(b.qos, 1.0);
    EXPECT_EQ(b.priority - a.priority, 2000);  // default weights of 1000 each
}

TEST(UsageLedger, HalvesEveryHalfLife) {
    sched::UsageLedger ledger;
    ledger.decay_to(100, 50);
    ledger.charge("u", "a", 800);
    ledger.decay_to(200, 50);
    EXPECT_DOUBLE_EQ(ledger.usage("u", "a"), 200);
    ledger.decay_to(150, 50);  // time never runs backwards
    EXPECT_DOUBLE_EQ(ledger.usage("u", "a"), 200);
}

}  // namespace
}  // namespace cohort::ctld
