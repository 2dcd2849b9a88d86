// What every CLI command needs: the cluster config, the key, the caller's credential and a
// connection to the controller.
#pragma once

#include <string>

#include "common/config.h"
#include "common/transport/blocking_client.h"

namespace cohort::cli {

struct ClientContext {
    ClusterConfig config;
    std::string key;
    protocol::Credential cred;
};

Result<ClientContext> load_client_context();
Result<transport::BlockingClient> connect_controller(const ClientContext& context);

// Sends one request to the controller and waits for its reply.
template <typename Reply, typename Request>
Result<Reply> ask(const Request& request) {
    auto context = load_client_context();
    if (!context) {
        return context.status();
    }
    auto client = connect_controller(*context);
    if (!client) {
        return client.status();
    }
    return client->template call<Reply>(request);
}

// Prints "cohort CMD: error: MESSAGE" on stderr and returns the exit code for it.
int report_error(const std::string& command, const Status& status);

}  // namespace cohort::cli
