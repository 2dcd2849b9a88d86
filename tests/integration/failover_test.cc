// Controller failover on PostgreSQL: two cohortctld share one state database; the active one
// is killed with SIGKILL while a client submits in a loop and a job runs. The standby takes
// the lock and serves within seconds; every acknowledged job exists exactly once; the
// running job completes; the old controller, started again, stands by.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/private_postgres.h"

namespace cohort::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

// A loopback port nothing listens on now.
uint16_t free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    close(fd);
    return ntohs(address.sin_port);
}

pid_t pid_in(const std::string& file) {
    pid_t pid = 0;
    std::ifstream(file) >> pid;
    return pid;
}

long ms_between(Clock::time_point from, Clock::time_point to) {
    return static_cast<long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count());
}

TEST(Failover, TheStandbyTakesOverWithinSecondsAndLosesNoAcknowledgedJob) {
    if (!shared_postgres().ready()) {
        GTEST_SKIP() << "no PostgreSQL server: " << shared_postgres().why_not();
    }
    const std::string tag = std::to_string(getpid());
    const std::string state = shared_postgres().create_database("failover_state_" + tag);
    const std::string accounting = shared_postgres().create_database("failover_acct_" + tag);
    ASSERT_FALSE(state.empty());
    ASSERT_FALSE(accounting.empty());
    const uint16_t backup_port = free_port();
    LocalCluster cluster(
            2, with_settings({{"state", state},
                              {"accounting", accounting},
                              {"controller",
                               {{"backups", {{{"host", "127.0.0.1"}, {"port", backup_port}}}}}}}));
    ASSERT_TRUE(cluster.up());
    const std::string standby_log = cluster.state_dir() + "/cohortctld-backup.log";
    ASSERT_TRUE(cluster.start_controller("cohortctld-backup",
                                         {"--listen", "127.0.0.1:" + std::to_string(backup_port)}));
    ASSERT_TRUE(
            eventually([&] { return read_text(standby_log).find("standby:") != std::string::npos; },
                       seconds(15)))
            << read_text(standby_log);

    // A job that runs through the failover.
    const uint64_t running =
            submitted_id(cluster.cohort({"batch", "--parsable", "--wrap", "sleep 6"}));
    ASSERT_TRUE(eventually([&] { return cluster.job_state(running) == "RUNNING"; }, seconds(15)));

    // A client submitting in a loop; each acknowledged id is kept.
    std::mutex mutex;
    std::vector<uint64_t> acknowledged;
    std::atomic<bool> stop = false;
    Clock::time_point killed_at{};
    Clock::time_point first_accepted_after_kill{};
    std::thread client([&] {
        while (!stop) {
            const Clock::time_point sent = Clock::now();
            CommandResult result = cluster.cohort({"batch", "--parsable", "--wrap", "true"});
            std::lock_guard lock(mutex);
            if (result.exit_code == 0) {
                acknowledged.push_back(submitted_id(result));
                // The first submission sent after the kill: one sent before may have been
                // answered by the old active.
                if (killed_at != Clock::time_point{} && sent > killed_at
                    && first_accepted_after_kill == Clock::time_point{}) {
                    first_accepted_after_kill = Clock::now();
                }
            }
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const pid_t active = pid_in(cluster.state_dir() + "/cohortctld.pid");
    ASSERT_GT(active, 0);
    {
        std::lock_guard lock(mutex);
        killed_at = Clock::now();
    }
    ASSERT_EQ(kill(active, SIGKILL), 0);
    const bool took_over = eventually(
            [&] {
                return read_text(standby_log).find("active: took the state lock")
                       != std::string::npos;
            },
            seconds(10));
    const Clock::time_point active_at = Clock::now();
    EXPECT_TRUE(took_over) << read_text(standby_log);
    EXPECT_TRUE(eventually(
            [&] {
                std::lock_guard lock(mutex);
                return first_accepted_after_kill != Clock::time_point{};
            },
            seconds(15)));
    std::this_thread::sleep_for(std::chrono::seconds(2));
    stop = true;
    client.join();
    {
        std::lock_guard lock(mutex);
        std::cout << "failover timeline: kill -> standby active "
                  << ms_between(killed_at, active_at)
                  << " ms (polled every 200 ms), kill -> first job sent after it accepted "
                  << ms_between(killed_at, first_accepted_after_kill) << " ms; "
                  << acknowledged.size() << " submissions acknowledged\n";
        EXPECT_LT(ms_between(killed_at, first_accepted_after_kill), 10000);
    }

    // Every acknowledged job exactly once, as the new active controller lists them.
    std::map<uint64_t, int> listed;
    CommandResult queue =
            cluster.cohort({"acct", "-X", "-P", "-n", "-o", "JobIDRaw", "-S", "now-1hours", "-a"});
    ASSERT_EQ(queue.exit_code, 0) << queue.err;
    std::istringstream lines(queue.out);
    for (std::string line; std::getline(lines, line);) {
        ++listed[std::strtoull(line.c_str(), nullptr, 10)];
    }
    for (uint64_t id : acknowledged) {
        EXPECT_EQ(listed[id], 1) << "acknowledged job " << id;
    }
    // The job that ran through it completes, reported by agents to the new controller.
    EXPECT_EQ(cluster.wait_final_state(running, seconds(30)), "COMPLETED");

    // The old controller, back, stands by behind the new active one.
    const std::string returned_log = cluster.state_dir() + "/cohortctld-returned.log";
    ASSERT_TRUE(cluster.start_controller("cohortctld-returned", {}));
    EXPECT_TRUE(eventually(
            [&] { return read_text(returned_log).find("standby:") != std::string::npos; },
            seconds(15)))
            << read_text(returned_log);
    EXPECT_EQ(cluster.cohort({"batch", "--parsable", "--wrap", "true"}).exit_code, 0);
}

}  // namespace
}  // namespace cohort::testing
