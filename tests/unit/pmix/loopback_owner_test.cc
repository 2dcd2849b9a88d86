// Finding the uid behind a loopback TCP connection in /proc/net/tcp: a recorded table, and
// a live connection of this process.
#include "pmix/loopback_owner.h"

#include <fstream>
#include <sstream>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cohort::pmix {
namespace {

// 127.0.0.1:40000 (uid 1000) connected to the listener 127.0.0.1:35555 (uid 0).
const std::string kTable =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        "timeout inode\n"
        "   0: 0100007F:8AE3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0     "
        "   0 1062 1 0000000000000000 100 0 0 10 0\n"
        "   1: 0100007F:9C40 0100007F:8AE3 01 00000000:00000000 00:00000000 00000000  1000     "
        "   0 2211 1 0000000000000000 20 4 30 10 -1\n"
        "   2: 0100007F:8AE3 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0     "
        "   0 2212 1 0000000000000000 20 4 30 10 -1\n";

TEST(LoopbackOwner, FindsTheClientSocketsLine) {
    EXPECT_EQ(tcp_socket_owner(kTable, "127.0.0.1", 40000, "127.0.0.1", 35555), 1000u);
    EXPECT_EQ(tcp_socket_owner(kTable, "127.0.0.1", 35555, "127.0.0.1", 40000), 0u);
    EXPECT_FALSE(tcp_socket_owner(kTable, "127.0.0.1", 40001, "127.0.0.1", 35555));
    EXPECT_FALSE(tcp_socket_owner(kTable, "not an address", 1, "127.0.0.1", 35555));
    EXPECT_FALSE(tcp_socket_owner("", "127.0.0.1", 40000, "127.0.0.1", 35555));
}

TEST(LoopbackOwner, ALiveConnectionOfThisProcessIsOurs) {
    const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(listen(listener, 1), 0);
    socklen_t length = sizeof address;
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
    const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    sockaddr_in mine{};
    length = sizeof mine;
    getsockname(client, reinterpret_cast<sockaddr*>(&mine), &length);

    std::ifstream file("/proc/net/tcp");
    std::stringstream table;
    table << file.rdbuf();
    EXPECT_EQ(tcp_socket_owner(table.str(), "127.0.0.1", ntohs(mine.sin_port), "127.0.0.1",
                               ntohs(address.sin_port)),
              static_cast<uint32_t>(getuid()));
    close(client);
    close(listener);
}

}  // namespace
}  // namespace cohort::pmix
