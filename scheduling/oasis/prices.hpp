// OASiS's dual resource prices. Every worker server h, PS machine k, resource r and slot t has a
// price that starts at L and rises exponentially with the amount already allocated there:
//   p_h^r(t) = P(g_h^r(t)) = L_1^r (U_1^r / L_1^r)^(g_h^r(t) / c_h^r)
//   q_k^r(t) = Q(v_k^r(t)) = L_2^r (U_2^r / L_2^r)^(v_k^r(t) / c_k^r)
// so the price is L with nothing allocated and U^r at capacity (a zero capacity is priced U^r).
// A worker of job i on h in t costs sum_r p_h^r(t) w_i^r, a parameter server sum_r q_k^r(t) s_i^r.
//
// L and U are per resource and configurable (a misestimation experiment scales them). The
// default estimate from past jobs (EstimatePrices) follows the seed's rationale, "L is the lowest
// and U the largest unit job utility" (the seed's text lost its formulas; these are the paper's
// as reconstructed, see docs/oasis.md), with W_i = WorkerSlots():
//   U_1^r = max_i f_i(ceil(W_i / N_i) - 1) / w_i^r   (a job's best utility, N_i workers from
//   U_2^r = max_i f_i(ceil(W_i / N_i) - 1) / s_i^r    a_i on, per unit of one worker's or PS's r)
//   L_1   = min_i f_i(T - 1 - a_i) / (4 eta_1 sum_r W_i w_i^r),
//           eta_1 = max_i T sum_h sum_r c_h^r / sum_r W_i w_i^r
//   L_2   = min_i f_i(T - 1 - a_i) / (4 eta_2 sum_r W_i s_i^r),
//           eta_2 = max_i T sum_k sum_r c_k^r / sum_r W_i s_i^r   (eta raised to 1 if below)
// (eta makes the whole cluster priced at L worth at most a quarter of any job's least utility).
// f_i(T - 1 - a_i) is floored at min_utility_ratio times the job's best utility: a sigmoid's
// tail underflows a double (f(299) at g2 = 5 is ~1e-650), which would leave L undefined. Jobs
// with zero demand of r are skipped for U^r; U is raised to L where it would fall below; with
// no usable past job, L = 1e-3 and U = 1.
//
// Contract: a PriceBook starts with nothing allocated; Admit() adds a plan and reprices exactly
// the cells it touches; prices never depend on admission order beyond the allocated amounts.
#pragma once

#include <vector>

#include "scheduling/oasis/model.hpp"

namespace troupe::scheduling::oasis {

struct PriceParams {
  ResourceVector worker_low{};   // L_1 (one per resource)
  ResourceVector worker_high{};  // U_1^r
  ResourceVector ps_low{};       // L_2
  ResourceVector ps_high{};      // U_2^r

  // L and U the same for every resource and both machine kinds.
  static PriceParams Uniform(double low, double high);
  // L times low_factor and U times high_factor (misestimation), U kept >= L.
  PriceParams Scaled(double low_factor, double high_factor) const;
};

// low (high / low)^(allocated / capacity); high for capacity <= 0; low if high <= low.
double Price(double low, double high, double allocated, double capacity);

PriceParams EstimatePrices(const Cluster& cluster, const std::vector<Job>& past,
                           double min_utility_ratio = 1e-12);

class PriceBook {
 public:
  PriceBook(const Cluster& cluster, const PriceParams& params);

  const PriceParams& params() const { return params_; }
  const Usage& usage() const { return usage_; }

  double worker_price(int slot, int machine, Resource r) const {
    return worker_price_[Index(slot, machine, workers_) + static_cast<int>(r)];
  }
  double ps_price(int slot, int machine, Resource r) const {
    return ps_price_[Index(slot, machine, ps_machines_) + static_cast<int>(r)];
  }
  // sum_r price * demand of one worker (PS) on `machine` in `slot`.
  double WorkerUnitCost(int slot, int machine, const ResourceVector& demand) const;
  double PsUnitCost(int slot, int machine, const ResourceVector& demand) const;
  // The plan's cost at the current prices.
  double Cost(const Job& job, const Plan& plan) const;

  // Allocates the plan's resources and reprices the touched cells.
  void Admit(const Job& job, const Plan& plan);

 private:
  static size_t Index(int slot, int machine, int machines) {
    return (static_cast<size_t>(slot) * machines + machine) * kResources;
  }
  void Reprice(int slot, int machine, bool worker);

  Cluster cluster_;
  PriceParams params_;
  Usage usage_;
  int workers_ = 0;
  int ps_machines_ = 0;
  std::vector<double> worker_price_;
  std::vector<double> ps_price_;
};

}  // namespace troupe::scheduling::oasis
