// The PMI-2 wire format: a 6-character decimal length header, then "cmd=NAME;key=value;...;"
// where ';' ends every pair and a ';' inside a value is doubled. Bytes in, commands out;
// commands in, bytes out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace cohort::pmix {

constexpr size_t kPmi2HeaderSize = 6;
constexpr size_t kPmi2MaxCommand = 64 * 1024;  // as MPICH's client
constexpr size_t kPmi2MaxKey = 64;

struct Pmi2Command {
    using Pairs = std::vector<std::pair<std::string, std::string>>;

    std::string name;  // the value of cmd=
    Pairs pairs;       // the other pairs, in order

    // The value of `key`, or nullopt when the command does not carry it.
    std::optional<std::string> find(const std::string& key) const;
};

// Parses one command body (the bytes after the length header).
Result<Pmi2Command> parse_pmi2_command(const std::string& body);

// The bytes of one command: header, "cmd=NAME;", then the pairs with ';' escaped.
std::string encode_pmi2(const std::string& name, const Pmi2Command::Pairs& pairs);

// Takes one whole command body off the front of `buffer` into `body`; leaves both alone while
// the command is incomplete. An error (a bad header, an over-long command) ends the stream.
Status take_pmi2_frame(std::string& buffer, std::optional<std::string>& body);

}  // namespace cohort::pmix
