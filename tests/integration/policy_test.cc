// Advance reservations, QoS checks and `cohort priority` on a real 2-node local instance.
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pwd.h>
#include <unistd.h>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/shared_cluster.h"

namespace cohort::testing {
namespace {

std::string my_user() {
    const passwd* pw = getpwuid(getuid());
    return pw != nullptr ? pw->pw_name : std::to_string(getuid());
}

class PolicyTest : public SharedCluster<PolicyTest> {
protected:
    // Polls the queue until the job shows `reason` (bounded); returns the last reason seen.
    static std::string wait_reason(uint64_t id, const std::string& reason) {
        std::string seen;
        for (int i = 0; i < 50; ++i) {
            auto doc = nlohmann::json::parse(cluster_->cohort({"queue", "--json"}).out);
            for (const auto& job : doc["jobs"]) {
                if (job["job_id"] == id) {
                    seen = job["state_reason"].get<std::string>();
                }
            }
            if (seen == reason) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return seen;
    }
};

TEST_F(PolicyTest, ReservationIsListedUsedOnlyInItsWindowAndDeleted) {
    CommandResult created =
            cluster_->cohort({"reservation", "create", "--name", "later", "--start", "now+1hour",
                              "--duration", "1:00:00", "--node-count", "1", "--users", my_user()});
    ASSERT_EQ(created.exit_code, 0) << created.err;
    EXPECT_NE(created.out.find("Reservation created: later"), std::string::npos) << created.out;
    CommandResult twice =
            cluster_->cohort({"reservation", "create", "--name", "later", "--start", "now+1hour",
                              "--duration", "10", "--node-count", "1", "--users", "x"});
    EXPECT_NE(twice.exit_code, 0);
    EXPECT_NE(twice.err.find("reservation name: 'later' already exists"), std::string::npos)
            << twice.err;
    auto listed = nlohmann::json::parse(cluster_->cohort({"reservation", "list", "--json"}).out);
    ASSERT_EQ(listed["reservations"].size(), 1u);
    EXPECT_EQ(listed["reservations"][0]["node_count"], 1);
    // scontrol show reservation, in Slurm 22.05's text form (as it shows one made by count).
    const std::string shown = cluster_->cohort({"scontrol", "show", "reservation", "later"}).out;
    const std::regex slurm_form(
            "ReservationName=later StartTime=\\S+ EndTime=\\S+ Duration=01:00:00\n"
            "   Nodes=node[0-9] NodeCnt=1 CoreCnt=[0-9]+ Features=\\(null\\) "
            "PartitionName=\\(null\\) Flags=\n"
            "   TRES=cpu=[0-9]+\n"
            "   Users=" + my_user() + " Groups=\\(null\\) Accounts=\\(null\\) "
            "Licenses=\\(null\\) State=INACTIVE BurstBuffer=\\(null\\) Watts=n/a\n"
            "   MaxStartDelay=\\(null\\)\n\n");
    EXPECT_TRUE(std::regex_match(shown, slurm_form)) << shown;
    const CommandResult missing = cluster_->cohort({"scontrol", "show", "reservation", "nope"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_EQ(missing.out, "Reservation nope not found\n");

    CommandResult inside = cluster_->cohort(
            {"batch", "--parsable", "--reservation", "later", "-t", "1:00", "--wrap", "true"});
    ASSERT_EQ(inside.exit_code, 0) << inside.err;
    const uint64_t id = submitted_id(inside);
    EXPECT_EQ(wait_reason(id, "Reservation"), "Reservation");

    CommandResult unknown = cluster_->cohort({"batch", "--reservation", "nope", "--wrap", "true"});
    EXPECT_NE(unknown.exit_code, 0);
    EXPECT_NE(unknown.err.find("--reservation: invalid reservation 'nope' (accepted: later)"),
              std::string::npos)
            << unknown.err;

    CommandResult deleted = cluster_->cohort({"reservation", "delete", "later"});
    ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
    EXPECT_EQ(wait_reason(id, "ReservationDeleted"), "ReservationDeleted");
    cluster_->cohort({"cancel", std::to_string(id)});
    EXPECT_EQ(cluster_->wait_final_state(id, std::chrono::seconds(30)), "CANCELLED");
    EXPECT_NE(cluster_->cohort({"reservation", "list"}).out.find("No reservations"),
              std::string::npos);
}

TEST_F(PolicyTest, NoJobRunsIntoAMaintenanceReservation) {
    CommandResult created = cluster_->cohort({"reservation", "create", "--name", "maint", "--start",
                                              "now+120", "--duration", "10:00", "--node-count", "2",
                                              "--users", "root", "--flags", "maintenance"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
    // Five minutes would cross the window's start on every node; one minute ends before it.
    CommandResult long_job =
            cluster_->cohort({"batch", "--parsable", "-t", "5:00", "--wrap", "true"});
    CommandResult short_job =
            cluster_->cohort({"batch", "--parsable", "-t", "1:00", "--wrap", "true"});
    ASSERT_EQ(long_job.exit_code, 0) << long_job.err;
    ASSERT_EQ(short_job.exit_code, 0) << short_job.err;
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(short_job), std::chrono::seconds(30)),
              "COMPLETED");
    EXPECT_EQ(wait_reason(submitted_id(long_job), "ReqNodeNotAvail"), "ReqNodeNotAvail");
    ASSERT_EQ(cluster_->cohort({"reservation", "delete", "maint"}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(submitted_id(long_job), std::chrono::seconds(30)),
              "COMPLETED");
}

// --time-min: a job asking an hour, with a maintenance window ten minutes away on every node,
// starts now with its limit lowered to fit before the window; without it, it waits.
TEST_F(PolicyTest, TimeMinLowersALimitToStartBeforeAMaintenanceWindow) {
    CommandResult created = cluster_->cohort({"reservation", "create", "--name", "soon", "--start",
                                              "now+600", "--duration", "10:00", "--node-count", "2",
                                              "--users", my_user(), "--flags", "maintenance"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
    CommandResult rigid =
            cluster_->cohort({"batch", "--parsable", "-t", "1:00:00", "--wrap", "true"});
    CommandResult flexible = cluster_->cohort(
            {"batch", "--parsable", "-t", "1:00:00", "--time-min=2", "--wrap", "sleep 30"});
    ASSERT_EQ(rigid.exit_code, 0) << rigid.err;
    ASSERT_EQ(flexible.exit_code, 0) << flexible.err;
    const std::string id = std::to_string(submitted_id(flexible));
    EXPECT_TRUE(eventually([&] { return cluster_->job_state(submitted_id(flexible)) == "RUNNING"; },
                           std::chrono::seconds(20)));
    const std::string shown = cluster_->cohort({"show", "job", id}).out;
    std::smatch limit;
    ASSERT_TRUE(std::regex_search(shown, limit, std::regex("TimeLimit=00:(\\d\\d):00"))) << shown;
    EXPECT_GE(std::stoi(limit[1].str()), 8) << shown;  // from 2 minutes up, ending by the window
    EXPECT_LE(std::stoi(limit[1].str()), 10) << shown;
    EXPECT_NE(shown.find("TimeMin=00:02:00"), std::string::npos) << shown;
    EXPECT_EQ(wait_reason(submitted_id(rigid), "ReqNodeNotAvail"), "ReqNodeNotAvail");
    ASSERT_EQ(cluster_->cohort({"cancel", id, std::to_string(submitted_id(rigid))}).exit_code, 0);
    ASSERT_EQ(cluster_->cohort({"reservation", "delete", "soon"}).exit_code, 0);
}

TEST_F(PolicyTest, PriorityShowsTheFactorsOfAPendingJob) {
    CommandResult held =
            cluster_->cohort({"batch", "--parsable", "--hold", "--nice", "5", "--wrap", "true"});
    ASSERT_EQ(held.exit_code, 0) << held.err;
    const std::string id = std::to_string(submitted_id(held));
    CommandResult table = cluster_->cohort({"priority", id});
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("FAIRSHARE"), std::string::npos);
    EXPECT_NE(table.out.find(id), std::string::npos) << table.out;
    auto doc = nlohmann::json::parse(cluster_->cohort({"priority", id, "--json"}).out);
    ASSERT_EQ(doc["jobs"].size(), 1u);
    const auto& job = doc["jobs"][0];
    EXPECT_EQ(job["nice"], 5);
    const double fairshare = job["factors"]["fairshare"].get<double>();
    EXPECT_GT(fairshare, 0.0);
    EXPECT_LE(fairshare, 1.0);
    EXPECT_EQ(job["weights"]["fairshare"], 10000);
    cluster_->cohort({"cancel", id});
    CommandResult gone = cluster_->cohort({"priority", "999999"});
    EXPECT_NE(gone.exit_code, 0);
    EXPECT_NE(gone.err.find("job 999999: no such unfinished job"), std::string::npos) << gone.err;
}

TEST_F(PolicyTest, UnknownQosIsRefusedWithTheChoices) {
    CommandResult bad = cluster_->cohort({"batch", "--qos", "gold", "--wrap", "true"});
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("--qos: invalid value 'gold' (accepted: normal)"), std::string::npos)
            << bad.err;
}

}  // namespace
}  // namespace cohort::testing
