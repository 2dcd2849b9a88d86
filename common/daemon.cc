// Pid files and signal handling for the daemons.
#include "common/daemon.h"

#include <csignal>
#include <fstream>
#include <memory>

#include <unistd.h>

namespace cohort {

void write_pid_file(const std::string& path) {
    if (path.empty()) {
        return;
    }
    std::ofstream out(path + ".tmp", std::ios::trunc);
    out << getpid() << "\n";
    out.close();
    std::rename((path + ".tmp").c_str(), path.c_str());
}

void remove_pid_file(const std::string& path) {
    if (!path.empty()) {
        ::unlink(path.c_str());
    }
}

void stop_on_signals(boost::asio::io_context& io, std::function<void()> on_stop) {
    auto signals = std::make_shared<boost::asio::signal_set>(io, SIGTERM, SIGINT);
    signals->async_wait(
            [&io, signals, on_stop = std::move(on_stop)](const boost::system::error_code& ec, int) {
                if (ec) {
                    return;
                }
                on_stop();
                io.stop();
            });
}

}  // namespace cohort
