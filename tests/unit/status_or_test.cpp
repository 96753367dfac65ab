// base/status.hpp and base/status_or.hpp: a StatusOr holds its value or the error that explains
// why there is none; built from an OK Status it is an Internal error, never an OK without a value;
// exit codes are 2 for bad input and 1 for any other error, kCorrupt included.
// base/status_macros.hpp: RETURN_IF_ERROR and ASSIGN_OR_RETURN stop at the first error and hand it
// back unchanged; on success the work goes on with the value.
#include "base/status_or.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status_macros.hpp"

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

// Records each step it runs, so a test can see where a chain of checks stopped.
Status Step(std::vector<int>* ran, int id, Status result) {
  ran->push_back(id);
  return result;
}

Status ThreeSteps(std::vector<int>* ran, Status second) {
  RETURN_IF_ERROR(Step(ran, 1, Status::Ok()));
  RETURN_IF_ERROR(Step(ran, 2, std::move(second)));
  RETURN_IF_ERROR(Step(ran, 3, Status::Ok()));
  return Status::Ok();
}

TEST(StatusMacros, ReturnIfErrorStopsAtTheFirstErrorAndPassesItOnUnchanged) {
  std::vector<int> ran;
  EXPECT_TRUE(ThreeSteps(&ran, Status::Ok()).ok());
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));

  ran.clear();
  const Status failed = ThreeSteps(&ran, Status::Corrupt("shard 3: bad checksum"));
  EXPECT_EQ(failed.code(), Status::Code::kCorrupt);
  EXPECT_EQ(failed.message(), "shard 3: bad checksum");
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
}

StatusOr<int> Parse(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidInput("'" + text + "' is not a number");
  }
  return std::stoi(text);
}

// Declares with `auto`, assigns an existing variable, and uses two macros in one scope (their
// hidden temporaries must not collide); returns a StatusOr, so the error converts on return.
StatusOr<int> Sum(const std::string& a, const std::string& b, int* calls_after_first) {
  ASSIGN_OR_RETURN(auto first, Parse(a));
  ++*calls_after_first;
  int second = -1;
  ASSIGN_OR_RETURN(second, Parse(b));
  return first + second;
}

TEST(StatusMacros, AssignOrReturnBindsTheValueOrReturnsTheError) {
  int reached = 0;
  StatusOr<int> sum = Sum("40", "2", &reached);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 42);
  EXPECT_EQ(reached, 1);

  reached = 0;
  sum = Sum("x", "2", &reached);
  EXPECT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), Status::Code::kInvalidInput);
  EXPECT_EQ(sum.status().message(), "'x' is not a number");
  EXPECT_EQ(reached, 0);

  sum = Sum("1", "", &reached);
  EXPECT_EQ(sum.status().message(), "'' is not a number");
  EXPECT_EQ(reached, 1);
}

StatusOr<std::map<std::string, int>> Table(bool fail) {
  if (fail) return Status::IoError("table.csv: cannot open");
  return std::map<std::string, int>{{"a", 1}};
}

// A move-only value is moved out; a right side with a comma in it (a template argument list)
// still reads as one expression; the enclosing function returns a plain Status.
Status TakeOwnership(bool fail, std::unique_ptr<Base>* out, int* a) {
  ASSIGN_OR_RETURN(*out, Make(fail));
  ASSIGN_OR_RETURN(const auto table, StatusOr<std::map<std::string, int>>(Table(false)));
  *a = table.at("a");
  return Status::Ok();
}

TEST(StatusMacros, AssignOrReturnMovesOutMoveOnlyValuesAndReturnsIntoAStatus) {
  std::unique_ptr<Base> owned;
  int a = 0;
  ASSERT_TRUE(TakeOwnership(false, &owned, &a).ok());
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(owned->x, 7);
  EXPECT_EQ(a, 1);

  owned.reset();
  a = 0;
  const Status failed = TakeOwnership(true, &owned, &a);
  EXPECT_EQ(failed.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(failed.message(), "field: bad");
  EXPECT_EQ(owned, nullptr);
  EXPECT_EQ(a, 0);
}

}  // namespace
}  // namespace troupe
