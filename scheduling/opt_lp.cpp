#include "scheduling/opt_lp.hpp"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace troupe::scheduling {
namespace {

// GLPK's bound type for [lower, upper], either side possibly infinite.
int BoundType(double lower, double upper) {
  const bool has_lower = std::isfinite(lower);
  const bool has_upper = std::isfinite(upper);
  if (has_lower && has_upper) return lower == upper ? GLP_FX : GLP_DB;
  if (has_lower) return GLP_LO;
  if (has_upper) return GLP_UP;
  return GLP_FR;
}

double Finite(double x) { return std::isfinite(x) ? x : 0.0; }

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

LpStatus StatusAfter(int simplex_code, glp_prob* problem) {
  switch (simplex_code) {
    case 0:
      break;
    case GLP_ETMLIM:
      return LpStatus::kTimeLimit;
    case GLP_ENOPFS:
      return LpStatus::kInfeasible;
    case GLP_ENODFS:
      return LpStatus::kUnbounded;
    default:
      return LpStatus::kFailed;
  }
  switch (glp_get_status(problem)) {
    case GLP_OPT:
      return LpStatus::kOptimal;
    case GLP_NOFEAS:
    case GLP_INFEAS:
      return LpStatus::kInfeasible;
    case GLP_UNBND:
      return LpStatus::kUnbounded;
    default:
      return LpStatus::kFailed;
  }
}

}  // namespace

int LinearProgram::AddColumn(double objective, double lower, double upper) {
  objective_.push_back(objective);
  column_lower_.push_back(lower);
  column_upper_.push_back(upper);
  return columns() - 1;
}

int LinearProgram::AddRow(double lower, double upper) {
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  return rows() - 1;
}

void LinearProgram::Set(int row, int column, double value) {
  entry_row_.push_back(row + 1);  // GLPK counts from 1
  entry_column_.push_back(column + 1);
  entry_value_.push_back(value);
}

LpSolution LinearProgram::Maximize(double time_limit_s) const {
  LpSolution solution;
  if (columns() == 0 || rows() == 0) return solution;  // nothing GLPK could be asked
  std::unique_ptr<glp_prob, ProblemDeleter> problem(glp_create_prob());
  glp_prob* p = problem.get();
  glp_set_obj_dir(p, GLP_MAX);
  glp_add_rows(p, rows());
  glp_add_cols(p, columns());
  for (int r = 0; r < rows(); ++r) {
    glp_set_row_bnds(p, r + 1, BoundType(row_lower_[r], row_upper_[r]), Finite(row_lower_[r]),
                     Finite(row_upper_[r]));
  }
  for (int c = 0; c < columns(); ++c) {
    glp_set_col_bnds(p, c + 1, BoundType(column_lower_[c], column_upper_[c]),
                     Finite(column_lower_[c]), Finite(column_upper_[c]));
    glp_set_obj_coef(p, c + 1, objective_[c]);
  }
  // glp_load_matrix reads its arrays from index 1.
  std::vector<int> ia(1, 0), ja(1, 0);
  std::vector<double> ar(1, 0.0);
  ia.insert(ia.end(), entry_row_.begin(), entry_row_.end());
  ja.insert(ja.end(), entry_column_.begin(), entry_column_.end());
  ar.insert(ar.end(), entry_value_.begin(), entry_value_.end());
  glp_load_matrix(p, static_cast<int>(entry_value_.size()), ia.data(), ja.data(), ar.data());
  const int terminal = glp_term_out(GLP_OFF);  // glp_scale_prob reports to the terminal
  glp_scale_prob(p, GLP_SF_AUTO);
  glp_term_out(terminal);

  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  if (time_limit_s > 0)
    parm.tm_lim = static_cast<int>(std::min(std::ceil(time_limit_s * 1000), 2e9));
  solution.status = StatusAfter(glp_simplex(p, &parm), p);
  if (solution.status != LpStatus::kOptimal) return solution;
  solution.objective = glp_get_obj_val(p);
  solution.values.resize(columns());
  for (int c = 0; c < columns(); ++c) solution.values[c] = glp_get_col_prim(p, c + 1);
  return solution;
}

}  // namespace troupe::scheduling
