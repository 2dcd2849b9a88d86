// Reading /proc/net/tcp: "sl local_address rem_address st ... uid ...", addresses as the
// kernel prints a __be32 with %08X (so byte order is the host's view of network order) and
// ports in hex.
#include "pmix/loopback_owner.h"

#include <cstdio>
#include <sstream>

#include <arpa/inet.h>

namespace cohort::pmix {
namespace {

std::optional<std::string> kernel_form(const std::string& ip, uint16_t port) {
    in_addr address{};
    if (inet_pton(AF_INET, ip.c_str(), &address) != 1) {
        return std::nullopt;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%08X:%04X", address.s_addr, port);
    return std::string(text);
}

}  // namespace

std::optional<uint32_t> tcp_socket_owner(const std::string& proc_net_tcp,
                                         const std::string& local_ip,
                                         uint16_t local_port,
                                         const std::string& remote_ip,
                                         uint16_t remote_port) {
    auto local = kernel_form(local_ip, local_port);
    auto remote = kernel_form(remote_ip, remote_port);
    if (!local || !remote) {
        return std::nullopt;
    }
    std::istringstream lines(proc_net_tcp);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::string slot, own, peer, state, queues, timer, retransmits;
        uint32_t uid = 0;
        if (!(fields >> slot >> own >> peer >> state >> queues >> timer >> retransmits >> uid)) {
            continue;  // the header line
        }
        if (own == *local && peer == *remote) {
            return uid;
        }
    }
    return std::nullopt;
}

}  // namespace cohort::pmix
