// Time as the daemons read it, behind one interface so that tests can drive it: node
// timeouts, usage decay, reservation windows and time limits are tested by advancing a
// manual clock (tests/fixtures/manual_clock.h), never by sleeping.
#pragma once

#include <chrono>
#include <cstdint>

namespace cohort {

class Clock {
public:
    virtual ~Clock() = default;
    // Wall-clock seconds since the epoch: submit, start and end times, --begin, windows.
    virtual int64_t unix_seconds() const = 0;
    // Monotonic milliseconds: heartbeats, timeouts and budgets, immune to clock steps.
    virtual int64_t steady_ms() const = 0;
};

class SystemClock final : public Clock {
public:
    int64_t unix_seconds() const override {
        return std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                .count();
    }

    int64_t steady_ms() const override {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                .count();
    }
};

}  // namespace cohort
