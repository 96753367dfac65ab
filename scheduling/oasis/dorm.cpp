#include "scheduling/oasis/dorm.hpp"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "scheduling/oasis/glpk_problem.hpp"

namespace troupe::scheduling::oasis {
namespace {

constexpr double kPsPenalty = 1e-6;

// Sparse matrix entries, index 0 unused as GLPK wants.
struct Entries {
  std::vector<int> row{0}, col{0};
  std::vector<double> value{0};
  void Set(int r, int c, double v) {
    row.push_back(r);
    col.push_back(c);
    value.push_back(v);
  }
};

double Utilisation(const Job& job, const PoolTotals& totals) {
  double u = 0;
  for (int r = 0; r < kResources; ++r) {
    if (totals.worker[r] > 0) u += job.worker[r] / totals.worker[r];
  }
  return u;
}

// Columns y_i = 2i + 1, z_i = 2i + 2 with the fairness bounds; fills the share bounds.
void AddColumns(glp_prob* p, const PoolTotals& totals, const std::vector<const Job*>& jobs,
                const std::vector<int>& caps, double phi, DormTargets* out) {
  const double n = static_cast<double>(jobs.size());
  glp_add_cols(p, static_cast<int>(2 * jobs.size()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const double u = WorkerShare(*jobs[i], totals);
    const int cap = std::max(0, caps[i]);
    const double high = u > 0 ? std::min<double>(cap, std::floor(phi / (n * u) + 1e-9)) : cap;
    const double fair_low = u > 0 ? std::floor(1 / (phi * n * u) + 1e-9) : cap;
    const double low = std::min<double>(cap, fair_low);
    const int y = static_cast<int>(2 * i + 1);
    glp_set_col_kind(p, y, GLP_IV);
    glp_set_col_bnds(p, y, low < high ? GLP_DB : GLP_FX, low, std::max(low, high));
    glp_set_obj_coef(p, y, Utilisation(*jobs[i], totals));
    glp_set_col_kind(p, y + 1, GLP_IV);
    glp_set_col_bnds(p, y + 1, cap > 0 ? GLP_DB : GLP_FX, 0, cap);
    glp_set_obj_coef(p, y + 1, -kPsPenalty);
    out->low_share.push_back(low * u);
    out->high_share.push_back(std::max(low, high) * u);
  }
}

void AddRows(glp_prob* p, const PoolTotals& totals, const std::vector<const Job*>& jobs,
             Entries* e) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    const int y = static_cast<int>(2 * i + 1);
    const int bandwidth = glp_add_rows(p, 1);  // B z - b y >= 0
    glp_set_row_bnds(p, bandwidth, GLP_LO, 0, 0);
    e->Set(bandwidth, y + 1, jobs[i]->ps_bandwidth());
    e->Set(bandwidth, y, -jobs[i]->worker_bandwidth());
    const int count = glp_add_rows(p, 1);  // z - y <= 0
    glp_set_row_bnds(p, count, GLP_UP, 0, 0);
    e->Set(count, y + 1, 1);
    e->Set(count, y, -1);
  }
  for (int pool = 0; pool < 2; ++pool) {
    const ResourceVector& total = pool == 0 ? totals.worker : totals.ps;
    for (int r = 0; r < kResources; ++r) {
      const int row = glp_add_rows(p, 1);
      glp_set_row_bnds(p, row, GLP_UP, 0, total[r]);
      for (size_t i = 0; i < jobs.size(); ++i) {
        const double d = pool == 0 ? jobs[i]->worker[r] : jobs[i]->ps[r];
        if (d > 0) e->Set(row, static_cast<int>(2 * i + 1 + pool), d);
      }
    }
  }
}

// Stops the branch and bound once `limit` nodes exist; records how many were created.
struct NodeBound {
  int limit = 0;
  int created = 0;
};

void StopAtNodeBound(glp_tree* tree, void* info) {
  auto* bound = static_cast<NodeBound*>(info);
  int active = 0, current = 0, total = 0;
  glp_ios_tree_size(tree, &active, &current, &total);
  bound->created = total;
  if (total >= bound->limit) glp_ios_terminate(tree);
}

}  // namespace

DormTargets SolveDormSlot(const PoolTotals& totals, const std::vector<const Job*>& jobs,
                          const std::vector<int>& caps, const DormOptions& options) {
  DormTargets out;
  out.workers.assign(jobs.size(), 0);
  out.ps.assign(jobs.size(), 0);
  if (jobs.empty()) {
    out.solved = true;
    out.status = "optimal";
    return out;
  }
  GlpkProblem problem(glp_create_prob());
  glp_prob* p = problem.get();
  glp_set_obj_dir(p, GLP_MAX);
  AddColumns(p, totals, jobs, caps, options.fairness, &out);
  Entries e;
  AddRows(p, totals, jobs, &e);
  glp_load_matrix(p, static_cast<int>(e.row.size()) - 1, e.row.data(), e.col.data(),
                  e.value.data());
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  NodeBound bound{std::max(1, options.node_limit), 0};
  parm.cb_func = StopAtNodeBound;
  parm.cb_info = &bound;
  const int terminal = glp_term_out(GLP_OFF);
  const int code = glp_intopt(p, &parm);
  glp_term_out(terminal);
  out.nodes = bound.created;
  const int status = glp_mip_status(p);
  out.solved = (code == 0 || code == GLP_ESTOP) && (status == GLP_OPT || status == GLP_FEAS);
  out.status = status == GLP_OPT ? "optimal"
               : out.solved      ? "feasible"
                                 : "failed: " + std::to_string(code) + "/" + std::to_string(status);
  if (!out.solved) return out;
  for (size_t i = 0; i < jobs.size(); ++i) {
    out.workers[i] = static_cast<int>(std::lround(glp_mip_col_val(p, static_cast<int>(2 * i + 1))));
    out.ps[i] = static_cast<int>(std::lround(glp_mip_col_val(p, static_cast<int>(2 * i + 2))));
    out.utilisation += out.workers[i] * Utilisation(*jobs[i], totals);
  }
  return out;
}

Admission DormPolicy::Arrive(int index, const std::vector<JobProgress>& jobs) {
  Admission a;
  if (std::string e = ValidateJob(jobs[index].job); !e.empty()) {
    a.reason = "invalid job: " + e;
    return a;
  }
  a.admitted = true;
  return a;
}

SlotAllocation DormPolicy::Slot(int t, const std::vector<JobProgress>& jobs) {
  std::vector<int> active;
  std::vector<const Job*> given;
  std::vector<int> caps;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].active() || jobs[i].WorkerCap() <= 0) continue;
    active.push_back(static_cast<int>(i));
    given.push_back(&jobs[i].job);
    caps.push_back(jobs[i].WorkerCap());
  }
  const DormTargets targets = SolveDormSlot(totals_, given, caps, options_);
  max_nodes_ = std::max(max_nodes_, targets.nodes);
  bounded_ += targets.nodes >= options_.node_limit;
  if (!targets.solved) {
    ++fallbacks_;
    return DrfFill(cluster_, totals_, jobs, t);
  }
  SlotPacker packer(cluster_);
  SlotAllocation out;
  for (size_t p = 0; p < active.size(); ++p) {
    JobSlot js{active[p], SlotPlan{t, {}, {}}};
    if (packer.GrowTo(*given[p], targets.workers[p], &js.plan) > 0) out.push_back(std::move(js));
  }
  return out;
}

}  // namespace troupe::scheduling::oasis
