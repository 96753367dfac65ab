// OASiS's dual resource prices. Every worker server h, PS machine k, resource r and slot t has a
// price that starts at L and rises exponentially with the amount already allocated there:
//   p_h^r(t) = P(g_h^r(t)) = L_1^r (U_1^r / L_1^r)^(g_h^r(t) / c_h^r)
//   q_k^r(t) = Q(v_k^r(t)) = L_2^r (U_2^r / L_2^r)^(v_k^r(t) / c_k^r)
// so the price is L with nothing allocated and U^r at capacity (a zero capacity is priced U^r).
// A worker of job i on h in t costs sum_r p_h^r(t) w_i^r, a parameter server sum_r q_k^r(t) s_i^r.
//
// L and U are per resource and configurable (a misestimation experiment scales them). The
// default estimate from past jobs (EstimatePrices) implements the paper's definitions as they can
// be read from its stated meaning ("L_1, L_2 represent the lowest unit job utility", "U_1^r, U_2^r
// are the largest unit job utilities", estimated from past experience; docs/oasis.md says which
// parts are reconstructed), with W_i = WorkerSlots():
//   U_1^r = max_i f_i(ceil(W_i / N_i) - 1) / w_i^r   (a job's best utility, N_i workers from
//   U_2^r = max_i f_i(ceil(W_i / N_i) - 1) / s_i^r    a_i on, per unit of one worker's or PS's r)
//   L_1   = min_i f_i(T - 1 - a_i) / (4 eta_1 sum_r W_i w_i^r),
//           eta_1 = max_i T sum_h sum_r c_h^r / sum_r W_i w_i^r
//   L_2   = min_i f_i(T - 1 - a_i) / (4 eta_2 sum_r W_i s_i^r),
//           eta_2 = max_i T sum_k sum_r c_k^r / sum_r W_i s_i^r   (eta raised to 1 if below)
// (eta makes the whole cluster priced at L worth at most a quarter of any job's least utility).
// Nothing is floored: L is kept as its natural logarithm, because f_i(T - 1 - a_i) of a sigmoid
// is far below the smallest double (about e^-1400 at T = 300), and prices are computed as
// exp(ln L + (g / c)(ln U - ln L)), so a price is exact wherever it is representable and 0 where
// it is below 1e-308. Jobs whose least utility is exactly 0 (a linear or step utility that ends
// before T) would make L = 0 and the price function undefined; they are skipped for L. Jobs
// with zero demand of r are skipped for U^r; U is raised to L where it would fall below; with
// no usable past job, L = 1e-3 and U = 1.
//
// Contract: a PriceBook starts with nothing allocated; Admit() adds a plan and reprices exactly
// the cells it touches; prices never depend on admission order beyond the allocated amounts.
#pragma once

#include <cmath>
#include <vector>

#include "scheduling/oasis/model.hpp"

namespace troupe::scheduling::oasis {

struct PriceParams {
  ResourceVector worker_log_low{};  // ln L_1 (one per resource)
  ResourceVector worker_high{};     // U_1^r
  ResourceVector ps_log_low{};      // ln L_2
  ResourceVector ps_high{};         // U_2^r

  // L itself; 0 where it is below the smallest double.
  double worker_low(int r) const { return std::exp(worker_log_low[r]); }
  double ps_low(int r) const { return std::exp(ps_log_low[r]); }
  // max_r max(1, ln(U_1^r / L_1), ln(U_2^r / L_2)): the competitive ratio is 2 alpha.
  double Alpha() const;

  // L and U the same for every resource and both machine kinds (low > 0).
  static PriceParams Uniform(double low, double high);
  // L times low_factor and U times high_factor (misestimation), U kept >= L.
  PriceParams Scaled(double low_factor, double high_factor) const;
};

// L (U / L)^(allocated / capacity) from ln L: U for capacity <= 0; L if U <= L.
double Price(double log_low, double high, double allocated, double capacity);

PriceParams EstimatePrices(const Cluster& cluster, const std::vector<Job>& past);

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
