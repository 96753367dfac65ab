// Parsing of fault targets, links and --fault flags (fault_plan.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/closest_name.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "config/config_ranges.hpp"
#include "faults/fault_plan.hpp"

namespace troupe {
namespace {

struct KindName {
  EndpointKind kind;
  std::string_view name;
};
constexpr KindName kEndpointNames[] = {
    {EndpointKind::kServer, "server"},
    {EndpointKind::kJob, "job"},
    {EndpointKind::kScheduler, "scheduler"},
    {EndpointKind::kWorkload, "workload"},
    {EndpointKind::kPs, "ps"},
    {EndpointKind::kNode, "node"},
};

bool ParseEndpointKind(std::string_view name, EndpointKind* out) {
  if (name == "*") {
    *out = EndpointKind::kAny;
    return true;
  }
  for (const KindName& k : kEndpointNames) {
    if (k.name == name) {
      *out = k.kind;
      return true;
    }
  }
  return false;
}

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out >= 0;
}

bool ParseDouble(std::string_view text, double* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*out);
}

Status Bad(std::string_view what, std::string_view text, std::string_view why) {
  return Status::InvalidInput(std::string(what) + " " + Quoted(text) + ": " + std::string(why));
}

bool ParseFaultKind(std::string_view name, config::FaultKind* out) {
  return config::FaultKind_Parse(std::string(name), out);
}

std::string UnknownFaultKind(std::string_view name) {
  std::vector<std::string> kinds;
  const auto* type = config::FaultKind_descriptor();
  for (int i = 0; i < type->value_count(); ++i) kinds.push_back(type->value(i)->name());
  return "unknown fault kind " + Quoted(name) + DidYouMean(name, kinds);
}

Status ApplyFlagOption(std::string_view flag, std::string_view option, config::Fault* out) {
  const size_t eq = option.find('=');
  const std::string_view key = option.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? "" : option.substr(eq + 1);
  double number = 0;
  if (key == "full" && eq == std::string_view::npos) {
    out->set_disk_full(true);
  } else if (key == "peer" && !value.empty()) {
    out->set_peer(std::string(value));
  } else if ((key == "x" || key == "p" || key == "delay") && ParseDouble(value, &number)) {
    if (key == "x") out->set_factor(number);
    if (key == "p") out->set_probability(number);
    if (key == "delay") out->set_delay_s(number);
  } else {
    return Bad("--fault", flag,
               fmt::format("unknown option '{}' (x=FACTOR, p=PROBABILITY, delay=SECONDS, "
                           "peer=SET, full)",
                           Excerpt(option)));
  }
  return Status::Ok();
}

}  // namespace

Status ParseActorSet(std::string_view text, ActorSet* out) {
  *out = ActorSet{};
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  if (!ParseEndpointKind(kind, &out->kind)) {
    return Bad("target", text,
               "unknown actor kind (server, job, scheduler, workload, ps, node, *)");
  }
  if (colon == std::string_view::npos) {
    if (out->kind == EndpointKind::kNode) return Bad("target", text, "node needs HOST:PORT");
    return Status::Ok();
  }
  const std::string_view range = text.substr(colon + 1);
  if (out->kind == EndpointKind::kNode) {
    if (range.find(':') == std::string_view::npos)
      return Bad("target", text, "node needs HOST:PORT");
    out->node = std::string(range);
    return Status::Ok();
  }
  if (out->kind == EndpointKind::kAny || out->kind == EndpointKind::kScheduler ||
      out->kind == EndpointKind::kWorkload) {
    return Bad("target", text, "this kind has no index");
  }
  if (range == "*") return Status::Ok();
  const size_t dash = range.find('-');
  if (!ParseInt(range.substr(0, dash), &out->first)) return Bad("target", text, "bad index");
  out->last = out->first;
  if (dash != std::string_view::npos && !ParseInt(range.substr(dash + 1), &out->last)) {
    return Bad("target", text, "bad range end");
  }
  if (out->last < out->first) return Bad("target", text, "empty range");
  return Status::Ok();
}

Status ParseLink(std::string_view text, LinkSpec* out) {
  *out = LinkSpec{};
  if (text == "*") return Status::Ok();
  const size_t arrow = text.find("->");
  if (arrow == std::string_view::npos) return Bad("link", text, "expected SENDER->RECEIVER or *");
  if (!ParseEndpointKind(text.substr(0, arrow), &out->from) ||
      !ParseEndpointKind(text.substr(arrow + 2), &out->to)) {
    return Bad("link", text, "unknown actor kind (server, job, scheduler, workload, ps, *)");
  }
  return Status::Ok();
}

Status ParseFaultFlag(std::string_view flag, config::Fault* out) {
  out->Clear();
  const size_t colon = flag.find(':');
  const size_t at = flag.find('@');
  config::FaultKind kind;
  if (colon == std::string_view::npos || at == std::string_view::npos || at < colon) {
    return Bad("--fault", flag, "expected KIND:TARGET@AT[+DURATION][,OPTION...]");
  }
  if (!ParseFaultKind(flag.substr(0, colon), &kind)) {
    return Bad("--fault", flag,
               UnknownFaultKind(flag.substr(0, colon)) +
                   "; expected KIND:TARGET@AT[+DURATION][,OPTION...]");
  }
  out->set_kind(kind);
  out->set_target(std::string(flag.substr(colon + 1, at - colon - 1)));
  std::string_view rest = flag.substr(at + 1);
  const size_t comma = rest.find(',');
  const std::string_view when = rest.substr(0, comma);
  const size_t plus = when.find('+');
  double at_s = 0;
  double duration_s = 0;
  if (!ParseDouble(when.substr(0, plus), &at_s) ||
      (plus != std::string_view::npos && !ParseDouble(when.substr(plus + 1), &duration_s))) {
    return Bad("--fault", flag, "bad time (AT or AT+DURATION, in seconds)");
  }
  out->set_at_s(at_s);
  out->set_duration_s(duration_s);
  rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
  while (!rest.empty()) {
    const size_t next = rest.find(',');
    RETURN_IF_ERROR(ApplyFlagOption(flag, rest.substr(0, next), out));
    rest = next == std::string_view::npos ? "" : rest.substr(next + 1);
  }
  // The ranges config.proto gives a Fault (a time past 1e9 s would wrap the run's clock).
  return CheckFieldRanges(*out, "--fault " + Quoted(flag));
}

bool ActorSet::Contains(EndpointKind k, int64_t index) const {
  if (kind == EndpointKind::kAny) return true;
  if (kind != k) return false;
  return index >= first && (last < 0 || index <= last);
}

std::vector<int64_t> ActorSet::IndicesAmong(int64_t count) const {
  std::vector<int64_t> out;
  const int64_t end = last >= 0 ? std::min(last, count - 1) : count - 1;
  for (int64_t i = first; i <= end; ++i) out.push_back(i);
  return out;
}

std::string ActorSet::ToString() const {
  const char* name = EndpointKindName(kind);
  if (kind == EndpointKind::kNode) return fmt::format("{}:{}", name, node);
  if (kind != EndpointKind::kServer && kind != EndpointKind::kJob && kind != EndpointKind::kPs) {
    return name;
  }
  if (last < 0 && first == 0) return fmt::format("{}:*", name);
  if (last == first) return fmt::format("{}:{}", name, first);
  if (last < 0) return fmt::format("{}:{}-*", name, first);
  return fmt::format("{}:{}-{}", name, first, last);
}

bool LinkSpec::Matches(EndpointKind sender, EndpointKind receiver) const {
  return (from == EndpointKind::kAny || from == sender) &&
         (to == EndpointKind::kAny || to == receiver);
}

std::string LinkSpec::ToString() const {
  if (from == EndpointKind::kAny && to == EndpointKind::kAny) return "*";
  return fmt::format("{}->{}", EndpointKindName(from), EndpointKindName(to));
}

const char* EndpointKindName(EndpointKind kind) {
  if (kind == EndpointKind::kAny) return "*";
  for (const KindName& k : kEndpointNames) {
    if (k.kind == kind) return k.name.data();
  }
  return "?";
}

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kCrash:
      return "crash";
    case FaultKind::kPartition:
      return "partition";
    case FaultKind::kSlow:
      return "slow";
    case FaultKind::kDrop:
      return "drop";
    case FaultKind::kDelay:
      return "delay";
    case FaultKind::kDuplicate:
      return "duplicate";
    case FaultKind::kDisk:
      return "disk";
  }
  return "?";
}

double FaultEvent::EndS() const {
  if (duration_s > 0) return at_s + duration_s;
  return std::numeric_limits<double>::infinity();
}

}  // namespace troupe
