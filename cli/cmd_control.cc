// cohort cancel / hold / release (scancel, scontrol hold/release).
#include <csignal>
#include <cstring>

#include "cli/client_context.h"
#include "cli/commands.h"

namespace cohort::cli {
namespace {

Result<std::vector<uint64_t>> parse_ids(const std::vector<std::string>& words) {
    std::vector<uint64_t> ids;
    for (const auto& word : words) {
        char* end = nullptr;
        uint64_t id = std::strtoull(word.c_str(), &end, 10);
        if (word.empty() || *end != '\0' || id == 0) {
            return Status::invalid("job id: invalid value '" + word
                                   + "' (accepted: a positive job id such as 42)");
        }
        ids.push_back(id);
    }
    if (ids.empty()) {
        return Status::invalid("job id: missing (accepted: one or more job ids)");
    }
    return ids;
}

Result<int> parse_signal(const std::string& text) {
    if (text.empty()) {
        return 0;
    }
    std::string name = text.rfind("SIG", 0) == 0 ? text.substr(3) : text;
    for (int sig = 1; sig < NSIG; ++sig) {
        const char* abbrev = sigabbrev_np(sig);
        if (abbrev != nullptr && name == abbrev) {
            return sig;
        }
    }
    char* end = nullptr;
    long number = std::strtol(text.c_str(), &end, 10);
    if (*end == '\0' && number > 0 && number < NSIG) {
        return static_cast<int>(number);
    }
    return Status::invalid("--signal: invalid signal '" + text
                           + "' (accepted: a name such as TERM or USR1, or a number)");
}

int control(const std::string& command,
            protocol::JobAction action,
            const std::vector<std::string>& words,
            int signal) {
    auto ids = parse_ids(words);
    if (!ids) {
        return report_error(command, ids.status());
    }
    auto context = load_client_context();
    if (!context) {
        return report_error(command, context.status());
    }
    auto client = connect_controller(*context);
    if (!client) {
        return report_error(command, client.status());
    }
    auto reply =
            client->call<protocol::AckReply>(protocol::JobControlRequest{action, *ids, signal});
    if (!reply) {
        return report_error(command, reply.status());
    }
    return 0;
}

}  // namespace

int cmd_cancel(const Args& args) {
    CLI::App app{"Cancel jobs (scancel): cohort cancel [-s SIGNAL] ID..."};
    std::vector<std::string> ids;
    std::string signal_text;
    app.add_option("-s,--signal", signal_text, "send this signal instead of ending the job");
    app.add_option("ids", ids, "job ids");
    if (int rc = parse_args(app, "cancel", args); rc >= 0) {
        return rc;
    }
    auto signal = parse_signal(signal_text);
    if (!signal) {
        return report_error("cancel", signal.status());
    }
    return control("cancel", protocol::JobAction::kCancel, ids, *signal);
}

int cmd_hold(const Args& args, bool release) {
    const std::string command = release ? "release" : "hold";
    CLI::App app{release ? "Release held jobs: cohort release ID..."
                         : "Hold pending jobs: cohort hold ID..."};
    std::vector<std::string> ids;
    app.add_option("ids", ids, "job ids");
    if (int rc = parse_args(app, command, args); rc >= 0) {
        return rc;
    }
    return control(command, release ? protocol::JobAction::kRelease : protocol::JobAction::kHold,
                   ids, 0);
}

}  // namespace cohort::cli
