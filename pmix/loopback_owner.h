// Who opened a loopback TCP connection: the uid the kernel lists for the client's socket in
// /proc/net/tcp. The PMI port uses it to turn away other users before a byte is read (a
// TCP peer has no SO_PEERCRED). Pure: the table's text comes in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cohort::pmix {

// The uid owning the IPv4 socket whose local end is `local` and remote end `remote`
// ("a.b.c.d" and port, as the server's accept() saw the peer and itself), or nullopt when
// /proc/net/tcp's text has no such line.
std::optional<uint32_t> tcp_socket_owner(const std::string& proc_net_tcp,
                                         const std::string& local_ip,
                                         uint16_t local_port,
                                         const std::string& remote_ip,
                                         uint16_t remote_port);

}  // namespace cohort::pmix
