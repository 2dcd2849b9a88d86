// Loading the client side of the cluster configuration.
#include "cli/client_context.h"

#include <iostream>

#include <pwd.h>
#include <unistd.h>

namespace cohort::cli {

Result<ClientContext> load_client_context() {
    auto config = load_config(default_config_path());
    if (!config) {
        return config.status();
    }
    auto auth = protocol::client_frame_auth(*config);
    if (!auth) {
        return auth.status();
    }
    return ClientContext{std::move(*config),
                         std::move(*auth),
                         {static_cast<uint32_t>(getuid()), static_cast<uint32_t>(getgid())}};
}

// The primary first, then each backup: a standby does not listen until it is active.
Result<transport::BlockingClient> connect_controller(const ClientContext& context) {
    Status failed = Status::unavailable("no controller configured");
    for (const ControllerAddress& address : controller_addresses(context.config)) {
        auto client = transport::BlockingClient::connect(address.host, address.port, context.auth,
                                                         context.cred);
        if (client) {
            return client;
        }
        failed = client.status();
    }
    return failed.with_context("cannot reach cohortctld (is the instance up?)");
}

Result<transport::BlockingClient> connect_controller() {
    auto context = load_client_context();
    if (!context) {
        return context.status();
    }
    return connect_controller(*context);
}

std::string current_user_name() {
    struct passwd pw {};
    struct passwd* found = nullptr;
    char buffer[4096];
    const uid_t uid = getuid();
    if (getpwuid_r(uid, &pw, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
        return pw.pw_name;
    }
    return std::to_string(uid);
}

int report_error(const std::string& command, const Status& status) {
    std::cerr << "cohort " << command << ": error: " << status.message() << "\n";
    return status.code() == StatusCode::kUnavailable ? 3 : 1;
}

}  // namespace cohort::cli
