// LinearProgram: a sparse linear program built column by column and row by row, solved with
// GLPK's simplex (presolve on, automatic scaling). Used by OptMechanism; keeps glpk.h out of the
// headers.
//
// Contract: columns and rows are numbered from 0 in the order they are added; Set() gives one
// coefficient and must not repeat a (row, column) pair; bounds may be -kLpInfinity/kLpInfinity.
// Maximize() never aborts on a well-formed program: an infeasible or unbounded program, a solver
// failure or the time limit comes back as a status other than kOptimal, with no values. At
// kOptimal, `values` holds one value per column and `objective` the objective. Deterministic.
#pragma once

#include <limits>
#include <vector>

namespace troupe::scheduling {

inline constexpr double kLpInfinity = std::numeric_limits<double>::infinity();

enum class LpStatus { kOptimal, kInfeasible, kUnbounded, kTimeLimit, kFailed };

struct LpSolution {
  LpStatus status = LpStatus::kFailed;
  double objective = 0;
  std::vector<double> values;  // one per column, at kOptimal
};

class LinearProgram {
 public:
  int AddColumn(double objective, double lower, double upper);
  int AddRow(double lower, double upper);
  void Set(int row, int column, double value);

  int columns() const { return static_cast<int>(objective_.size()); }
  int rows() const { return static_cast<int>(row_lower_.size()); }

  // time_limit_s <= 0: no limit.
  LpSolution Maximize(double time_limit_s) const;

 private:
  std::vector<double> objective_, column_lower_, column_upper_;
  std::vector<double> row_lower_, row_upper_;
  std::vector<int> entry_row_, entry_column_;
  std::vector<double> entry_value_;
};

}  // namespace troupe::scheduling
