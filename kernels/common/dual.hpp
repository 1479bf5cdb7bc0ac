// Forward-mode dual numbers: the number type at which the event loop computes
// Jacobian-vector products. A Dual<T, N> carries a value and N tangents; each
// operation applies the chain rule to the tangents. Written for host and
// device; N is a compile-time constant so the tangents live in registers.
#pragma once

#include <type_traits>

#include "common/kokkos_compat.hpp"
#include "common/sincos.hpp"

namespace larmor {

template <class T, int N>
struct Dual {
  T value;
  T tangent[N];

  KOKKOS_FORCEINLINE_FUNCTION Dual() : value(T(0)) {
    for (int i = 0; i < N; ++i) tangent[i] = T(0);
  }
#if !defined(__CUDACC__)
  // Copies element by element, not as the implicit aggregate copy: GCC's loop
  // vectoriser gives up on a loop holding an aggregate store, which left the
  // host's dual lane loops (the reverse sweeps') scalar. Not where nvcc
  // compiles: its builds keep the implicit copy, and so their device code.
  KOKKOS_FORCEINLINE_FUNCTION Dual(const Dual& o) : value(o.value) {
    for (int i = 0; i < N; ++i) tangent[i] = o.tangent[i];
  }
  KOKKOS_FORCEINLINE_FUNCTION Dual& operator=(const Dual& o) {
    value = o.value;
    for (int i = 0; i < N; ++i) tangent[i] = o.tangent[i];
    return *this;
  }
#endif
  // A constant: its tangents are zero. Implicit, so constants mix freely.
  KOKKOS_FORCEINLINE_FUNCTION Dual(T v) : value(v) {  // NOLINT(runtime/explicit)
    for (int i = 0; i < N; ++i) tangent[i] = T(0);
  }
  // A constant given in another arithmetic type (e.g. 0.5f in a double dual).
  template <class U, class = std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, T>>>
  KOKKOS_FORCEINLINE_FUNCTION explicit Dual(U v) : Dual(T(v)) {}

  // The independent variable `direction` of N, with unit tangent.
  static KOKKOS_FORCEINLINE_FUNCTION Dual variable(T v, int direction) {
    Dual d(v);
    d.tangent[direction] = T(1);
    return d;
  }

  KOKKOS_FORCEINLINE_FUNCTION Dual& operator+=(const Dual& b) { return *this = *this + b; }
  KOKKOS_FORCEINLINE_FUNCTION Dual& operator-=(const Dual& b) { return *this = *this - b; }
  KOKKOS_FORCEINLINE_FUNCTION Dual& operator*=(const Dual& b) { return *this = *this * b; }
};

// How many tangents a number type carries: 0 for plain floats.
template <class Real>
struct TangentCount {
  static constexpr int value = 0;
};
template <class T, int N>
struct TangentCount<Dual<T, N>> {
  static constexpr int value = N;
};
template <class Real>
inline constexpr int tangent_count_v = TangentCount<Real>::value;

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION float tangent_of(const Real&, int) {
  return 0.0f;
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION T tangent_of(const Dual<T, N>& a, int direction) {
  return a.tangent[direction];
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION T value_of(const Dual<T, N>& a) {
  return a.value;
}

// The innermost float of a (possibly nested) dual number.
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION auto scalar_value(const Dual<T, N>& a) {
  return scalar_value(a.value);
}

// A number's floats one at a time: part 0 is the value, part j the tangent
// j - 1 (checkpoint stores keep a dual number's parts side by side).
template <class Real>
inline constexpr int part_count_v = 1 + tangent_count_v<Real>;
KOKKOS_FORCEINLINE_FUNCTION float& part_of(float& x, int) { return x; }
KOKKOS_FORCEINLINE_FUNCTION float part_of(const float& x, int) { return x; }
template <int N>
KOKKOS_FORCEINLINE_FUNCTION float& part_of(Dual<float, N>& x, int j) {
  return j == 0 ? x.value : x.tangent[j - 1];
}
template <int N>
KOKKOS_FORCEINLINE_FUNCTION float part_of(const Dual<float, N>& x, int j) {
  return j == 0 ? x.value : x.tangent[j - 1];
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator-(const Dual<T, N>& a) {
  Dual<T, N> r;
  r.value = -a.value;
  for (int i = 0; i < N; ++i) r.tangent[i] = -a.tangent[i];
  return r;
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator+(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.value = a.value + b.value;
  for (int i = 0; i < N; ++i) r.tangent[i] = a.tangent[i] + b.tangent[i];
  return r;
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator-(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.value = a.value - b.value;
  for (int i = 0; i < N; ++i) r.tangent[i] = a.tangent[i] - b.tangent[i];
  return r;
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator*(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.value = a.value * b.value;
  for (int i = 0; i < N; ++i) r.tangent[i] = a.tangent[i] * b.value + a.value * b.tangent[i];
  return r;
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator/(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  const T inv = T(1) / b.value;
  r.value = a.value * inv;
  for (int i = 0; i < N; ++i) r.tangent[i] = (a.tangent[i] - r.value * b.tangent[i]) * inv;
  return r;
}

// Mixed with a plain constant of the value type.
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator+(const Dual<T, N>& a, T b) {
  return a + Dual<T, N>(b);
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator+(T a, const Dual<T, N>& b) {
  return Dual<T, N>(a) + b;
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator-(const Dual<T, N>& a, T b) {
  return a - Dual<T, N>(b);
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator-(T a, const Dual<T, N>& b) {
  return Dual<T, N>(a) - b;
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator*(const Dual<T, N>& a, T b) {
  Dual<T, N> r;
  r.value = a.value * b;
  for (int i = 0; i < N; ++i) r.tangent[i] = a.tangent[i] * b;
  return r;
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> operator*(T a, const Dual<T, N>& b) {
  return b * a;
}

// Comparisons look at values only: a branch taken on a value is the same
// branch for every tangent.
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION bool operator==(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.value == b.value;
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION bool operator!=(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.value != b.value;
}
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION bool operator<(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.value < b.value;
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> exp(const Dual<T, N>& a) {
  using kx::exp;  // nested duals (forward over reverse) find larmor::exp
  Dual<T, N> r;
  r.value = exp(a.value);
  for (int i = 0; i < N; ++i) r.tangent[i] = r.value * a.tangent[i];
  return r;
}

// d sin = cos, d cos = -sin: one reduction serves the value and the tangents.
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION void sincos_reduced(const Dual<T, N>& a, Dual<T, N>& s, Dual<T, N>& c) {
  T sv, cv;
  sincos_reduced(a.value, sv, cv);
  s.value = sv;
  c.value = cv;
  for (int i = 0; i < N; ++i) {
    s.tangent[i] = cv * a.tangent[i];
    c.tangent[i] = -sv * a.tangent[i];
  }
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> sin(const Dual<T, N>& a) {
  Dual<T, N> s, c;
  sincos_reduced(a, s, c);
  return s;
}

template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION Dual<T, N> cos(const Dual<T, N>& a) {
  Dual<T, N> s, c;
  sincos_reduced(a, s, c);
  return c;
}

}  // namespace larmor
