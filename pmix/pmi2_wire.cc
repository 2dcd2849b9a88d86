// PMI-2 framing and key=value; parsing, as MPICH's src/pmi/pmi2 simple client writes them.
#include "pmix/pmi2_wire.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace cohort::pmix {
namespace {

// Printable, so that an error line can quote it.
std::string printable(const std::string& bytes) {
    std::string text;
    for (char c : bytes.substr(0, 60)) {
        text += std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '?';
    }
    return bytes.size() > 60 ? text + "..." : text;
}

}  // namespace

std::optional<std::string> Pmi2Command::find(const std::string& key) const {
    for (const auto& [pair_key, value] : pairs) {
        if (pair_key == key) {
            return value;
        }
    }
    return std::nullopt;
}

Result<Pmi2Command> parse_pmi2_command(const std::string& body) {
    Pmi2Command command;
    size_t at = 0;
    bool first = true;
    while (at < body.size()) {
        const size_t eq = body.find('=', at);
        if (eq == std::string::npos) {
            return Status::corrupt(fmt::format("PMI-2 command: pair without '=' at byte {} of '{}'",
                                               at, printable(body)));
        }
        std::string key = body.substr(at, eq - at);
        if (key.empty() || key.size() > kPmi2MaxKey || key.find(';') != std::string::npos) {
            return Status::corrupt("PMI-2 command: bad key '" + printable(key) + "' in '"
                                   + printable(body) + "' (1 to 64 characters, no ';')");
        }
        std::string value;
        size_t i = eq + 1;
        bool ended = false;
        while (i < body.size()) {
            if (body[i] == ';') {
                if (i + 1 < body.size() && body[i + 1] == ';') {  // an escaped ';'
                    value += ';';
                    i += 2;
                    continue;
                }
                ended = true;
                ++i;
                break;
            }
            value += body[i++];
        }
        if (!ended) {
            return Status::corrupt("PMI-2 command: the value of '" + key
                                   + "' does not end with ';' in '" + printable(body) + "'");
        }
        if (first) {
            if (key != "cmd" || value.empty()) {
                return Status::corrupt("PMI-2 command does not start with cmd=NAME;: '"
                                       + printable(body) + "'");
            }
            command.name = std::move(value);
            first = false;
        } else {
            command.pairs.emplace_back(std::move(key), std::move(value));
        }
        at = i;
    }
    if (first) {
        return Status::corrupt("PMI-2 command is empty");
    }
    return command;
}

std::string encode_pmi2(const std::string& name, const Pmi2Command::Pairs& pairs) {
    // Every value, the command's name included, ends with ';' and doubles the ones it holds
    // (fuzz_pmi2 found a name with ';' that parsed back as other pairs).
    auto append_value = [](std::string& body, const std::string& value) {
        for (char c : value) {
            body += c;
            if (c == ';') {
                body += ';';
            }
        }
        body += ';';
    };
    std::string body = "cmd=";
    append_value(body, name);
    for (const auto& [key, value] : pairs) {
        body += key + "=";
        append_value(body, value);
    }
    // Left-justified, as Slurm writes it. Replies stay far below 10^6 bytes: a value comes
    // from a command of at most kPmi2MaxCommand bytes.
    std::string header = std::to_string(body.size());
    header.resize(std::max(header.size(), kPmi2HeaderSize), ' ');
    return header + body;
}

Status take_pmi2_frame(std::string& buffer, std::optional<std::string>& body) {
    body.reset();
    if (buffer.size() < kPmi2HeaderSize) {
        return Status::ok();
    }
    // Digits, padded with spaces on either side.
    size_t length = 0;
    bool digits = false;
    bool after = false;
    for (size_t i = 0; i < kPmi2HeaderSize; ++i) {
        const char c = buffer[i];
        if (c >= '0' && c <= '9' && !after) {
            length = length * 10 + static_cast<size_t>(c - '0');
            digits = true;
        } else if (c == ' ') {
            after = digits;
        } else {
            return Status::corrupt("PMI-2 length header '" + printable(buffer.substr(0, 6))
                                   + "' is not a decimal number of 6 characters");
        }
    }
    if (!digits || length == 0 || length > kPmi2MaxCommand) {
        return Status::corrupt(
                fmt::format("PMI-2 command length {} is out of range (accepted: 1 to {})", length,
                            kPmi2MaxCommand));
    }
    if (buffer.size() < kPmi2HeaderSize + length) {
        return Status::ok();
    }
    body = buffer.substr(kPmi2HeaderSize, length);
    buffer.erase(0, kPmi2HeaderSize + length);
    return Status::ok();
}

}  // namespace cohort::pmix
