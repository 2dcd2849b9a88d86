// The `cohort` subcommands; each takes its arguments (without the subcommand) and returns
// the process exit code.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cohort::cli {

using Args = std::vector<std::string>;

int cmd_batch(const Args& args);
int cmd_run(const Args& args);
int cmd_alloc(const Args& args);
int cmd_mpirun(const Args& args);
int cmd_queue(const Args& args);
int cmd_nodes(const Args& args);
int cmd_sinfo(const Args& args);
int cmd_node(const Args& args);
int cmd_scontrol(const Args& args);
int cmd_show(const Args& args);
int cmd_cancel(const Args& args);
int cmd_hold(const Args& args, bool release);
int cmd_requeue(const Args& args, bool hold);
int cmd_acct(const Args& args);
int cmd_sacct(const Args& args);
int cmd_report(const Args& args);
int cmd_start(const Args& args);
int cmd_stop(const Args& args);
int cmd_sim(const Args& args);
int cmd_priority(const Args& args);
int cmd_share(const Args& args);
int cmd_reservation(const Args& args);

// Parses `args` with `app`, printing CLI11's help or a one-line error. Returns -1 when
// parsing succeeded, otherwise the exit code to return.
int parse_args(CLI::App& app, const std::string& command, Args args);

}  // namespace cohort::cli
