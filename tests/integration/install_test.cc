// Cohort as a site installs it: `cmake --install` into a staging prefix, a config written as
// an administrator would, the installed controller on the host and the installed agent of each
// of two "hosts" in a network namespace of its own, driven by the installed Slurm commands.
// Needs root (namespaces) and cmake; skips elsewhere, saying why.
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fixtures/local_cluster.h"
#include "tests/fixtures/network_namespace.h"

extern char** environ;

namespace cohort::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// A daemon started in the foreground, as systemd would, its output in `log`; SIGTERM (then
// SIGKILL) when the object goes.
class Daemon {
public:
    Daemon(const std::vector<std::string>& argv, const std::string& log) {
        posix_spawn_file_actions_t files;
        posix_spawn_file_actions_init(&files);
        posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                         0644);
        posix_spawn_file_actions_adddup2(&files, 1, 2);
        std::vector<char*> args;
        for (const std::string& arg : argv) {
            args.push_back(const_cast<char*>(arg.c_str()));
        }
        args.push_back(nullptr);
        if (posix_spawn(&pid_, args[0], &files, nullptr, args.data(), environ) != 0) {
            pid_ = 0;
        }
        posix_spawn_file_actions_destroy(&files);
    }

    ~Daemon() {
        if (pid_ <= 0) {
            return;
        }
        kill(pid_, SIGTERM);
        for (int i = 0; i < 100 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i) {
            usleep(100000);
        }
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }

    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    bool started() const { return pid_ > 0; }

private:
    pid_t pid_ = 0;
};

TEST(InstalledCluster, TheInstalledDaemonsRunJobsOnTwoHostsFromTheirUnitsCommandLines) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "network namespaces need root";
    }
    if (run_command({"cmake", "--version"}, "", seconds(10)).exit_code != 0) {
        GTEST_SKIP() << "cmake is not installed";
    }
    NetworkNamespace host1(1), host2(2);
    if (!host1.ready() || !host2.ready()) {
        GTEST_SKIP() << "cannot create network namespaces here: " << host1.why_not()
                     << host2.why_not();
    }
    ASSERT_TRUE(host1.route_through_host()) << host1.why_not();
    ASSERT_TRUE(host2.route_through_host()) << host2.why_not();

    std::string pattern = fs::temp_directory_path().string() + "/cohort-install.XXXXXX";
    const std::string stage = mkdtemp(pattern.data());
    chmod(stage.c_str(), 0755);

    struct Cleanup {
        std::string dir;

        ~Cleanup() { fs::remove_all(dir); }
    } cleanup{stage};

    // Installed where a package puts things.
    const std::string build_dir = fs::path(bin_dir()).parent_path().string();
    CommandResult installed =
            run_command({"cmake", "--install", build_dir, "--prefix", stage}, "", seconds(120));
    ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;
    for (const char* file : {"sbin/cohortctld", "sbin/cohortd", "sbin/cohort-stepd",
                             "sbin/cohort-shepherd", "bin/cohort"}) {
        EXPECT_EQ(access((stage + "/" + file).c_str(), X_OK), 0) << file;
    }
    EXPECT_EQ(fs::read_symlink(stage + "/bin/sbatch"), "cohort");
    const std::string unit = read_text(stage + "/lib/systemd/system/cohortd.service");
    const std::string exec_start =
            "ExecStart=" + stage + "/sbin/cohortd --config /etc/cohort/cohort.json";
    EXPECT_NE(unit.find(exec_start + "\n"), std::string::npos) << unit;
    EXPECT_NE(unit.find("KillMode=process\n"), std::string::npos) << unit;
    EXPECT_NE(read_text(stage + "/lib/systemd/system/cohortctld.service")
                      .find("ExecStart=" + stage + "/sbin/cohortctld --config"),
              std::string::npos);
    EXPECT_TRUE(fs::exists(stage + "/share/doc/cohort/admin.md"));

    // The administrator's part: a key, a config, a state directory.
    const std::string etc = stage + "/etc/cohort";
    fs::create_directories(etc);
    fs::create_directories(stage + "/var/lib/cohort");
    const std::string key = etc + "/cluster.key";
    ASSERT_EQ(run_command({"sh", "-c", "head -c 32 /dev/urandom > '" + key + "'"}, "", seconds(10))
                      .exit_code,
              0);
    chmod(key.c_str(), 0600);
    const int port = 20000 + static_cast<int>(getpid() % 20000);
    const nlohmann::json config = {
            {"cluster_name", "installed"},
            {"controller", {{"host", host1.host_address()}, {"port", port}}},
            {"key_file", key},
            {"state_dir", stage + "/var/lib/cohort"},
            {"nodes", "node[1-2]"},
            {"partitions", {{{"name", "batch"}, {"nodes", "node[1-2]"}, {"default", true}}}}};
    const std::string conf = etc + "/cohort.json";
    std::ofstream(conf) << config.dump(2);

    // The units' command lines, the config named as the test's.
    const std::string logs = stage + "/var/log";
    fs::create_directories(logs);
    Daemon controller({stage + "/sbin/cohortctld", "--config", conf}, logs + "/cohortctld.log");
    ASSERT_TRUE(controller.started());
    std::vector<std::unique_ptr<Daemon>> agents;
    for (const NetworkNamespace* host : {&host1, &host2}) {
        const std::string name = host == &host1 ? "node1" : "node2";
        agents.push_back(std::make_unique<Daemon>(
                std::vector<std::string>{"/usr/sbin/ip", "netns", "exec", host->name(),
                                         stage + "/sbin/cohortd", "--config", conf, "--name", name,
                                         "--spool-dir", stage + "/var/spool/" + name},
                logs + "/cohortd-" + name + ".log"));
    }
    auto dump_logs = [&] {
        std::string all;
        for (const auto& entry : fs::directory_iterator(logs)) {
            all += "==== " + entry.path().string() + "\n" + read_text(entry.path().string());
        }
        return all;
    };
    auto command = [&](std::vector<std::string> args) {
        args[0] = stage + "/bin/" + args[0];
        return run_command(args, conf, seconds(60), stage);
    };
    nlohmann::json nodes;
    ASSERT_TRUE(eventually(
            [&] {
                nodes = nlohmann::json::parse(command({"cohort", "nodes", "--json"}).out, nullptr,
                                              false);
                return nodes.is_object() && nodes["nodes"].size() == 2
                       && nodes["nodes"][0]["state"] == nlohmann::json::array({"IDLE"})
                       && nodes["nodes"][1]["state"] == nlohmann::json::array({"IDLE"});
            },
            seconds(30)))
            << command({"sinfo"}).out << dump_logs();
    // Each agent registered its own host's address: the one it reaches the controller from
    // (the agents were given no --address).
    for (const auto& node : nodes["nodes"]) {
        EXPECT_EQ(node.value("address", ""),
                  node["name"] == "node1" ? host1.inner_address() : host2.inner_address());
    }

    // One job on each host, submitted and followed with the installed Slurm commands.
    std::vector<std::string> ids;
    for (const char* node : {"node1", "node2"}) {
        CommandResult submitted = command({"sbatch", "--parsable", "-w", node, "-o",
                                           stage + "/%N.out", "--wrap", "echo $SLURMD_NODENAME"});
        ASSERT_EQ(submitted.exit_code, 0) << submitted.err << dump_logs();
        ids.push_back(submitted.out.substr(0, submitted.out.find('\n')));
    }
    for (const std::string& id : ids) {
        EXPECT_TRUE(eventually(
                [&] {
                    return command({"sacct", "-n", "-X", "-P", "-j", id, "-o", "State"}).out
                           == "COMPLETED\n";
                },
                seconds(60)))
                << command({"sacct", "-j", id}).out << dump_logs();
    }
    EXPECT_EQ(read_text(stage + "/node1.out"), "node1\n");
    EXPECT_EQ(read_text(stage + "/node2.out"), "node2\n");
}

// The package a site installs with apt: binaries and units under /usr, whatever prefix the
// build tree was configured with, and the libraries it needs as dependencies.
TEST(InstalledCluster, CPackBuildsADebWithTheDaemonsAndUnitsUnderUsr) {
    if (run_command({"cpack", "--version"}, "", seconds(10)).exit_code != 0
        || run_command({"dpkg-shlibdeps", "--version"}, "", seconds(10)).exit_code != 0) {
        GTEST_SKIP() << "cpack or dpkg-shlibdeps (dpkg-dev) is not installed";
    }
    std::string pattern = fs::temp_directory_path().string() + "/cohort-deb.XXXXXX";
    const std::string out = mkdtemp(pattern.data());

    struct Cleanup {
        std::string dir;

        ~Cleanup() { fs::remove_all(dir); }
    } cleanup{out};

    const std::string build_dir = fs::path(bin_dir()).parent_path().string();
    CommandResult packed = run_command(
            {"cpack", "-G", "DEB", "-B", out, "--config", build_dir + "/CPackConfig.cmake"}, "",
            seconds(300), build_dir);
    ASSERT_EQ(packed.exit_code, 0) << packed.out << packed.err;
    std::string deb;
    for (const auto& entry : fs::directory_iterator(out)) {
        if (entry.path().extension() == ".deb") {
            deb = entry.path().string();
        }
    }
    ASSERT_FALSE(deb.empty()) << packed.out;
    const std::string listing = run_command({"dpkg-deb", "-c", deb}, "", seconds(60)).out;
    for (const char* file : {"./usr/sbin/cohortctld", "./usr/sbin/cohortd", "./usr/bin/cohort",
                             "./usr/bin/sbatch -> cohort", "./usr/share/doc/cohort/admin.md"}) {
        EXPECT_NE(listing.find(file), std::string::npos) << file << "\n" << listing;
    }
    const std::string unit =
            run_command({"sh", "-c",
                         "dpkg-deb --fsys-tarfile '" + deb
                                 + "' | tar -xO ./usr/lib/systemd/system/cohortd.service"},
                        "", seconds(60))
                    .out;
    EXPECT_NE(unit.find("ExecStart=/usr/sbin/cohortd --config /etc/cohort/cohort.json\n"),
              std::string::npos)
            << unit;
    const std::string depends =
            run_command({"dpkg-deb", "-f", deb, "Depends"}, "", seconds(60)).out;
    EXPECT_NE(depends.find("libhwloc"), std::string::npos) << depends;
    // The static CLI loads NSS modules, which must come from the glibc release it linked.
    EXPECT_NE(depends.find("libc6 (<< "), std::string::npos) << depends;
}

}  // namespace
}  // namespace cohort::testing
