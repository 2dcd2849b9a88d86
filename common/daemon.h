// Small daemon helpers shared by cohortctld and cohortd: pid files and signal-driven stop.
#pragma once

#include <functional>
#include <string>

#include "common/asio.h"

namespace cohort {

void write_pid_file(const std::string& path);
void remove_pid_file(const std::string& path);

// On SIGTERM or SIGINT: runs `on_stop`, then stops `io`.
void stop_on_signals(boost::asio::io_context& io, std::function<void()> on_stop);

}  // namespace cohort
