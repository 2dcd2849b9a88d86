// Boost.Asio, included the one way that compiles with Boost 1.74 under C++20 on GCC 12:
// its awaitable.hpp uses std::exchange without including <utility>.
#pragma once

#include <utility>

#include <boost/asio.hpp>
