// `cohort mpirun`: the mpirun command line of Open MPI job scripts, run as a Cohort step
// (inside an allocation or creating one), so `mpirun -np 8 ./app` scripts work unchanged.
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "common/status.h"

namespace cohort::cli {
namespace {

// Options mpirun users pass that mean nothing under a workload manager's launch.
const std::set<std::string> kIgnored = {
        "--oversubscribe", "--allow-run-as-root", "--use-hwthread-cpus", "--report-bindings", "-q",
        "--quiet"};

Result<std::vector<std::string>> translate(const Args& args) {
    std::vector<std::string> run;
    std::string exports;
    size_t i = 0;
    auto value = [&](const std::string& flag) -> Result<std::string> {
        if (i + 1 >= args.size()) {
            return Status::invalid(flag + ": missing value");
        }
        return args[++i];
    };
    for (; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.empty() || arg[0] != '-') {
            break;  // the program and its arguments
        }
        if (kIgnored.count(arg) != 0) {
            continue;
        }
        if (arg == "-np" || arg == "-n" || arg == "--np" || arg == "-c") {
            auto count = value(arg);
            if (!count) {
                return count.status();
            }
            run.insert(run.end(), {"--ntasks", *count});
        } else if (arg == "-N" || arg == "--npernode") {
            auto count = value(arg);
            if (!count) {
                return count.status();
            }
            run.insert(run.end(), {"--ntasks-per-node", *count});
        } else if (arg == "--map-by") {
            auto policy = value(arg);
            if (!policy) {
                return policy.status();
            }
            const std::string ppr = "ppr:";
            if (policy->rfind(ppr, 0) == 0 && policy->size() > 9
                && policy->substr(policy->size() - 5) == ":node") {
                run.insert(run.end(),
                           {"--ntasks-per-node",
                            policy->substr(ppr.size(), policy->size() - ppr.size() - 5)});
            } else if (*policy != "slot" && *policy != "core" && *policy != "socket") {
                return Status::invalid("--map-by: invalid value '" + *policy
                                       + "' (accepted: ppr:N:node, slot, core, socket)");
            }
        } else if (arg == "-H" || arg == "--host") {
            auto hosts = value(arg);
            if (!hosts) {
                return hosts.status();
            }
            std::string nodes;  // host[:slots],... -> a node list; slots come from -np
            size_t start = 0;
            while (start <= hosts->size()) {
                size_t comma = hosts->find(',', start);
                std::string host = hosts->substr(start, comma - start);
                host = host.substr(0, host.find(':'));
                nodes += (nodes.empty() ? "" : ",") + host;
                if (comma == std::string::npos) {
                    break;
                }
                start = comma + 1;
            }
            run.insert(run.end(), {"--nodelist", nodes});
        } else if (arg == "-x") {
            auto var = value(arg);
            if (!var) {
                return var.status();
            }
            exports += "," + *var;
        } else {
            return Status::invalid("mpirun option '" + arg + "' is not supported (accepted: "
                    "-np N, -N N, --map-by ppr:N:node|slot|core|socket, -H hosts, -x VAR[=v])");
        }
    }
    if (i >= args.size()) {
        return Status::invalid("program: missing (accepted: cohort mpirun [options] PROG [ARGS])");
    }
    if (!exports.empty()) {
        run.push_back("--export=ALL" + exports);
    }
    run.insert(run.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    return run;
}

}  // namespace

int cmd_mpirun(const Args& args) {
    auto run = translate(args);
    if (!run) {
        std::cerr << "cohort mpirun: error: " << run.status().message() << "\n";
        return 1;
    }
    return cmd_run(*run);
}

}  // namespace cohort::cli
