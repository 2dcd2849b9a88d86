// Outgoing TCP connections with a deadline. A peer whose host is down never answers the SYN,
// and the kernel gives up only after minutes: a daemon must not lose its io thread, nor a CLI
// command hang, for that long.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "common/asio.h"
#include "common/status.h"

namespace cohort::transport {

namespace asio = boost::asio;
using asio::ip::tcp;

// Receives the connected socket, or why there is none.
using ConnectHandler = std::function<void(Result<tcp::socket>)>;

// Resolves `host` (asynchronously, unless it is a literal address) and connects to the first
// of its addresses that accepts, all within `timeout`. Returns at once; `done` runs exactly
// once, later, on a thread running `io`, with a socket bound to a new strand of `io`, or with
// an unavailable Status naming host:port and the cause ("timed out after N ms" or the OS
// error). Nothing cancels an attempt: when `io` stops first, `done` is destroyed unrun.
void async_connect_to(asio::io_context& io,
                      const std::string& host,
                      uint16_t port,
                      std::chrono::milliseconds timeout,
                      ConnectHandler done);

// The same, blocking the calling thread for at most `timeout` (name resolution aside, which
// getaddrinfo bounds itself): for the CLI, which has nothing else to serve meanwhile. The
// attempt runs on a private io_context, so `io` need not run, and may run elsewhere; the
// socket returned is bound to a new strand of `io`.
Result<tcp::socket> connect_to(asio::io_context& io,
                               const std::string& host,
                               uint16_t port,
                               std::chrono::milliseconds timeout);

}  // namespace cohort::transport
