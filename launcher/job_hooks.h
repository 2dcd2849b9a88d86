// The site's prolog and epilog, as Slurm's Prolog and Epilog: programs an agent runs as root
// before a job's first process on the node and after its last. They see a clean environment
// that names the job (never the user's variables: a hook run as root must not be steered by
// what a user exported), and their failure tells the agent to drain the node.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/asio.h"
#include "common/status.h"

namespace cohort::agent {

namespace asio = boost::asio;

// What a hook is told about the job, as SLURM_* variables.
struct JobHookContext {
    uint64_t job_id = 0;
    uint32_t restart_count = 0;
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::string user;
    std::string partition;
    std::string nodelist;
    std::string cluster_name;
    std::string node;
};

class JobHooks {
public:
    using Done = std::function<void(const Status&)>;  // ok, or why the hook failed

    JobHooks(asio::io_context& io, std::string prolog, std::string epilog, int64_t timeout_s);
    JobHooks(const JobHooks&) = delete;
    JobHooks& operator=(const JobHooks&) = delete;

    // Runs the prolog once for the job's attempt on this node; calls while it runs wait for
    // its result, later ones get it at once. Ok at once where no prolog is configured.
    void prolog(const JobHookContext& context, Done done);
    // Runs the epilog for a job whose prolog step came here, once, and forgets the job. Ok at
    // once for a job that never started here or where no epilog is configured.
    void epilog(uint64_t job_id, Done done);
    // The agent reaps every child: true where `pid` was a hook's (its result is delivered).
    bool reaped(pid_t pid, int wait_status);

    // The environment a hook runs with (SLURM_SCRIPT_CONTEXT is prolog_slurmd or
    // epilog_slurmd, as Slurm sets it).
    static std::vector<std::string> environment(const JobHookContext& context,
                                                const std::string& script_context);

private:
    struct Running {
        std::string what;  // "prolog /etc/cohort/prolog"
        std::shared_ptr<asio::steady_timer> deadline;
        bool timed_out = false;
        Done done;
    };

    struct JobOnNode {
        JobHookContext context;
        std::optional<Status> prolog_result;  // unset while the prolog runs
        std::vector<Done> waiting;
    };

    // `kind`: "prolog" or "epilog".
    void run(const char* kind,
             const std::string& program,
             const JobHookContext& context,
             Done done);

    asio::io_context& io_;
    std::string prolog_;
    std::string epilog_;
    int64_t timeout_s_;
    std::map<pid_t, Running> running_;
    std::map<uint64_t, JobOnNode> jobs_;
};

}  // namespace cohort::agent
