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

// Netstring-like framing, so blobs of several nodes can simply be concatenated.
void append_field(std::string& blob, const std::string& field) {
    blob += std::to_string(field.size()) + ":" + field;
}

bool read_field(const std::string& blob, size_t& at, std::string& field) {
    const size_t colon = blob.find(':', at);
    if (colon == std::string::npos) {
        return false;
    }
    char* end = nullptr;
    const size_t length = std::strtoul(blob.c_str() + at, &end, 10);
    if (end != blob.c_str() + colon || colon + 1 + length > blob.size()) {
        return false;
    }
    field = blob.substr(colon + 1, length);
    at = colon + 1 + length;
    return true;
}

}  // namespace

std::string pmi_process_mapping(const std::vector<uint32_t>& tasks_per_node) {
    std::string mapping = "(vector";
    for (size_t node = 0; node < tasks_per_node.size();) {
        size_t run = 1;
        while (node + run < tasks_per_node.size()
                && tasks_per_node[node + run] == tasks_per_node[node]) {
            ++run;
        }
        mapping += ",(" + std::to_string(node) + "," + std::to_string(run) + ","
                + std::to_string(tasks_per_node[node]) + ")";
        node += run;
    }
    return mapping + ")";
}

PmiSimpleServer::PmiSimpleServer(PmiJob job) : job_(std::move(job)) {
    kvs_["PMI_process_mapping"] = job_.process_mapping;
}

PmiSimpleServer::Output PmiSimpleServer::on_line(Client client, const std::string& line) {
    auto args = parse_pairs(line);
    auto command = args.find("cmd");
    if (command == args.end()) {
        Output output;
        output.error = "PMI line without cmd=: '" + line + "'";
        return output;
    }
    return handle(client, command->second, args);
}

PmiSimpleServer::Output PmiSimpleServer::handle(Client client, const std::string& command,
        const std::map<std::string, std::string>& args) {
    Output out;
    auto reply = [&](const std::string& text) { out.replies.push_back({client, text + "\n"}); };
    auto arg = [&](const std::string& name) {
        auto it = args.find(name);
        return it == args.end() ? std::string() : it->second;
    };
    if (command == "initack") {  // PMI_PORT mode: the client names its rank first
        const std::string rank = arg("pmiid");
        ranks_[client] = std::atoi(rank.c_str());
        reply("cmd=initack rc=0");
        reply("cmd=set size=" + std::to_string(job_.size));
        reply("cmd=set rank=" + rank);
        reply("cmd=set debug=0");
    } else if (command == "init") {
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
        reply("cmd=universe_size size=" + std::to_string(job_.size) + " rc=0");
    } else if (command == "get_my_kvsname") {
        reply("cmd=my_kvsname kvsname=" + job_.kvsname + " rc=0");
    } else if (command == "put") {
        pending_.emplace_back(arg("key"), arg("value"));
        kvs_[arg("key")] = arg("value");  // a rank reads its own puts at once
        reply("cmd=put_result rc=0 msg=success");
    } else if (command == "get") {
        auto it = kvs_.find(arg("key"));
        if (it == kvs_.end()) {
            reply("cmd=get_result rc=-1 msg=key_" + arg("key") + "_not_found");
        } else {
            reply("cmd=get_result rc=0 msg=success value=" + it->second);
        }
    } else if (command == "barrier_in") {
        in_barrier_.insert(client);
        if (in_barrier_.size() == job_.local_ranks.size()) {
            std::string blob;
            for (const auto& [key, value] : pending_) {
                append_field(blob, key);
                append_field(blob, value);
            }
            pending_.clear();
            out.barrier = std::move(blob);
        }
    } else if (command == "finalize") {
        reply("cmd=finalize_ack rc=0");
    } else if (command == "abort") {
        const std::string code = arg("exitcode");
        auto rank = ranks_.find(client);
        out.abort = Output::Abort{rank == ranks_.end() ? -1 : rank->second,
                code.empty() ? 1 : std::atoi(code.c_str()),
                arg("message").empty() ? "PMI abort" : arg("message")};
    } else {
        reply("cmd=" + command + "_result rc=-1 msg=unsupported_by_cohort");
    }
    return out;
}

PmiSimpleServer::Output PmiSimpleServer::barrier_done(const std::string& all_nodes) {
    Output out;
    size_t at = 0;
    std::string key;
    std::string value;
    while (at < all_nodes.size() && read_field(all_nodes, at, key)
            && read_field(all_nodes, at, value)) {
        kvs_[key] = value;
    }
    for (Client client : in_barrier_) {
        out.replies.push_back({client, "cmd=barrier_out rc=0\n"});
    }
    in_barrier_.clear();
    return out;
}

PmiSimpleServer::Output PmiSimpleServer::barrier_failed() {
    Output out;
    for (Client client : in_barrier_) {
        out.replies.push_back({client, "cmd=barrier_out rc=-1\n"});
    }
    in_barrier_.clear();
    return out;
}

void PmiSimpleServer::forget(Client client) {
    ranks_.erase(client);
    in_barrier_.erase(client);
}

}  // namespace cohort::pmix
