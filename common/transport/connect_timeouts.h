// How long each kind of outgoing connection may take to open, in one place. Every one of
// these peers already listens when we dial it, so a connect that takes this long means its
// host is down or cut off, not busy: waiting the kernel's minutes would change nothing.
#pragma once

#include <chrono>

namespace cohort::transport {

// cohortd to cohortctld. Short, because the agent retries every 500 ms until it gets through.
inline constexpr std::chrono::milliseconds kControllerConnectTimeout{5000};

// cohortd to the launching client and to its children in the launch tree. Well below the
// client's default launch timeout (30 s, COHORT_LAUNCH_TIMEOUT), so that a child that cannot
// be reached is reported by name ("cannot pass the launch on to ...") before the client gives
// up on it.
inline constexpr std::chrono::milliseconds kLaunchConnectTimeout{10000};

// cohort-stepd to the cohortd that started it, on the same host.
inline constexpr std::chrono::milliseconds kLocalAgentConnectTimeout{5000};

// cohort-stepd to the other nodes' step managers for fences and direct modex. Not the fence
// timeout (minutes, for ranks that are slow to reach the fence): the peer's listener was up
// before its address was handed out.
inline constexpr std::chrono::milliseconds kPeerConnectTimeout{10000};

// The CLI to cohortctld or to a step's first node.
inline constexpr std::chrono::milliseconds kCliConnectTimeout{10000};

}  // namespace cohort::transport
