// Advance reservations: their windows, overlaps and ends.
#include "scheduler/ctld/reservation_book.h"

#include <algorithm>

#include <fmt/format.h>

namespace cohort::ctld {

const protocol::ReservationRecord* ReservationBook::find(const std::string& name) const {
    auto it = reservations_.find(name);
    return it == reservations_.end() ? nullptr : &it->second;
}

void ReservationBook::put(protocol::ReservationRecord reservation) {
    std::string name = reservation.name;
    reservations_[std::move(name)] = std::move(reservation);
}

void ReservationBook::erase(const std::string& name) {
    reservations_.erase(name);
}

std::string ReservationBook::overlap_on(const protocol::ReservationRecord& wanted,
                                        const std::string& node) const {
    for (const auto& [name, other] : reservations_) {
        const bool overlaps =
                wanted.start_time < other.end_time && other.start_time < wanted.end_time;
        if (overlaps
            && std::find(other.nodes.begin(), other.nodes.end(), node) != other.nodes.end()) {
            return fmt::format("node {} is in reservation '{}' at that time", node, name);
        }
    }
    return "";
}

std::vector<std::string> ReservationBook::ended_by(int64_t now) const {
    std::vector<std::string> ended;
    for (const auto& [name, reservation] : reservations_) {
        if (reservation.end_time <= now) {
            ended.push_back(name);
        }
    }
    return ended;
}

std::map<std::string, std::string> ReservationBook::maintenance_at(int64_t now) const {
    std::map<std::string, std::string> held;
    for (const auto& [name, reservation] : reservations_) {
        if (reservation.maintenance && reservation.start_time <= now
            && now < reservation.end_time) {
            for (const auto& node : reservation.nodes) {
                held.emplace(node, name);
            }
        }
    }
    return held;
}

std::vector<sched::ReservationWindow> ReservationBook::windows(
        const std::function<int(const std::string&)>& index_of) const {
    std::vector<sched::ReservationWindow> windows;
    windows.reserve(reservations_.size());
    for (const auto& [name, reservation] : reservations_) {
        sched::ReservationWindow window;
        window.name = name;
        window.start = reservation.start_time;
        window.end = reservation.end_time;
        window.maintenance = reservation.maintenance;
        for (const auto& node : reservation.nodes) {
            if (const int index = index_of(node); index >= 0) {
                window.nodes.push_back(index);
            }
        }
        windows.push_back(std::move(window));
    }
    return windows;
}

}  // namespace cohort::ctld
