// cohort: the user CLI. A multi-call binary: `cohort batch ...`, or invoked as sbatch, srun,
// salloc, squeue, scancel, sinfo, sacct, sreport, scontrol, sprio or sshare, the matching
// subcommand.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "cli/commands.h"

namespace {

using cohort::cli::Args;

const char* kUsage = R"(usage: cohort COMMAND [options]

  start    start a local multi-node instance      stop     stop it
  batch    submit a batch script (sbatch)         run      run a parallel step (srun)
  alloc    hold an allocation while a command (default: your shell) runs here (salloc)
  mpirun   run an mpirun command line as a step
  queue    list pending and running jobs (squeue) nodes    list nodes (sinfo)
  show     show a job (scontrol show job)         acct     finished jobs and steps (sacct)
  report   usage reports: cluster utilization, cluster AccountUtilizationByUser, user topusage
           (sreport)
  cancel   cancel jobs (scancel)                  hold / release   hold or release pending jobs
  requeue  run running batch jobs again (scontrol requeue; requeuehold or --hold: held)
  node     drain|down|resume NODE... --reason TEXT (scontrol update nodename=... state=...)
  scontrol update nodename=/state=/reason=, show job|hostnames|hostlist, requeue, requeuehold,
           hold, release
  priority why pending jobs wait: priority factors (sprio)
  share    fair-share standing: shares, decayed usage, factor per account and user (sshare)
  reservation create|list|delete advance reservations
  sim      replay an SWF trace through the scheduler on a virtual clock

  -V, --version  print the version (also as the first option of any command, as Slurm's)
)";

// Slurm's commands all answer -V and --version; scripts ask it to learn what they run under.
bool asks_for_version(const Args& args) {
    return !args.empty() && (args.front() == "-V" || args.front() == "--version");
}

int print_version() {
    std::cout << "cohort " << COHORT_VERSION << "\n";
    return 0;
}

int dispatch(const std::string& command, const Args& args) {
    using namespace cohort::cli;  // NOLINT(google-build-using-namespace): a dispatch table
    static const std::map<std::string, int (*)(const Args&)> kCommands = {
            {"batch", cmd_batch},
            {"sbatch", cmd_batch},
            {"run", cmd_run},
            {"srun", cmd_run},
            {"alloc", cmd_alloc},
            {"salloc", cmd_alloc},
            {"mpirun", cmd_mpirun},
            {"queue", cmd_queue},
            {"squeue", cmd_queue},
            {"nodes", cmd_nodes},
            {"sinfo", cmd_sinfo},
            {"node", cmd_node},
            {"scontrol", cmd_scontrol},
            {"show", cmd_show},
            {"cancel", cmd_cancel},
            {"scancel", cmd_cancel},
            {"acct", cmd_acct},
            {"sacct", cmd_sacct},
            {"report", cmd_report},
            {"sreport", cmd_report},
            {"start", cmd_start},
            {"stop", cmd_stop},
            {"sim", cmd_sim},
            {"priority", cmd_priority},
            {"sprio", cmd_priority},
            {"share", cmd_share},
            {"sshare", cmd_share},
            {"reservation", cmd_reservation},
            {"hold",
             [](const Args& a) {
                 return cmd_hold(a, false);
             }},
            {"release",
             [](const Args& a) {
                 return cmd_hold(a, true);
             }},
            {"requeue",
             [](const Args& a) {
                 return cmd_requeue(a, false);
             }},
            {"requeuehold",
             [](const Args& a) {
                 return cmd_requeue(a, true);
             }},
    };
    auto it = kCommands.find(command);
    if (it == kCommands.end()) {
        std::cerr << "cohort: error: unknown command '" << command << "'\n" << kUsage;
        return 2;
    }
    if (asks_for_version(args)) {
        return print_version();
    }
    return it->second(args);
}

int run(int argc, char** argv) {
    std::string invoked = argv[0];
    invoked = invoked.substr(invoked.find_last_of('/') + 1);
    Args args(argv + 1, argv + argc);
    if (invoked != "cohort") {
        return dispatch(invoked, args);
    }
    if (args.empty() || args.front() == "-h" || args.front() == "--help") {
        std::cout << kUsage;
        return args.empty() ? 2 : 0;
    }
    if (asks_for_version(args)) {
        return print_version();
    }
    std::string command = args.front();
    args.erase(args.begin());
    return dispatch(command, args);
}

}  // namespace

int main(int argc, char** argv) {
    const int rc = run(argc, argv);
#if defined(__SANITIZE_ADDRESS__)
    return rc;  // LeakSanitizer checks at exit
#else
    // The command's own objects are gone by now; what exit() would still destroy are static
    // ones (Boost.Serialization's type registry, CLI11's validators), a tenth of a short
    // command's time. Flush what was written and leave without them.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(rc);
#endif
}
