// PMI-1 commands and replies (the wire format of MPICH's src/pmi/simple client).
#include "pmix/pmi_simple.h"

#include <cstdlib>
#include <sstream>

namespace cohort::pmix {
namespace {

std::map<std::string, std::string> parse_pairs(const std::string& line) {
    std::map<std::string, std::string> pairs;
    std::istringstream words(line);
    for (std::string word; words >> word;) {
        const size_t eq = word.find('=');  // a value may itself hold '='
        if (eq != std::string::npos) {
            pairs[word.substr(0, eq)] = word.substr(eq + 1);
        }
    }
    return pairs;
}

// PMI-1 values end at a space: the words of a message are joined with '_'.
std::string one_word(std::string text) {
    for (char& c : text) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            c = '_';
        }
    }
    return text;
}

}  // namespace

std::string PmiSimpleServer::barrier_reply(bool ok) {
    return ok ? "cmd=barrier_out rc=0\n" : "cmd=barrier_out rc=-1\n";
}

PmiOutput PmiSimpleServer::on_line(PmiClient client, const std::string& line) {
    auto args = parse_pairs(line);
    auto command = args.find("cmd");
    if (command == args.end()) {
        PmiOutput output;
        output.error = "PMI-1 line without cmd=: '" + line.substr(0, 200) + "'";
        return output;
    }
    return handle(client, command->second, args);
}

PmiOutput PmiSimpleServer::handle(PmiClient client,
                                  const std::string& command,
                                  const std::map<std::string, std::string>& args) {
    PmiOutput out;
    auto reply = [&](const std::string& text) {
        out.replies.push_back({client, text + "\n"});
    };
    auto arg = [&](const std::string& name) {
        auto it = args.find(name);
        return it == args.end() ? std::string() : it->second;
    };
    if (command == "initack") {  // PMI_PORT mode: the client presents its PMI_ID first
        auto rank = core_.claim(client, arg("pmiid"));
        if (!rank) {
            reply("cmd=initack rc=-1 msg=" + one_word("refused: " + rank.status().message()));
            out.error = "PMI-1 initack refused: " + rank.status().message();
            return out;
        }
        reply("cmd=initack rc=0");
        reply("cmd=set size=" + std::to_string(core_.job().size));
        reply("cmd=set rank=" + std::to_string(*rank));
        reply("cmd=set debug=0");
        return out;
    }
    if (command != "init" && core_.requires_id() && !core_.rank_of(client)) {
        reply("cmd=" + command + "_result rc=-1 msg=refused:_send_initack_with_PMI_ID_first");
        out.error = "PMI-1 cmd=" + one_word(command)
                    + " from a connection that has not presented a PMI_ID (initack)";
        return out;
    }
    if (command == "init") {
        if (arg("pmi_version") != "1") {
            reply("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1");
        } else {
            reply("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
        }
    } else if (command == "get_maxes") {
        reply("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0");
    } else if (command == "get_appnum") {
        reply("cmd=appnum appnum=0 rc=0");
    } else if (command == "get_universe_size") {
        reply("cmd=universe_size size=" + std::to_string(core_.job().size) + " rc=0");
    } else if (command == "get_my_kvsname") {
        reply("cmd=my_kvsname kvsname=" + core_.job().kvsname + " rc=0");
    } else if (command == "put") {
        core_.put(arg("key"), arg("value"));
        reply("cmd=put_result rc=0 msg=success");
    } else if (command == "get") {
        auto value = core_.get(arg("key"));
        if (!value) {
            reply("cmd=get_result rc=-1 msg=key_" + arg("key") + "_not_found");
        } else {
            reply("cmd=get_result rc=0 msg=success value=" + *value);
        }
    } else if (command == "barrier_in") {
        out.barrier = core_.enter_barrier(client);
    } else if (command == "finalize") {
        reply("cmd=finalize_ack rc=0");
    } else if (command == "abort") {
        const std::string code = arg("exitcode");
        auto rank = core_.rank_of(client);
        out.abort = PmiOutput::Abort{rank ? static_cast<int32_t>(*rank) : -1,
                                     code.empty() ? 1 : std::atoi(code.c_str()),
                                     arg("message").empty() ? "PMI abort" : arg("message")};
    } else {
        reply("cmd=" + command + "_result rc=-1 msg=unsupported_by_cohort");
    }
    return out;
}

}  // namespace cohort::pmix
