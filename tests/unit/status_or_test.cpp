// base/status.hpp and base/status_or.hpp: a StatusOr holds its value or the error that explains
// why there is none; built from an OK Status it is an Internal error, never an OK without a value;
// exit codes are 2 for bad input and 1 for any other error, kCorrupt included.
#include "base/status_or.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace troupe {
namespace {

struct Base {
  virtual ~Base() = default;
  int x = 7;
};
struct Derived : Base {};

StatusOr<std::unique_ptr<Base>> Make(bool fail) {
  if (fail) return Status::InvalidInput("field: bad");
  return std::make_unique<Derived>();
}

TEST(StatusOr, HoldsTheValueOrTheError) {
  StatusOr<std::unique_ptr<Base>> made = Make(false);
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(made.status().ok());
  EXPECT_EQ((*made)->x, 7);
  std::unique_ptr<Base> taken = std::move(made).value();
  EXPECT_EQ(taken->x, 7);

  const StatusOr<std::unique_ptr<Base>> failed = Make(true);
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Status::Code::kInvalidInput);
  EXPECT_EQ(failed.status().message(), "field: bad");

  StatusOr<std::string> text = std::string("abc");
  EXPECT_EQ(text->size(), 3u);
}

TEST(StatusOr, AnOkStatusIsNeverAValue) {
  const StatusOr<int> odd = Status::Ok();
  EXPECT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().code(), Status::Code::kInternal);
}

TEST(Status, ExitCodes) {
  EXPECT_EQ(Status::Ok().exit_code(), 0);
  EXPECT_EQ(Status::InvalidInput("x").exit_code(), 2);
  EXPECT_EQ(Status::IoError("x").exit_code(), 1);
  EXPECT_EQ(Status::Corrupt("x").exit_code(), 1);
  EXPECT_EQ(Status::Corrupt("x").code(), Status::Code::kCorrupt);
  EXPECT_EQ(Status::Internal("x").exit_code(), 1);
}

}  // namespace
}  // namespace troupe
