// What every CLI command needs: the cluster config, how its frames are vouched for (the key,
// or MUNGE), the caller's credential and a connection to the controller.
#pragma once

#include <functional>
#include <string>

#include "common/config.h"
#include "common/protocol/frame_auth.h"
#include "common/protocol/messages.h"
#include "common/transport/blocking_client.h"

namespace cohort::cli {

struct ClientContext {
    ClusterConfig config;
    protocol::FrameAuth auth;
    protocol::Credential cred;
};

Result<ClientContext> load_client_context();
Result<transport::BlockingClient> connect_controller(const ClientContext& context);
// With the context of this process (load_client_context).
Result<transport::BlockingClient> connect_controller();

// Sends one request to the controller and waits for its reply.
template <typename Reply, typename Request>
Result<Reply> ask(const Request& request) {
    auto client = connect_controller();
    if (!client) {
        return client.status();
    }
    return client->template call<Reply>(request);
}

// Sends a listing request and hands each frame of its reply to `frame` as it arrives (see
// protocol::JobListReply): the listing is never held whole unless the caller keeps it.
template <typename Request>
Status ask_job_list(const Request& request,
                    const std::function<void(protocol::JobListReply&)>& frame) {
    auto client = connect_controller();
    if (!client) {
        return client.status();
    }
    if (Status sent = client->send(request); !sent) {
        return sent;
    }
    // One envelope and one reply for every frame: their memory is reused.
    protocol::Envelope envelope;
    protocol::JobListReply reply;
    reply.jobs.reserve(protocol::JobListReply::kJobsPerFrame);
    for (;;) {
        if (Status received = client->receive_into(envelope); !received) {
            return received;
        }
        if (Status decoded = protocol::decode_message_into(envelope, reply); !decoded) {
            return decoded;
        }
        frame(reply);
        if (!reply.more) {
            return Status::ok();
        }
    }
}

// The caller's login name (what --me selects), or its uid when it has none.
std::string current_user_name();

// Prints "cohort CMD: error: MESSAGE" on stderr and returns the exit code for it.
int report_error(const std::string& command, const Status& status);

}  // namespace cohort::cli
