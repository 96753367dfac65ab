#include "scheduling/oasis/offline_optimum.hpp"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "scheduling/oasis/glpk_problem.hpp"
#include "scheduling/oasis/oasis.hpp"

namespace troupe::scheduling::oasis {
namespace {

// Columns of one job: u[t - a], y[t - a][h], z[t - a][k] (GLPK column numbers, from 1).
struct JobColumns {
  bool present = false;
  std::vector<int> u;
  std::vector<std::vector<int>> y, z;
};

// The MILP, built row by row with its coefficients gathered for one glp_load_matrix.
class Builder {
 public:
  Builder(const Cluster& cluster, const std::vector<Job>& jobs)
      : cluster_(cluster), jobs_(jobs), problem_(glp_create_prob()) {
    glp_set_obj_dir(problem_.get(), GLP_MAX);
    entry_row_.push_back(0);  // GLPK ignores index 0
    entry_col_.push_back(0);
    entry_value_.push_back(0);
  }

  glp_prob* Build(std::vector<JobColumns>* columns);

 private:
  int Column(int kind, double upper, double objective);
  int Row(int type, double lower, double upper);
  void Set(int row, int column, double value);
  void AddColumns(const Job& job, JobColumns* c);
  void AddJobRows(const Job& job, const JobColumns& c);
  void AddCapacityRows(const std::vector<JobColumns>& columns, bool worker);

  const Cluster& cluster_;
  const std::vector<Job>& jobs_;
  GlpkProblem problem_;
  std::vector<int> entry_row_, entry_col_;
  std::vector<double> entry_value_;
};

int Builder::Column(int kind, double upper, double objective) {
  const int j = glp_add_cols(problem_.get(), 1);
  glp_set_col_kind(problem_.get(), j, kind);
  glp_set_col_bnds(problem_.get(), j, upper > 0 ? GLP_DB : GLP_FX, 0, std::max(0.0, upper));
  glp_set_obj_coef(problem_.get(), j, objective);
  return j;
}

int Builder::Row(int type, double lower, double upper) {
  const int i = glp_add_rows(problem_.get(), 1);
  glp_set_row_bnds(problem_.get(), i, type, lower, upper);
  return i;
}

void Builder::Set(int row, int column, double value) {
  entry_row_.push_back(row);
  entry_col_.push_back(column);
  entry_value_.push_back(value);
}

void Builder::AddColumns(const Job& job, JobColumns* c) {
  const ResourceVector none{};
  for (int t = job.arrival; t < cluster_.slots; ++t) {
    c->u.push_back(Column(GLP_BV, 1, job.utility.Value(t - job.arrival)));
    std::vector<int> y, z;
    for (const Machine& m : cluster_.workers) {
      y.push_back(Column(GLP_IV, Room(m.capacity, none.data(), job.worker, job.chunks), 0));
    }
    for (const Machine& m : cluster_.ps) {
      z.push_back(Column(GLP_IV, Room(m.capacity, none.data(), job.ps, job.chunks), 0));
    }
    c->y.push_back(std::move(y));
    c->z.push_back(std::move(z));
  }
}

void Builder::AddJobRows(const Job& job, const JobColumns& c) {
  const int n = static_cast<int>(c.u.size());
  const int once = Row(GLP_UP, 0, 1);
  const int work = Row(GLP_LO, 0, 0);
  for (int i = 0; i < n; ++i) {
    Set(once, c.u[i], 1);
    Set(work, c.u[i], -job.WorkerSlots(cluster_.slot_s));
    const int active = Row(GLP_UP, 0, 0);
    const int bandwidth = Row(GLP_LO, 0, 0);
    const int count = Row(GLP_UP, 0, 0);
    for (int later = i; later < n; ++later) Set(active, c.u[later], -job.chunks);
    for (int y : c.y[i]) {
      Set(active, y, 1);
      Set(work, y, 1);
      Set(bandwidth, y, -job.worker_bandwidth());
      Set(count, y, -1);
    }
    for (int z : c.z[i]) {
      Set(bandwidth, z, job.ps_bandwidth());
      Set(count, z, 1);
    }
  }
}

void Builder::AddCapacityRows(const std::vector<JobColumns>& columns, bool worker) {
  const std::vector<Machine>& machines = worker ? cluster_.workers : cluster_.ps;
  for (int t = 0; t < cluster_.slots; ++t) {
    for (size_t m = 0; m < machines.size(); ++m) {
      for (int r = 0; r < kResources; ++r) {
        int row = 0;
        for (size_t i = 0; i < jobs_.size(); ++i) {
          const double demand = worker ? jobs_[i].worker[r] : jobs_[i].ps[r];
          if (!columns[i].present || t < jobs_[i].arrival || demand <= 0) continue;
          if (row == 0) row = Row(GLP_UP, 0, machines[m].capacity[r]);
          const auto& cols = worker ? columns[i].y : columns[i].z;
          Set(row, cols[t - jobs_[i].arrival][m], demand);
        }
      }
    }
  }
}

glp_prob* Builder::Build(std::vector<JobColumns>* columns) {
  columns->assign(jobs_.size(), {});
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const Job& job = jobs_[i];
    if (!ValidateJob(job).empty() || job.arrival < 0 || job.arrival >= cluster_.slots) continue;
    (*columns)[i].present = true;
    AddColumns(job, &(*columns)[i]);
    AddJobRows(job, (*columns)[i]);
  }
  AddCapacityRows(*columns, true);
  AddCapacityRows(*columns, false);
  if (glp_get_num_cols(problem_.get()) == 0 || glp_get_num_rows(problem_.get()) == 0) {
    return nullptr;
  }
  glp_load_matrix(problem_.get(), static_cast<int>(entry_row_.size()) - 1, entry_row_.data(),
                  entry_col_.data(), entry_value_.data());
  return problem_.release();
}

std::vector<Placement> Placements(glp_prob* p, const std::vector<int>& cols) {
  std::vector<Placement> placements;
  for (size_t m = 0; m < cols.size(); ++m) {
    const int count = static_cast<int>(std::lround(glp_mip_col_val(p, cols[m])));
    if (count > 0) placements.push_back({static_cast<int>(m), count});
  }
  return placements;
}

// The job's plan from the MILP's values; empty if it is not admitted.
Plan Extract(glp_prob* p, const Job& job, const JobColumns& c) {
  Plan plan;
  for (size_t i = 0; i < c.u.size(); ++i) {
    SlotPlan s;
    s.slot = job.arrival + static_cast<int>(i);
    s.workers = Placements(p, c.y[i]);
    s.ps = Placements(p, c.z[i]);
    if (!s.workers.empty()) plan.slots.push_back(std::move(s));
  }
  if (plan.slots.empty()) return plan;
  plan.end_slot = plan.slots.back().slot;
  plan.utility = job.utility.Value(plan.end_slot - job.arrival);
  plan.payoff = plan.utility;
  return plan;
}

// OASiS's own schedule of the jobs (arrival order, estimated prices) as column values x[1..n]:
// a first incumbent for the branch and bound, so that it never ends with less than OASiS.
std::vector<double> Incumbent(const Cluster& cluster, const std::vector<Job>& jobs,
                              const std::vector<JobColumns>& columns, int n_columns) {
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return jobs[a].arrival < jobs[b].arrival; });
  OasisScheduler oasis(cluster, EstimatePrices(cluster, jobs));
  std::vector<double> x(static_cast<size_t>(n_columns) + 1, 0.0);
  for (size_t i : order) {
    if (!columns[i].present) continue;
    const Decision d = oasis.OnArrival(jobs[i]);
    if (!d.admitted) continue;
    const int a = jobs[i].arrival;
    x[columns[i].u[d.plan.end_slot - a]] = 1;
    for (const SlotPlan& s : d.plan.slots) {
      for (const Placement& p : s.workers) x[columns[i].y[s.slot - a][p.machine]] = p.count;
      for (const Placement& p : s.ps) x[columns[i].z[s.slot - a][p.machine]] = p.count;
    }
  }
  return x;
}

struct Search {
  const std::vector<double>* incumbent = nullptr;
  bool offered = false;
  double bound = 0;    // the least upper bound on the optimum seen so far
  int node_limit = 0;  // > 0: terminate once this many nodes exist
};

// Offers the incumbent at the first chance and tracks the best bound of the open nodes.
void Callback(glp_tree* tree, void* info) {
  auto* search = static_cast<Search*>(info);
  if (const int node = glp_ios_best_node(tree); node != 0) {
    search->bound = std::min(search->bound, glp_ios_node_bound(tree, node));
  }
  if (glp_ios_reason(tree) == GLP_IHEUR && !search->offered) {
    search->offered = true;
    glp_ios_heur_sol(tree, search->incumbent->data());
  }
  if (search->node_limit > 0) {
    int active = 0, current = 0, total = 0;
    glp_ios_tree_size(tree, &active, &current, &total);
    if (total >= search->node_limit) glp_ios_terminate(tree);
  }
}

// Simplex on the relaxation, then branch and cut (no MIP presolve, so the callback's column
// numbers are the problem's). GLPK's return code; search->bound starts at the relaxation's value.
int Solve(glp_prob* p, double time_limit_s, Search* search) {
  const int limit_ms = time_limit_s > 0 ? static_cast<int>(time_limit_s * 1000) : 0;
  glp_smcp smcp;
  glp_init_smcp(&smcp);
  smcp.msg_lev = GLP_MSG_OFF;
  if (limit_ms > 0) smcp.tm_lim = limit_ms;
  if (const int code = glp_simplex(p, &smcp); code != 0) return code;
  search->bound = glp_get_obj_val(p);
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.cb_func = Callback;
  parm.cb_info = search;
  parm.br_tech = GLP_BR_PCH;  // pseudocosts and best bound: measured best on OASiS instances
  parm.bt_tech = GLP_BT_BLB;
  parm.gmi_cuts = GLP_ON;
  parm.mir_cuts = GLP_ON;
  parm.cov_cuts = GLP_ON;
  parm.clq_cuts = GLP_ON;
  if (limit_ms > 0) parm.tm_lim = limit_ms;
  const int terminal = glp_term_out(GLP_OFF);  // the cut generators print despite msg_lev
  const int code = glp_intopt(p, &parm);
  glp_term_out(terminal);
  return code;
}

}  // namespace

OfflineResult SolveOffline(const Cluster& cluster, const std::vector<Job>& jobs,
                           const OfflineOptions& options) {
  OfflineResult result;
  result.admitted.assign(jobs.size(), false);
  result.plans.assign(jobs.size(), {});
  std::vector<JobColumns> columns;
  GlpkProblem problem(Builder(cluster, jobs).Build(&columns));
  if (!problem) {
    result.solved = true;
    result.status = "optimal";
    return result;
  }
  const std::vector<double> incumbent =
      Incumbent(cluster, jobs, columns, glp_get_num_cols(problem.get()));
  Search search{&incumbent};
  search.node_limit = options.node_limit;
  const int code = Solve(problem.get(), options.time_limit_s, &search);
  const int status = glp_mip_status(problem.get());
  result.solved = code == 0 && status == GLP_OPT;
  result.status = result.solved        ? "optimal"
                  : code == GLP_ETMLIM ? "time limit"
                  : code == GLP_ESTOP  ? "node limit"
                                       : "failed: " + std::to_string(code);
  result.upper_bound = search.bound;
  if (status != GLP_OPT && status != GLP_FEAS) return result;
  result.objective = glp_mip_obj_val(problem.get());
  if (result.solved) result.upper_bound = result.objective;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!columns[i].present) continue;
    result.plans[i] = Extract(problem.get(), jobs[i], columns[i]);
    result.admitted[i] = !result.plans[i].slots.empty();
    result.utility += result.plans[i].utility;
  }
  return result;
}

}  // namespace troupe::scheduling::oasis
