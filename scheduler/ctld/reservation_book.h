// The advance reservations the controller holds: which exist, which overlap a wanted window on
// a node, which have ended by a given time, and the windows the scheduling pass respects.
// Storing them is the caller's, through the state writer.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/protocol/job_types.h"
#include "scheduler/snapshot.h"

namespace cohort::ctld {

class ReservationBook {
public:
    using Map = std::map<std::string, protocol::ReservationRecord>;

    const Map& all() const { return reservations_; }

    size_t size() const { return reservations_.size(); }

    const protocol::ReservationRecord* find(const std::string& name) const;
    void put(protocol::ReservationRecord reservation);
    void erase(const std::string& name);

    // Why `node` cannot be in `wanted`: another reservation holds it in an overlapping
    // window. Empty when it can.
    std::string overlap_on(const protocol::ReservationRecord& wanted,
                           const std::string& node) const;
    // The nodes a maintenance reservation holds at `now`, each with that reservation's name.
    std::map<std::string, std::string> maintenance_at(int64_t now) const;
    // The reservations whose window has ended by `now`.
    std::vector<std::string> ended_by(int64_t now) const;
    // Every reservation as the scheduling pass's window, nodes as `index_of` numbers them
    // (-1: not a node of the cluster).
    std::vector<sched::ReservationWindow> windows(
            const std::function<int(const std::string&)>& index_of) const;

private:
    Map reservations_;
};

}  // namespace cohort::ctld
