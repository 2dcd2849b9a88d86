// Advance reservations: overlaps, windows and their end, judged by a manual clock.
#include "scheduler/ctld/reservation_book.h"

#include <gtest/gtest.h>

#include "tests/fixtures/manual_clock.h"

namespace cohort::ctld {
namespace {

protocol::ReservationRecord reservation(const std::string& name,
                                        int64_t start,
                                        int64_t end,
                                        std::vector<std::string> nodes) {
    protocol::ReservationRecord r;
    r.name = name;
    r.start_time = start;
    r.end_time = end;
    r.nodes = std::move(nodes);
    return r;
}

TEST(ReservationBook, AWindowStartsInTheFutureAndEndsWhenTheClockPassesItsEnd) {
    testing::ManualClock clock;
    const int64_t t0 = clock.unix_seconds();
    ReservationBook book;
    book.put(reservation("maint", t0 + 3600, t0 + 7200, {"n2", "n9"}));
    book.put(reservation("train", t0, t0 + 600, {"n1"}));

    const auto windows = book.windows([](const std::string& node) {
        return node == "n1" ? 0 : node == "n2" ? 1 : -1;  // n9 is not in the cluster
    });
    ASSERT_EQ(windows.size(), 2u);
    EXPECT_EQ(windows[0].name, "maint");
    EXPECT_EQ(windows[0].start, t0 + 3600);  // the pass keeps jobs out from its start
    EXPECT_EQ(windows[0].nodes, std::vector<int>{1});
    EXPECT_EQ(windows[1].nodes, std::vector<int>{0});

    clock.advance_s(599);
    EXPECT_TRUE(book.ended_by(clock.unix_seconds()).empty());
    clock.advance_s(1);
    EXPECT_EQ(book.ended_by(clock.unix_seconds()), std::vector<std::string>{"train"});
    book.erase("train");
    clock.advance_s(7200);
    EXPECT_EQ(book.ended_by(clock.unix_seconds()), std::vector<std::string>{"maint"});
}

TEST(ReservationBook, OverlapOnlyWhereWindowsAndNodesBothMeet) {
    ReservationBook book;
    book.put(reservation("a", 100, 200, {"n1"}));
    EXPECT_EQ(book.overlap_on(reservation("b", 150, 250, {}), "n1"),
              "node n1 is in reservation 'a' at that time");
    EXPECT_EQ(book.overlap_on(reservation("b", 200, 300, {}), "n1"), "");  // back to back
    EXPECT_EQ(book.overlap_on(reservation("b", 150, 250, {}), "n2"), "");
    EXPECT_NE(book.find("a"), nullptr);
    EXPECT_EQ(book.find("b"), nullptr);
}

}  // namespace
}  // namespace cohort::ctld
