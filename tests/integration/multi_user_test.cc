// A multi-user instance: users' commands prove who they are with MUNGE (a munged of the
// instance's own), a real unprivileged user made by the test works beside root, and each
// may act on its own jobs only. Needs root (useradd, runuser); skips elsewhere.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fixtures/cluster_queries.h"
#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/submit_batch.h"

namespace cohort::testing {
namespace {

using std::chrono::seconds;

// A login-less user of its own, removed with the object.
class TemporaryUser {
public:
    TemporaryUser() : name_("cohort-u" + std::to_string(getpid() % 100000)) {
        run_command({"userdel", name_}, "", seconds(30));  // left by a killed run
        CommandResult added = run_command(
                {"useradd", "--no-create-home", "--shell", "/bin/sh", name_}, "", seconds(30));
        struct passwd* entry = added.exit_code == 0 ? getpwnam(name_.c_str()) : nullptr;
        if (entry != nullptr) {
            uid_ = entry->pw_uid;
            gid_ = entry->pw_gid;
        } else {
            why_not_ = "useradd failed: " + added.err;
        }
    }

    ~TemporaryUser() {
        if (uid_ != 0) {
            run_command({"userdel", name_}, "", seconds(30));
        }
    }

    TemporaryUser(const TemporaryUser&) = delete;
    TemporaryUser& operator=(const TemporaryUser&) = delete;

    bool ready() const { return why_not_.empty(); }

    const std::string& why_not() const { return why_not_; }

    const std::string& name() const { return name_; }

    uid_t uid() const { return uid_; }

    gid_t gid() const { return gid_; }

private:
    std::string name_;
    std::string why_not_;
    uid_t uid_ = 0;
    gid_t gid_ = 0;
};

class MultiUserTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) {
            GTEST_SKIP() << "creating a user and running commands as it needs root";
        }
        if (access("/usr/sbin/munged", X_OK) != 0) {
            GTEST_SKIP() << "/usr/sbin/munged is not installed (Debian package munge)";
        }
        ASSERT_TRUE(user_.ready()) << user_.why_not();
        if (run_command({"runuser", "-u", user_.name(), "--", "test", "-x", cohort_binary()}, "",
                        seconds(30))
                    .exit_code
            != 0) {
            GTEST_SKIP() << cohort_binary() << " cannot be run by other users here";
        }
        cluster_ = std::make_unique<LocalCluster>(2, [] {
            std::vector<std::string> args =
                    with_settings({{"private_data", nlohmann::json::array({"jobs"})}});
            args.insert(args.end(), {"--auth", "munge"});
            return args;
        }());
        ASSERT_TRUE(cluster_->up());
        home_ = cluster_->work_dir() + "/" + user_.name();
        std::filesystem::create_directories(home_);
        ASSERT_EQ(chown(home_.c_str(), user_.uid(), user_.gid()), 0);
    }

    void TearDown() override {
        if (HasFailure() && cluster_) {
            cluster_->dump_logs();
        }
    }

    // `cohort ARGS...` as the test's user, in its directory.
    CommandResult as_user(std::vector<std::string> args) const {
        args.insert(args.begin(), {"runuser", "-u", user_.name(), "--", cohort_binary()});
        return run_command(args, cluster_->conf(), seconds(60), home_);
    }

    uint64_t submit_as_user(const std::vector<std::string>& args) const {
        std::vector<std::string> argv{"batch", "--parsable"};
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = as_user(argv);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return submitted_id(result);
    }

    TemporaryUser user_;
    std::unique_ptr<LocalCluster> cluster_;
    std::string home_;
};

TEST_F(MultiUserTest, AUserSubmitsWithMungeAndActsOnItsOwnJobsOnly) {
    // The cluster key is root's alone: the user's commands are vouched for by MUNGE.
    const auto key_mode =
            std::filesystem::status(cluster_->state_dir() + "/cluster.key").permissions();
    EXPECT_EQ(key_mode & std::filesystem::perms::others_read, std::filesystem::perms::none);

    const uint64_t roots = submit_batch(*cluster_, {"--wrap", "sleep 60"});
    const uint64_t users = submit_as_user({"-o", "mine.out", "--wrap", "id -u; sleep 60"});
    ASSERT_GT(roots, 0u);
    ASSERT_GT(users, 0u);
    ASSERT_TRUE(eventually(
            [&] { return read_text(home_ + "/mine.out") == std::to_string(user_.uid()) + "\n"; },
            seconds(30)))
            << "the user's job runs as the user: " << read_text(home_ + "/mine.out");

    // Not another user's job: cancel, update, or a step into it.
    CommandResult cancel = as_user({"cancel", std::to_string(roots)});
    EXPECT_NE(cancel.exit_code, 0);
    EXPECT_NE(cancel.err.find("job " + std::to_string(roots) + ": owned by root"),
              std::string::npos)
            << cancel.err;
    CommandResult update =
            as_user({"scontrol", "update", "jobid=" + std::to_string(roots), "comment=mine"});
    EXPECT_NE(update.exit_code, 0) << update.out;
    CommandResult step = as_user({"run", "--jobid", std::to_string(roots), "true"});
    EXPECT_NE(step.exit_code, 0) << step.out;
    EXPECT_EQ(cluster_->job_state(roots), "RUNNING") << "refusals change nothing";

    // private_data = jobs: the user sees its own jobs only; root sees both.
    auto listed = nlohmann::json::parse(as_user({"queue", "--json"}).out, nullptr, false);
    ASSERT_TRUE(listed.is_object());
    ASSERT_EQ(listed["jobs"].size(), 1u) << listed.dump();
    EXPECT_EQ(listed["jobs"][0]["job_id"], users);
    auto all = nlohmann::json::parse(cluster_->cohort({"queue", "--json"}).out, nullptr, false);
    EXPECT_EQ(all["jobs"].size(), 2u) << all.dump();

    // Its own job, the user may cancel; root may cancel anyone's.
    EXPECT_EQ(as_user({"cancel", std::to_string(users)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(users, seconds(30)), "CANCELLED");
    EXPECT_EQ(cluster_->cohort({"cancel", std::to_string(roots)}).exit_code, 0);
    EXPECT_EQ(cluster_->wait_final_state(roots, seconds(30)), "CANCELLED");
}

TEST_F(MultiUserTest, AUserMayNotChangeNodesButRootMay) {
    CommandResult drain = as_user({"node", "drain", "node1", "--reason", "mine"});
    EXPECT_NE(drain.exit_code, 0);
    EXPECT_NE(drain.err.find("may not drain nodes"), std::string::npos) << drain.err;
    EXPECT_EQ(node_json(*cluster_, "node1")["state"], nlohmann::json::array({"IDLE"}));
    EXPECT_EQ(cluster_->cohort({"node", "drain", "node1", "--reason", "root's"}).exit_code, 0);
}

// The agent opens a job's output as the job's user: a link the user plants towards a file
// only root may write makes the job fail to start, and the file stays as it was.
TEST_F(MultiUserTest, AnOutputLinkToRootsFileCannotMakeTheAgentWriteIt) {
    const std::string roots_file = cluster_->work_dir() + "/roots-only";
    std::ofstream(roots_file) << "root's\n";
    ASSERT_EQ(chmod(roots_file.c_str(), 0600), 0);
    const std::string link = home_ + "/trap.out";
    ASSERT_EQ(symlink(roots_file.c_str(), link.c_str()), 0);
    ASSERT_EQ(lchown(link.c_str(), user_.uid(), user_.gid()), 0);

    const uint64_t id = submit_as_user({"-o", "trap.out", "--wrap", "echo overwritten"});
    ASSERT_GT(id, 0u);
    EXPECT_EQ(cluster_->wait_final_state(id, seconds(30)), "FAILED");
    EXPECT_EQ(read_text(roots_file), "root's\n");
    const nlohmann::json job = shown_job_json(*cluster_, id);
    EXPECT_NE(job.dump().find("Permission denied"), std::string::npos) << job.dump();
}

// The spool keeps the user's script where only root and the user can read it, and nobody
// can list what else is there.
TEST_F(MultiUserTest, SpoolFilesAreTheOwnersAndRootsOnly) {
    const uint64_t id = submit_as_user({"--wrap", "sleep 30"});
    ASSERT_TRUE(eventually([&] { return cluster_->job_state(id) == "RUNNING"; }, seconds(30)));
    const auto job_nodes = shown_job_json(*cluster_, id).value("nodes", "");
    const std::string spool = cluster_->state_dir() + "/nodes/" + job_nodes;
    const std::string script = spool + "/job" + std::to_string(id) + ".sh";

    struct stat info {};

    ASSERT_EQ(stat(script.c_str(), &info), 0) << script;
    EXPECT_EQ(info.st_uid, user_.uid());
    EXPECT_EQ(info.st_mode & 0077, 0u) << std::oct << info.st_mode;
    ASSERT_EQ(stat(spool.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0711u) << std::oct << info.st_mode;
    CommandResult listed =
            run_command({"runuser", "-u", user_.name(), "--", "ls", spool}, "", seconds(30));
    EXPECT_NE(listed.exit_code, 0) << listed.out;
    EXPECT_EQ(cluster_->cohort({"cancel", std::to_string(id)}).exit_code, 0);
}

}  // namespace
}  // namespace cohort::testing
