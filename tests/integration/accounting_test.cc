// Accounting end to end, on both backends: a job that burns CPU and memory is recorded with
// its usage in the accounting database (read back with SQL, not only through the CLI),
// `cohort acct` lists it, and `cohort report` sums it into the cluster's utilization.
#include <chrono>
#include <csignal>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/sql/sql_connection.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/private_postgres.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

class AccountingTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        nlohmann::json settings = nlohmann::json::object();
        if (GetParam() == "postgresql") {
            if (!shared_postgres().ready()) {
                GTEST_SKIP() << "no PostgreSQL server: " << shared_postgres().why_not();
            }
            static int databases = 0;
            location_ = shared_postgres().create_database("cluster_" + std::to_string(getpid())
                                                          + "_" + std::to_string(++databases));
            ASSERT_FALSE(location_.empty());
            settings["accounting"] = location_;
        }
        cluster_ = std::make_unique<LocalCluster>(2, with_settings(settings));
        ASSERT_TRUE(cluster_->up());
        if (location_.empty()) {
            location_ = cluster_->state_dir() + "/accounting.db";  // the embedded default
        }
    }

    void TearDown() override {
        if (HasFailure() && cluster_) {
            cluster_->dump_logs();
        }
    }

    // One row of the accounting database's jobs table, read with SQL.
    std::vector<std::string> stored(uint64_t id, const std::string& columns) const {
        auto sql = sql::connect_sql(location_);
        EXPECT_TRUE(sql) << sql.status().message();
        std::vector<std::string> row;
        if (sql) {
            const std::string query = "SELECT " + columns + " FROM jobs WHERE job_id = $1";
            const size_t count = std::count(columns.begin(), columns.end(), ',') + 1;
            Status s = (*sql)->run(query, {static_cast<int64_t>(id)}, [&](const sql::SqlRow& r) {
                for (size_t i = 0; i < count; ++i) {
                    row.push_back(r.text(static_cast<int>(i)));
                }
            });
            EXPECT_TRUE(s) << s.message();
        }
        return row;
    }

    std::string location_;
    std::unique_ptr<LocalCluster> cluster_;
};

// sreport's start= form for a unix time.
std::string local_time(int64_t when) {
    std::time_t t = when;
    std::tm tm{};
    localtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
    return text;
}

double clock_seconds(const std::string& text) {  // sacct's [D-]HH:MM:SS or MM:SS.mmm
    double total = 0;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, ':')) {
        total = total * 60 + std::stod(part);
    }
    return total;
}

TEST_P(AccountingTest, AJobsUsageIsRecordedListedAndReported) {
    const auto before = static_cast<int64_t>(std::time(nullptr));
    // ~200 MiB touched, then 2 s of CPU.
    const uint64_t id = submit_batch(
            *cluster_, {"-J", "burn", "-n2", "--wrap",
                        "python3 -c 'import time; x = bytearray(200 << 20); "
                        "e = time.process_time() + 2; exec(\"while time.process_time() < e: "
                        "pass\")'"});
    ASSERT_EQ(cluster_->wait_final_state(id, seconds(60)), "COMPLETED");

    const std::vector<std::string> row = stored(id, "name, state, alloc_cpus, user_name");
    ASSERT_EQ(row.size(), 4u) << "job " << id << " is not in " << location_;
    EXPECT_EQ(row[0], "burn");
    EXPECT_EQ(row[1], "COMPLETED");
    EXPECT_EQ(row[2], "2");

    CommandResult acct =
            cluster_->cohort({"acct", "-X", "-P", "-n", "-j", std::to_string(id), "-o",
                              "JobID,JobName,State,TotalCPU,MaxRSS,AllocCPUS,AllocTRES"});
    ASSERT_EQ(acct.exit_code, 0) << acct.err;
    std::vector<std::string> fields;
    std::string field;
    std::istringstream line(acct.out.substr(0, acct.out.find('\n')));
    while (std::getline(line, field, '|')) {
        fields.push_back(field);
    }
    ASSERT_EQ(fields.size(), 7u) << acct.out;
    EXPECT_EQ(fields[0], std::to_string(id));
    EXPECT_EQ(fields[1], "burn");
    EXPECT_EQ(fields[2], "COMPLETED");
    EXPECT_EQ(fields[5], "2");
    EXPECT_EQ(fields[6].rfind("billing=2,cpu=2,", 0), 0u) << fields[6];
    const std::string agent_log = read_text(cluster_->state_dir() + "/cohortd-node1.log")
                                  + read_text(cluster_->state_dir() + "/cohortd-node2.log");
    if (agent_log.find("jobs run in cgroups") != std::string::npos) {
        EXPECT_GE(clock_seconds(fields[3]), 1.5) << "TotalCPU " << fields[3];
        ASSERT_FALSE(fields[4].empty());
        EXPECT_GE(std::stol(fields[4]), 150 * 1024) << "MaxRSS " << fields[4];
    }

    // The job's 2 CPUs for its elapsed seconds, counted in the cluster's utilization.
    CommandResult report =
            cluster_->cohort({"report", "-P", "-n", "-t", "seconds", "cluster", "utilization",
                              "start=" + local_time(before - 60), "end=now"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    std::istringstream cells(report.out);
    std::vector<std::string> utilization;
    while (std::getline(cells, field, '|')) {
        utilization.push_back(field);
    }
    ASSERT_EQ(utilization.size(), 7u) << report.out;  // Cluster, Allocated, Down, PLND Down, ...
    EXPECT_GE(std::stol(utilization[1]), 2) << report.out;
    CommandResult top = cluster_->cohort({"sreport", "-P", "-n", "user", "topusage",
                                          "start=" + local_time(before - 60), "end=now"});
    ASSERT_EQ(top.exit_code, 0) << top.err;
    EXPECT_NE(top.out.find("|" + row[3] + "|"), std::string::npos) << top.out;
}

// A job is eligible from the first pass that could start it: a held one only once released
// (EligibleTime=Unknown until then, as Slurm), and one behind a full cluster from its
// submission. Its wait from then to its start is recorded, and counted in the utilization
// report's Planned and OverCommitted time.
TEST_P(AccountingTest, EligibleTimesAndWaitsAreRecordedAndReported) {
    const auto before = static_cast<int64_t>(std::time(nullptr));
    const uint64_t held = submit_batch(*cluster_, {"-H", "--wrap", "true"});
    CommandResult shown = cluster_->cohort({"show", "job", std::to_string(held)});
    EXPECT_NE(shown.out.find(" EligibleTime=Unknown\n"), std::string::npos) << shown.out;

    const uint64_t blocker = submit_batch(*cluster_, {"-N2", "--exclusive", "--wrap", "sleep 4"});
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(blocker) == "RUNNING"; }, seconds(20)));
    const uint64_t waiter = submit_batch(*cluster_, {"-n1", "--wrap", "true"});
    ASSERT_EQ(cluster_->wait_final_state(waiter, seconds(60)), "COMPLETED");
    ASSERT_EQ(cluster_->cohort({"release", std::to_string(held)}).exit_code, 0);
    ASSERT_EQ(cluster_->wait_final_state(held, seconds(60)), "COMPLETED");

    const std::vector<std::string> waited =
            stored(waiter, "submit_time, eligible_time, start_time");
    ASSERT_EQ(waited.size(), 3u);
    EXPECT_GE(std::stol(waited[1]), std::stol(waited[0]));
    EXPECT_GE(std::stol(waited[2]) - std::stol(waited[1]), 2) << "behind a 4 s job on every CPU";
    const std::vector<std::string> released = stored(held, "submit_time, eligible_time");
    ASSERT_EQ(released.size(), 2u);
    EXPECT_GE(std::stol(released[1]), std::stol(waited[2])) << "eligible once released";

    CommandResult acct = cluster_->cohort(
            {"acct", "-X", "-P", "-n", "-j", std::to_string(waiter), "-o", "Eligible,Start"});
    ASSERT_EQ(acct.exit_code, 0) << acct.err;
    EXPECT_EQ(acct.out.find("Unknown"), std::string::npos) << acct.out;

    CommandResult report = cluster_->cohort({"report", "-P", "-n", "-t", "seconds", "cluster",
                                             "utilization", "format=Reserved,OverCommitted",
                                             "start=" + local_time(before - 60), "end=now"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const size_t bar = report.out.find('|');
    ASSERT_NE(bar, std::string::npos) << report.out;
    const long planned = std::stol(report.out.substr(0, bar));
    const long over_committed = std::stol(report.out.substr(bar + 1));
    EXPECT_GE(planned + over_committed, 2) << report.out;  // the waiter's CPU for >= 2 s
}

// The node events table, read with SQL: "node|state|reason|start|end" per row.
std::vector<std::string> node_events(const std::string& location) {
    std::vector<std::string> rows;
    auto sql = sql::connect_sql(location);
    if (sql) {
        (void)(*sql)->run(
                "SELECT node_name, state, reason, start_time, end_time, cpus FROM "
                "node_events ORDER BY node_name, start_time",
                {}, [&rows](const sql::SqlRow& r) {
                    rows.push_back(r.text(0) + "|" + r.text(1) + "|" + r.text(2) + "|"
                                   + std::to_string(r.integer(3)) + "|"
                                   + std::to_string(r.integer(4)) + "|"
                                   + std::to_string(r.integer(5)));
                });
    }
    return rows;
}

TEST_P(AccountingTest, DownAndMaintenanceTimeOfNodesIsRecordedAcrossARestartAndReported) {
    const auto before = static_cast<int64_t>(std::time(nullptr));
    ASSERT_EQ(cluster_->cohort({"node", "down", "node2", "--reason", "firmware"}).exit_code, 0);
    CommandResult reserved = cluster_->cohort(
            {"reservation", "create", "--name", "maint", "--start", "now", "--duration", "10:00",
             "--nodes", "node1", "--users", "root", "--flags", "maintenance"});
    ASSERT_EQ(reserved.exit_code, 0) << reserved.err;
    ASSERT_TRUE(eventually([&] { return node_events(location_).size() == 2; }, seconds(10)))
            << node_events(location_).size();
    // node2 stays down across a restart of the whole instance: still one event, from its start.
    CommandResult restarted = cluster_->restart();
    ASSERT_EQ(restarted.exit_code, 0) << restarted.err;
    std::this_thread::sleep_for(seconds(2));
    ASSERT_EQ(cluster_->cohort({"node", "resume", "node2"}).exit_code, 0);
    ASSERT_EQ(cluster_->cohort({"reservation", "delete", "maint"}).exit_code, 0);
    std::vector<std::string> events;
    ASSERT_TRUE(eventually(
            [&] {
                events = node_events(location_);
                return events.size() == 2 && events[0].find("|0|") == std::string::npos
                       && events[1].find("|0|") == std::string::npos;
            },
            seconds(10)))
            << ::testing::PrintToString(events);

    // Each row: node|state|reason|start|end|cpus, both ended after they began.
    auto lost_cpu_seconds = [](const std::string& row) {
        std::vector<std::string> f;
        std::string field;
        std::istringstream in(row);
        while (std::getline(in, field, '|')) {
            f.push_back(field);
        }
        return (std::stol(f[4]) - std::stol(f[3])) * std::stol(f[5]);
    };
    EXPECT_EQ(events[0].rfind("node1|MAINT|maintenance reservation maint|", 0), 0u) << events[0];
    EXPECT_EQ(events[1].rfind("node2|DOWN|firmware|", 0), 0u) << events[1];
    EXPECT_GE(lost_cpu_seconds(events[1]), 2) << events[1];  // down for the restart's seconds

    CommandResult report =
            cluster_->cohort({"report", "-P", "-n", "-t", "seconds", "cluster", "utilization",
                              "start=" + local_time(before - 1), "end=now"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_EQ(report.out.rfind(fmt::format("cohort|0|{}|{}|", lost_cpu_seconds(events[1]),
                                           lost_cpu_seconds(events[0])),
                               0),
              0u)
            << report.out << ::testing::PrintToString(events);
}

TEST_P(AccountingTest, EveryStateChangeOfAJobIsRecordedAsItHappens) {
    const uint64_t id = submit_batch(*cluster_, {"--hold", "--wrap", "true"});
    EXPECT_TRUE(
            eventually([&] { return stored(id, "state") == std::vector<std::string>{"PENDING"}; },
                       seconds(10)));
    CommandResult released = cluster_->cohort({"release", std::to_string(id)});
    ASSERT_EQ(released.exit_code, 0) << released.err;
    ASSERT_EQ(cluster_->wait_final_state(id, seconds(30)), "COMPLETED");
    const std::vector<std::string> row = stored(id, "state, start_time, end_time");
    ASSERT_EQ(row.size(), 3u);
    EXPECT_EQ(row[0], "COMPLETED");
    EXPECT_NE(row[1], "0");
    EXPECT_NE(row[2], "0");
}

// The user's RawUsage as `cohort share` prints it; -1 when it does not answer.
double raw_usage(const LocalCluster& cluster, const std::string& user) {
    CommandResult share = cluster.cohort({"share", "-P", "-n", "-U", "-u", user});
    std::vector<std::string> fields;
    std::string field;
    std::istringstream line(share.out.substr(0, share.out.find('\n')));
    while (std::getline(line, field, '|')) {
        fields.push_back(field);
    }
    return share.exit_code == 0 && fields.size() == 7 ? std::stod(fields[4]) : -1;
}

TEST_P(AccountingTest, FairShareUsageIsReadFromAccountingAfterAKillWithoutChargingTwice) {
    // 2 CPUs for ~2 s, ended; then 1 CPU running across the controller's death.
    const uint64_t ended = submit_batch(*cluster_, {"-n2", "--wrap", "sleep 2"});
    ASSERT_EQ(cluster_->wait_final_state(ended, seconds(60)), "COMPLETED");
    const uint64_t running = submit_batch(*cluster_, {"-n1", "--wrap", "sleep 300"});
    ASSERT_TRUE(eventually(
            [&] { return stored(running, "state") == std::vector<std::string>{"RUNNING"}; },
            seconds(30)));
    const std::vector<std::string> ran = stored(ended, "start_time, end_time, user_name");
    ASSERT_EQ(ran.size(), 3u);
    const int64_t started = std::stol(stored(running, "start_time").at(0));
    // Billing-seconds (CPUs, no weights) as accounting has them; a 7-day half-life decays
    // them by under 0.01% in a test's time.
    auto expected = [&] {
        return 2.0 * static_cast<double>(std::stol(ran[1]) - std::stol(ran[0]))
               + static_cast<double>(std::time(nullptr) - started);
    };
    std::this_thread::sleep_for(seconds(4));  // a double charge would add these seconds
    EXPECT_NEAR(raw_usage(*cluster_, ran[2]), expected(), 2.0);

    pid_t ctld = 0;
    std::ifstream(cluster_->state_dir() + "/cohortctld.pid") >> ctld;
    ASSERT_GT(ctld, 0);
    ASSERT_EQ(kill(ctld, SIGKILL), 0);
    ASSERT_TRUE(eventually([ctld] { return kill(ctld, 0) != 0; }, seconds(10)));
    ASSERT_TRUE(cluster_->start_controller("cohortctld", {}));
    ASSERT_TRUE(eventually([&] { return raw_usage(*cluster_, ran[2]) >= 0; }, seconds(30)));
    EXPECT_NEAR(raw_usage(*cluster_, ran[2]), expected(), 2.0);
    EXPECT_NE(read_text(cluster_->state_dir() + "/cohortctld.log")
                      .find("fair-share usage of 1 users read from accounting"),
              std::string::npos);
    EXPECT_EQ(cluster_->cohort({"cancel", std::to_string(running)}).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends,
                         AccountingTest,
                         ::testing::Values("sqlite", "postgresql"),
                         [](const auto& backend) { return backend.param; });

}  // namespace
}  // namespace cohort::testing
