// cohort batch (sbatch): reads #SBATCH/#COHORT directives, applies flags over them, submits.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/batch_script.h"
#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/job_options.h"
#include "common/protocol/messages.h"

namespace cohort::cli {
namespace {

Result<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Status::not_found("script: cannot open '" + path + "'");
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// Spells out one directive line's abbreviations (as getopt_long does), naming the line when
// a word is no option of sbatch's.
Result<Args> spell_directive(const DirectiveLine& line, const OptionCatalogue& catalogue) {
    auto spelled = spell_out_prefixes(catalogue, line.words);
    if (!spelled) {
        return spelled.status().with_context(
                fmt::format("script line {} '{}'", line.line_number, line.text));
    }
    return spelled;
}

// Parses one directive line's spelled `words` on their own, so a bad value can name its line,
// with `app` over `scratch` (reset here). Its values alone are judged into `alone` (ok when
// they pass).
Status parse_directive(const DirectiveLine& line,
                       const Args& words,
                       CLI::App& app,
                       JobOptions& scratch,
                       Status& alone) {
    scratch = JobOptions{};
    std::vector<std::string> reversed(words.rbegin(), words.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        return Status::invalid(
                fmt::format("script line {} '{}': {}", line.line_number, line.text, e.what()));
    }
    auto spec = job_spec_from(scratch);
    alone = spec ? Status::ok() : spec.status();
    return Status::ok();
}

// -W/--wait: polls until the job (every task of an array) has ended, as sbatch --wait does;
// its exit code, the highest of the tasks', is the command's.
int wait_for_job(uint64_t job_id) {
    for (int delay_ms = 100;; delay_ms = std::min(delay_ms * 2, 2000)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        protocol::QueryJobsRequest active;
        active.job_ids = {job_id};
        bool running = false;
        Status listed = ask_job_list(active, [&](protocol::JobListReply& frame) {
            running = running || !frame.jobs.empty();
        });
        if (!listed) {
            continue;  // the controller may be restarting: ask again
        }
        if (running) {
            continue;
        }
        protocol::AcctQueryRequest ended;
        ended.job_ids = {job_id};
        int exit_code = 0;
        listed = ask_job_list(ended, [&](protocol::JobListReply& frame) {
            for (const protocol::JobRecord& job : frame.jobs) {
                const int code = job.exit_signal != 0 ? 128 + job.exit_signal : job.exit_code;
                exit_code = std::max(exit_code, job.state == JobState::kCompleted ? 0
                                                : code != 0                       ? code
                                                                                  : 1);
            }
        });
        if (listed) {
            return exit_code;
        }
    }
}

}  // namespace

int cmd_batch(const Args& args) {
    JobOptions options;
    const CommandOptions command("Submit a batch script: cohort batch [options] SCRIPT [ARGS...]",
                                 [&options](OptionRegistrar& add) {
                                     add_job_options(add, options, JobCommand::kBatch);
                                 });
    auto spelled = spell_out_prefixes(command.catalogue(), args);
    if (!spelled) {
        return report_error("batch", spelled.status());
    }
    OptionSelection named;  // grows with the directives' and variables' words below
    named.add_words(*spelled);
    // The command line alone finds the script.
    const std::unique_ptr<CLI::App> command_line = command.app_for(named);
    if (int rc = parse_args(*command_line, "batch", *spelled); rc >= 0) {
        return rc;
    }
    std::vector<std::string> positional = command_line->remaining();
    if (!positional.empty() && positional.front().size() > 1 && positional.front().front() == '-') {
        return report_error("batch", Status::invalid("unrecognized option '" + positional.front()
                                                     + "' (see cohort batch --help)"));
    }
    std::string script;
    std::vector<std::string> script_args;
    std::string default_name;
    if (!options.wrap.empty()) {
        if (!positional.empty()) {
            return report_error(
                    "batch",
                    Status::invalid(
                            "--wrap: a script '" + positional[0]
                            + "' was given too (accepted: --wrap CMD or SCRIPT, not both)"));
        }
        script = wrap_command_script(options.wrap);
        default_name = "wrap";
    } else {
        // As sbatch: without a script file the script comes on stdin (`sbatch <<EOF`), and the
        // job is named "sbatch".
        const bool from_stdin = positional.empty() && isatty(STDIN_FILENO) == 0;
        if (from_stdin) {
            script.assign(std::istreambuf_iterator<char>(std::cin), {});
            default_name = "sbatch";
        }
        if (script.empty() && positional.empty()) {
            return report_error("batch", Status::invalid("script: missing (accepted: cohort batch "
                                                         "[options] SCRIPT [ARGS], a script on "
                                                         "stdin, or --wrap CMD)"));
        }
        if (!from_stdin) {
            auto text = read_file(positional[0]);
            if (!text) {
                return report_error("batch", text.status());
            }
            script = std::move(*text);
            script_args.assign(positional.begin() + 1, positional.end());
            default_name = positional[0].substr(positional[0].find_last_of('/') + 1);
        }
    }
    auto directives = read_batch_directives(script);
    if (!directives) {
        return report_error("batch", directives.status());
    }
    // Directives first, then SBATCH_* variables, then the command line: the last value of an
    // option wins. As sbatch, rules between options (--gpus-per-task needs --ntasks, ...) are
    // judged on the merged set, not line by line. A line `#SBATCH hetjob` (or `packjob`) starts
    // the next component of a heterogeneous job; the variables and the command line apply to
    // every component.
    // Each line is spelled out first: an App is built with only the options the words name.
    std::vector<Args> line_words;
    std::vector<size_t> line_component;
    size_t components = 1;
    OptionSelection named_in_lines;
    for (DirectiveLine& line : *directives) {
        if (!line.words.empty()
            && (line.words.front() == "hetjob" || line.words.front() == "packjob")) {
            ++components;
            line.words.erase(line.words.begin());
        }
        auto words = spell_directive(line, command.catalogue());
        if (!words) {
            return report_error("batch", words.status());
        }
        named_in_lines.add_words(*words);
        named.add_words(*words);
        line_words.push_back(std::move(*words));
        line_component.push_back(components - 1);
    }
    std::vector<Args> component_words(components);
    std::vector<std::vector<std::pair<int, Status>>> alone_errors(components);  // line, error
    if (!directives->empty()) {
        JobOptions line_options;
        const CommandOptions lines("", [&line_options](OptionRegistrar& add) {
            add_job_options(add, line_options, JobCommand::kBatch);
        });
        const std::unique_ptr<CLI::App> line_app = lines.app_for(named_in_lines);
        line_app->prefix_command(false);  // a word left over on a directive line is an error
        for (size_t n = 0; n < directives->size(); ++n) {
            const DirectiveLine& line = (*directives)[n];
            Status alone = Status::ok();
            if (Status parsed =
                        parse_directive(line, line_words[n], *line_app, line_options, alone);
                !parsed) {
                return report_error("batch", parsed);
            }
            const size_t component = line_component[n];
            if (!alone) {
                alone_errors[component].emplace_back(line.line_number, alone);
            }
            component_words[component].insert(component_words[component].end(),
                                              line_words[n].begin(), line_words[n].end());
        }
    }
    const std::vector<std::string> from_environment =
            environment_options(JobCommand::kBatch, command.catalogue());
    named.add_words(from_environment);
    const std::unique_ptr<CLI::App> merged = command.app_for(named);
    std::vector<protocol::JobSpec> specs;
    std::vector<std::string> warnings;
    JobOptions first;
    for (size_t component = 0; component < component_words.size(); ++component) {
        const auto in_component = [&](const Status& status) {
            return component == 0 ? status
                                  : status.with_context(
                                          fmt::format("heterogeneous job component {}", component));
        };
        Args combined = component_words[component];
        combined.insert(combined.end(), from_environment.begin(), from_environment.end());
        combined.insert(combined.end(), spelled->begin(), spelled->end());
        std::vector<std::string> reversed(combined.rbegin(), combined.rend());
        // The command line alone found the script; now all of it, merged over what the
        // previous component carries over.
        options = component == 0 ? JobOptions{} : next_het_component(options);
        try {
            merged->parse(reversed);
        } catch (const CLI::ParseError& e) {
            return report_error("batch", in_component(Status::invalid(e.what())));
        }
        auto spec = job_spec_from(options, component == 0 ? &warnings : nullptr);
        if (!spec) {
            // A bad value fails its own line the same way: name that line.
            for (const auto& [line_number, alone] : alone_errors[component]) {
                if (alone.message() == spec.status().message()) {
                    return report_error("batch", alone.with_context(fmt::format("script line {}",
                                                                                line_number)));
                }
            }
            return report_error("batch", in_component(spec.status()));
        }
        if (spec->name.empty()) {
            spec->name = default_name;
        }
        if (component == 0) {
            first = options;
            spec->script = std::move(script);
            spec->script_args = std::move(script_args);
        } else {
            spec->env.clear();  // the leader's script and environment serve every component
        }
        specs.push_back(std::move(*spec));
    }
    options = first;
    protocol::SubmitJobRequest request;
    request.spec = std::move(specs.front());
    request.het_components.assign(std::make_move_iterator(specs.begin() + 1),
                                  std::make_move_iterator(specs.end()));
    auto context = load_client_context();
    if (!context) {
        return report_error("batch", context.status());
    }
    if (Status cluster = check_clusters(options, context->config.cluster_name); !cluster) {
        return report_error("batch", cluster);
    }
    auto client = connect_controller(*context);
    if (!client) {
        return report_error("batch", client.status());
    }
    if (options.test_only) {
        request.test_only = true;
        auto will_run = client->call<protocol::WillRunReply>(request);
        if (!will_run) {
            return report_error("batch", will_run.status().with_context("allocation failure"));
        }
        print_warnings(options, warnings);
        std::cerr << will_run_line("sbatch", *will_run) << "\n";
        return 0;
    }
    auto reply = client->call<protocol::SubmitJobReply>(request);
    if (!reply) {
        return report_error("batch", reply.status().with_context("Batch job submission failed"));
    }
    print_warnings(options, warnings);  // only for a job that exists: a refusal is one line
    if (options.parsable) {
        std::cout << reply->job_id << "\n";
    } else {
        std::cout << "Submitted batch job " << reply->job_id << "\n";
    }
    if (options.wait) {
        std::cout.flush();
        return wait_for_job(reply->job_id);
    }
    return 0;
}

}  // namespace cohort::cli
