// PMI-2 commands and replies. Every reply carries rc (0 or -1) and, on failure, an errmsg
// the client's MPI prints; a reply echoes the request's thrid.
#include "pmix/pmi2_server.h"

#include <algorithm>

namespace cohort::pmix {
namespace {

constexpr const char* kTrue = "TRUE";
constexpr const char* kFalse = "FALSE";

// A response's pairs start with the request's thread id, when it gave one.
Pmi2Command::Pairs response_pairs(const std::string& thrid) {
    Pmi2Command::Pairs pairs;
    if (!thrid.empty()) {
        pairs.emplace_back("thrid", thrid);
    }
    return pairs;
}

// Commands of the PMI-2 standard that Cohort does not serve: a clean error, not a hang.
bool unsupported(const std::string& name) {
    static const std::set<std::string> kNames{"spawn",       "name-publish", "name-unpublish",
                                              "name-lookup", "job-connect",  "job-disconnect"};
    return kNames.count(name) != 0;
}

}  // namespace

PmiOutput Pmi2Server::on_command(PmiClient client, const Pmi2Command& command) {
    const std::string thrid = command.find("thrid").value_or("");
    return handle(client, command, thrid);
}

std::string Pmi2Server::fence_reply(PmiClient client, bool ok) {
    Pmi2Command::Pairs pairs;
    auto it = fence_thrids_.find(client);
    if (it != fence_thrids_.end()) {
        if (!it->second.empty()) {
            pairs.emplace_back("thrid", it->second);
        }
        fence_thrids_.erase(it);
    }
    pairs.emplace_back("rc", ok ? "0" : "-1");
    if (!ok) {
        pairs.emplace_back("errmsg",
                           "the fence across the step's nodes failed (see the step's "
                           "error output)");
    }
    return encode_pmi2("kvs-fence-response", pairs);
}

void Pmi2Server::forget(PmiClient client) {
    initialized_.erase(client);
    fence_thrids_.erase(client);
    for (auto& [key, waiters] : attr_waiters_) {
        waiters.erase(std::remove_if(waiters.begin(), waiters.end(),
                                     [client](const Waiter& w) { return w.client == client; }),
                      waiters.end());
    }
}

PmiOutput Pmi2Server::handle(PmiClient client,
                             const Pmi2Command& command,
                             const std::string& thrid) {
    PmiOutput out;
    const std::string& name = command.name;
    auto reply = [&](Pmi2Command::Pairs pairs) {
        Pmi2Command::Pairs all = response_pairs(thrid);
        all.emplace_back("rc", "0");
        for (auto& pair : pairs) {
            all.push_back(std::move(pair));
        }
        out.replies.push_back({client, encode_pmi2(name + "-response", all)});
    };
    auto fail = [&](const std::string& why) {
        Pmi2Command::Pairs all = response_pairs(thrid);
        all.emplace_back("rc", "-1");
        all.emplace_back("errmsg", why);
        out.replies.push_back({client, encode_pmi2(name + "-response", all)});
    };
    auto arg = [&](const std::string& key) {
        return command.find(key).value_or("");
    };

    if (name == "fullinit") {
        return fullinit(client, command, thrid);
    }
    if (initialized_.count(client) == 0) {
        fail("PMI-2 " + name + " before fullinit");
        out.error = "PMI-2 cmd=" + name + " from a connection that has not sent fullinit";
        return out;
    }
    if (name == "job-getid") {
        reply({{"jobid", core_.job().kvsname}});
    } else if (name == "info-getjobattr") {
        const std::string key = arg("key");
        std::string value;
        if (key == "PMI_process_mapping") {
            value = core_.job().process_mapping;
        } else if (key == "universeSize") {
            value = std::to_string(core_.job().size);
        }
        if (value.empty()) {
            reply({{"found", kFalse}});
        } else {
            reply({{"found", kTrue}, {"value", value}});
        }
    } else if (name == "info-getnodeattr") {
        out.merge(get_node_attr(client, command, thrid));
    } else if (name == "info-putnodeattr") {
        out.merge(put_node_attr(client, command, thrid));
    } else if (name == "kvs-put") {
        if (!command.find("key") || arg("key").empty()) {
            fail("kvs-put without a key");
        } else {
            core_.put(arg("key"), arg("value"));
            reply({});
        }
    } else if (name == "kvs-get") {
        const std::string jobid = arg("jobid");
        if (!jobid.empty() && jobid != core_.job().kvsname) {
            fail("kvs-get: unknown jobid '" + jobid + "' (this job is '" + core_.job().kvsname
                 + "')");
        } else if (auto value = core_.get(arg("key"))) {
            reply({{"found", kTrue}, {"value", *value}});
        } else {
            reply({{"found", kFalse}});
        }
    } else if (name == "kvs-fence") {
        fence_thrids_[client] = thrid;
        out.barrier = core_.enter_barrier(client);
    } else if (name == "finalize") {
        reply({});
    } else if (name == "abort") {
        auto rank = core_.rank_of(client);
        const std::string message = arg("msg");
        out.abort = PmiOutput::Abort{rank ? static_cast<int32_t>(*rank) : -1, 1,
                                     message.empty() ? "PMI-2 abort" : message};
    } else if (unsupported(name)) {
        fail(name + " is not supported by Cohort's PMI-2 server");
    } else {
        fail("unknown PMI-2 command '" + name + "'");
    }
    return out;
}

PmiOutput Pmi2Server::fullinit(PmiClient client,
                               const Pmi2Command& command,
                               const std::string& thrid) {
    PmiOutput out;
    Pmi2Command::Pairs pairs = response_pairs(thrid);
    auto refuse = [&](const std::string& why) {
        pairs.emplace_back("rc", "-1");
        pairs.emplace_back("errmsg", why);
        out.replies.push_back({client, encode_pmi2("fullinit-response", pairs)});
        out.error = "PMI-2 fullinit refused: " + why;
        return out;
    };
    const std::string jobid = command.find("pmijobid").value_or("");
    if (!jobid.empty() && jobid != core_.job().kvsname) {
        return refuse("pmijobid '" + jobid + "' is not this step's job '" + core_.job().kvsname
                      + "'");
    }
    auto id = command.find("pmirank");
    if (!id) {
        return refuse("fullinit without pmirank (PMI_ID or PMI_RANK)");
    }
    auto rank = core_.claim(client, *id);
    if (!rank) {
        return refuse(rank.status().message());
    }
    initialized_.insert(client);
    // No spawner-jobid: its presence tells the client it was spawned.
    pairs.insert(pairs.end(), {{"rc", "0"},
                               {"pmi-version", "2"},
                               {"pmi-subversion", "0"},
                               {"rank", std::to_string(*rank)},
                               {"size", std::to_string(core_.job().size)},
                               {"appnum", "0"},
                               {"debugged", kFalse},
                               {"pmiverbose", kFalse}});
    out.replies.push_back({client, encode_pmi2("fullinit-response", pairs)});
    return out;
}

PmiOutput Pmi2Server::get_node_attr(PmiClient client,
                                    const Pmi2Command& command,
                                    const std::string& thrid) {
    PmiOutput out;
    const std::string key = command.find("key").value_or("");
    Pmi2Command::Pairs pairs = response_pairs(thrid);
    pairs.emplace_back("rc", "0");
    auto it = node_attrs_.find(key);
    if (it != node_attrs_.end()) {
        pairs.emplace_back("found", kTrue);
        pairs.emplace_back("value", it->second);
    } else if (command.find("wait").value_or(kFalse) == kTrue) {
        attr_waiters_[key].push_back({client, thrid});  // answered by the put
        return out;
    } else {
        pairs.emplace_back("found", kFalse);
    }
    out.replies.push_back({client, encode_pmi2("info-getnodeattr-response", pairs)});
    return out;
}

PmiOutput Pmi2Server::put_node_attr(PmiClient client,
                                    const Pmi2Command& command,
                                    const std::string& thrid) {
    PmiOutput out;
    Pmi2Command::Pairs pairs = response_pairs(thrid);
    auto key = command.find("key");
    if (!key || key->empty()) {
        pairs.emplace_back("rc", "-1");
        pairs.emplace_back("errmsg", "info-putnodeattr without a key");
        out.replies.push_back({client, encode_pmi2("info-putnodeattr-response", pairs)});
        return out;
    }
    const std::string value = command.find("value").value_or("");
    node_attrs_[*key] = value;
    pairs.emplace_back("rc", "0");
    out.replies.push_back({client, encode_pmi2("info-putnodeattr-response", pairs)});
    auto waiting = attr_waiters_.find(*key);
    if (waiting != attr_waiters_.end()) {
        for (const Waiter& waiter : waiting->second) {
            Pmi2Command::Pairs found = response_pairs(waiter.thrid);
            found.insert(found.end(), {{"rc", "0"}, {"found", kTrue}, {"value", value}});
            out.replies.push_back({waiter.client, encode_pmi2("info-getnodeattr-response", found)});
        }
        attr_waiters_.erase(waiting);
    }
    return out;
}

}  // namespace cohort::pmix
