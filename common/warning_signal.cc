// --signal and signal names.
#include "common/warning_signal.h"

#include <charconv>
#include <csignal>
#include <cstring>

namespace cohort {

Result<int> parse_signal_name(std::string_view option, std::string_view text) {
    const std::string_view name = text.substr(0, 3) == "SIG" ? text.substr(3) : text;
    for (int sig = 1; sig < NSIG; ++sig) {
        const char* abbrev = sigabbrev_np(sig);
        if (abbrev != nullptr && name == abbrev) {
            return sig;
        }
    }
    int number = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec == std::errc() && end == text.data() + text.size() && number > 0 && number < NSIG) {
        return number;
    }
    return Status::invalid(std::string(option) + ": invalid signal '" + std::string(text)
                           + "' (accepted: a name such as TERM or USR1, or a number)");
}

Result<WarningSignal> parse_warning_signal(std::string_view option, std::string_view text) {
    WarningSignal warning;
    if (text.empty()) {
        return warning;
    }
    auto invalid = [&] {
        return Status::invalid(std::string(option) + ": invalid value '" + std::string(text)
                               + "' (accepted: [{R|B}:]SIGNAL[@SECONDS], e.g. B:USR1@120; "
                                 "SECONDS 0-65535, default 60)");
    };
    std::string_view rest = text;
    if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
        for (char flag : rest.substr(0, colon)) {
            if (flag == 'B') {
                warning.batch_shell_only = true;
            } else if (flag == 'R') {
                warning.at_preemption_only = true;
            } else {
                return invalid();
            }
        }
        rest = rest.substr(colon + 1);
    }
    std::string_view name = rest;
    if (const size_t at = rest.find('@'); at != std::string_view::npos) {
        name = rest.substr(0, at);
        const std::string_view seconds = rest.substr(at + 1);
        int64_t value = 0;
        auto [end, ec] = std::from_chars(seconds.data(), seconds.data() + seconds.size(), value);
        if (seconds.empty() || ec != std::errc() || end != seconds.data() + seconds.size()
            || value < 0 || value > 65535) {
            return invalid();
        }
        warning.seconds_before = value;
    }
    auto signal = parse_signal_name(option, name);
    if (!signal) {
        return invalid();
    }
    warning.signal = *signal;
    return warning;
}

}  // namespace cohort
