// Splitting a connection's bytes into PMI-1 lines or PMI-2 frames, and routing them.
#include "pmix/pmi_service.h"

#include <fmt/format.h>

namespace cohort::pmix {

PmiService::PmiService(PmiJob job) : core_(std::move(job)), pmi1_(core_), pmi2_(core_) {}

PmiOutput PmiService::on_bytes(PmiClient client, const std::string& bytes) {
    Stream& stream = streams_[client];
    PmiOutput out;
    if (stream.mode == Mode::kClosed) {
        return out;
    }
    if (auto channel = channel_rank_.find(client); channel != channel_rank_.end()) {
        const Status bound = core_.bind(client, channel->second);
        channel_rank_.erase(channel);
        if (!bound) {
            stream.mode = Mode::kClosed;
            out.error = bound.message();
            return out;
        }
    }
    stream.buffer += bytes;
    for (bool progressed = true; progressed && stream.mode != Mode::kClosed;) {
        progressed = false;
        out.merge(next(client, stream, progressed));
        if (!out.error.empty()) {
            stream.mode = Mode::kClosed;
            stream.buffer.clear();
        }
    }
    return out;
}

// Handles the first complete line or frame in the stream's buffer, if there is one.
PmiOutput PmiService::next(PmiClient client, Stream& stream, bool& progressed) {
    PmiOutput out;
    if (stream.mode == Mode::kPmi2) {
        std::optional<std::string> body;
        if (Status taken = take_pmi2_frame(stream.buffer, body); !taken) {
            out.error = taken.message();
            return out;
        }
        if (!body) {
            return out;
        }
        progressed = true;
        auto command = parse_pmi2_command(*body);
        if (!command) {
            // The client waits for an answer: tell it why before the connection closes.
            out.replies.push_back(
                    {client, encode_pmi2("error-response",
                                         {{"rc", "-1"}, {"errmsg", command.status().message()}})});
            out.error = command.status().message();
            return out;
        }
        return pmi2_.on_command(client, *command);
    }
    const size_t newline = stream.buffer.find('\n');
    if (newline == std::string::npos) {
        if (stream.buffer.size() > kPmiMaxLine) {
            out.error = fmt::format("PMI-1 line longer than {} bytes", kPmiMaxLine);
        }
        return out;
    }
    progressed = true;
    std::string line = stream.buffer.substr(0, newline);
    stream.buffer.erase(0, newline + 1);
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    if (stream.mode == Mode::kUnknown) {
        stream.mode = Mode::kPmi1;
        // A PMI-2 client's first line; everything after it is length-prefixed.
        if (line.rfind("cmd=init ", 0) == 0 && line.find(" pmi_version=2") != std::string::npos) {
            stream.mode = Mode::kPmi2;
            out.replies.push_back(
                    {client, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"});
            return out;
        }
    }
    return pmi1_.on_line(client, line);
}

PmiOutput PmiService::release(const std::vector<PmiClient>& clients, bool ok) {
    PmiOutput out;
    for (PmiClient client : clients) {
        auto it = streams_.find(client);
        if (it == streams_.end()) {
            continue;
        }
        const std::string reply = it->second.mode == Mode::kPmi2
                                          ? pmi2_.fence_reply(client, ok)
                                          : PmiSimpleServer::barrier_reply(ok);
        out.replies.push_back({client, reply});
    }
    return out;
}

PmiOutput PmiService::barrier_done(const std::string& all_nodes) {
    return release(core_.finish_barrier(all_nodes), true);
}

PmiOutput PmiService::barrier_failed() {
    return release(core_.fail_barrier(), false);
}

void PmiService::forget(PmiClient client) {
    core_.forget(client);
    pmi2_.forget(client);
    streams_.erase(client);
    channel_rank_.erase(client);
}

}  // namespace cohort::pmix
