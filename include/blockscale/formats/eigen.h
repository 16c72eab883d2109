// SPDX-License-Identifier: Apache-2.0
// Eigen 3.4 support for the value types: NumTraits and the numext isnan/isinf/isfinite hooks, so
// that Eigen::Matrix<blockscale::float8_e4m3fn, Dynamic, Dynamic> can be built, cast to and from
// float, and printed. Opt-in: include this header after Eigen.
#pragma once

#include <Eigen/Core>

#include "blockscale/formats/types.h"

namespace Eigen {

template <blockscale::Format F>
struct NumTraits<blockscale::exmy<F>> : GenericNumTraits<blockscale::exmy<F>> {
  using T = blockscale::exmy<F>;
  using Real = T;
  using NonInteger = T;
  using Literal = T;
  using Nested = T;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = blockscale::info(F).is_signed ? 1 : 0,
    RequireInitialization = 0,
    ReadCost = 1,
    AddCost = 3,
    MulCost = 3,
  };
  static T epsilon() { return std::numeric_limits<T>::epsilon(); }
  static T dummy_precision() { return T(0.5f); }
  static T highest() { return std::numeric_limits<T>::max(); }
  static T lowest() { return std::numeric_limits<T>::lowest(); }
  static T infinity() { return std::numeric_limits<T>::infinity(); }
  static T quiet_NaN() { return std::numeric_limits<T>::quiet_NaN(); }
  static int digits10() { return std::numeric_limits<T>::digits10; }
  static int digits() { return std::numeric_limits<T>::digits; }
};

namespace internal {
template <blockscale::Format F>
struct cast_impl<blockscale::exmy<F>, float> {
  static float run(const blockscale::exmy<F>& x) { return static_cast<float>(x); }
};
template <blockscale::Format F>
struct cast_impl<float, blockscale::exmy<F>> {
  static blockscale::exmy<F> run(const float& x) { return blockscale::exmy<F>(x); }
};
}  // namespace internal

namespace numext {
template <blockscale::Format F>
bool(isnan)(const blockscale::exmy<F>& x) { return blockscale::isnan(x); }
template <blockscale::Format F>
bool(isinf)(const blockscale::exmy<F>& x) { return blockscale::isinf(x); }
template <blockscale::Format F>
bool(isfinite)(const blockscale::exmy<F>& x) { return blockscale::isfinite(x); }
}  // namespace numext

}  // namespace Eigen
