// The fields of a plain aggregate (public members, no base class, no constructor of its own) as a
// tuple of references, in declaration order, found by the language rather than by the type's
// `inspect`: what a test holds a type's `inspect` against. FieldCount<T>() counts them (the most
// initialisers that `T{...}` takes); Fields(x) ties them. Up to kMaxFields fields.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace troupe::testing {

inline constexpr size_t kMaxFields = 32;

namespace fields_detail {

// Converts to any field's type; only named in unevaluated contexts.
struct AnyField {
  template <class T>
  operator T&() const&&;
};

template <class T, size_t... I>
constexpr bool InitialisableWith(std::index_sequence<I...>) {
  return requires { T{(static_cast<void>(I), AnyField{})...}; };
}

}  // namespace fields_detail

template <class T, size_t N = 0>
constexpr size_t FieldCount() {
  static_assert(std::is_aggregate_v<T>, "only a plain aggregate has fields to count");
  if constexpr (N > kMaxFields ||
                !fields_detail::InitialisableWith<T>(std::make_index_sequence<N + 1>{})) {
    return N;
  } else {
    return FieldCount<T, N + 1>();
  }
}

#define TROUPE_TIE(...)    \
  auto& [__VA_ARGS__] = x; \
  return std::tie(__VA_ARGS__)

template <class T>
auto Fields(T& x) {
  constexpr size_t N = FieldCount<std::remove_const_t<T>>();
  static_assert(N <= kMaxFields, "an aggregate of at most kMaxFields fields");
  if constexpr (N == 0) {
    return std::tie();
  } else if constexpr (N == 1) {
    TROUPE_TIE(f0);
  } else if constexpr (N == 2) {
    TROUPE_TIE(f0, f1);
  } else if constexpr (N == 3) {
    TROUPE_TIE(f0, f1, f2);
  } else if constexpr (N == 4) {
    TROUPE_TIE(f0, f1, f2, f3);
  } else if constexpr (N == 5) {
    TROUPE_TIE(f0, f1, f2, f3, f4);
  } else if constexpr (N == 6) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5);
  } else if constexpr (N == 7) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6);
  } else if constexpr (N == 8) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7);
  } else if constexpr (N == 9) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8);
  } else if constexpr (N == 10) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9);
  } else if constexpr (N == 11) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10);
  } else if constexpr (N == 12) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11);
  } else if constexpr (N == 13) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12);
  } else if constexpr (N == 14) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13);
  } else if constexpr (N == 15) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14);
  } else if constexpr (N == 16) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15);
  } else if constexpr (N == 17) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16);
  } else if constexpr (N == 18) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17);
  } else if constexpr (N == 19) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18);
  } else if constexpr (N == 20) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19);
  } else if constexpr (N == 21) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20);
  } else if constexpr (N == 22) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21);
  } else if constexpr (N == 23) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22);
  } else if constexpr (N == 24) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23);
  } else if constexpr (N == 25) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24);
  } else if constexpr (N == 26) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24, f25);
  } else if constexpr (N == 27) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24, f25, f26);
  } else if constexpr (N == 28) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24, f25, f26, f27);
  } else if constexpr (N == 29) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24, f25, f26, f27, f28);
  } else if constexpr (N == 30) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29);
  } else if constexpr (N == 31) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30);
  } else if constexpr (N == 32) {
    TROUPE_TIE(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31);
  }
}

#undef TROUPE_TIE

}  // namespace troupe::testing
