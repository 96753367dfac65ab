// LinkCalendar (actors/oasis/oasis_nic.hpp), one direction of a PS machine's NIC in an OASiS run:
// a transfer starts when it is ready if its rate fits under the capacity for its whole length,
// otherwise at the earliest moment it does; what has ended is forgotten.
#include "actors/oasis/oasis_nic.hpp"

#include <gtest/gtest.h>

namespace troupe::testing {
namespace {

TEST(OasisNicCalendar, TransfersThatFitStartWhenReadyAndOthersWaitForRoom) {
  LinkCalendar link(10);
  EXPECT_DOUBLE_EQ(link.Book(0, 5, 6), 0);  // A: [0, 5) at 6
  EXPECT_DOUBLE_EQ(link.Book(0, 2, 4), 0);  // B: [0, 2) at 4, the NIC full
  EXPECT_DOUBLE_EQ(link.Book(0, 1, 4), 2);  // C waits for B: [2, 3)
  // D (5 for 10 s) fits neither beside A and B, nor A and C, nor A alone: after A, at 5.
  EXPECT_DOUBLE_EQ(link.Book(1, 10, 5), 5);
  // E (4 for 1 s, ready at 3) fits beside A in [3, 4), before D although it came later.
  EXPECT_DOUBLE_EQ(link.Book(3, 1, 4), 3);
}

TEST(OasisNicCalendar, RatesAddUpToTheCapacityExactlyAndEndedBookingsAreForgotten) {
  LinkCalendar link(100);
  for (int i = 0; i < 20; ++i) EXPECT_DOUBLE_EQ(link.Book(0, 3, 5), 0) << i;  // 20 x 5 = 100
  EXPECT_DOUBLE_EQ(link.Book(0, 3, 5), 3);
  EXPECT_DOUBLE_EQ(link.Book(50, 1, 100), 50);
  EXPECT_EQ(link.bookings(), 1u);
}

TEST(OasisNicCalendar, BookAllStartsWhereEveryLinkHasRoomForTheWholeTransfer) {
  LinkCalendar a(10), b(10);
  EXPECT_DOUBLE_EQ(LinkCalendar::BookAll({&a}, 1, 0, 0, 5, 6), 0);  // a: [0, 5) at 6
  EXPECT_DOUBLE_EQ(LinkCalendar::BookAll({&b}, 2, 0, 0, 7, 8), 0);  // b: [0, 7) at 8
  // 5 for 1 s fits a from 5 and b from 7: on both, from 7.
  EXPECT_DOUBLE_EQ(LinkCalendar::BookAll({&a, &b}, 3, 0, 0, 1, 5), 7);
  // 4 for 1 s fits a at once (6 + 4 = 10) but b only from 7, beside transfer 3 (5 + 4 <= 10).
  EXPECT_DOUBLE_EQ(LinkCalendar::BookAll({&a, &b}, 4, 0, 0, 1, 4), 7);
  // Booked again (a later pass), transfer 4 drops its own booking first: the same start.
  EXPECT_DOUBLE_EQ(LinkCalendar::BookAll({&a, &b}, 4, 0, 7, 1, 4), 7);
  EXPECT_EQ(a.bookings(), 3u);
  // What ended by `now` is forgotten.
  EXPECT_DOUBLE_EQ(LinkCalendar::BookAll({&a, &b}, 5, 10, 10, 1, 10), 10);
  EXPECT_EQ(a.bookings(), 1u);
  EXPECT_EQ(b.bookings(), 1u);
}

}  // namespace
}  // namespace troupe::testing
