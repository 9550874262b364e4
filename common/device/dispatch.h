/// @file dispatch.h
/// @brief Turns the run-time FP8 formats of a GemmArgs into template
///        arguments, so that kernels decode with compile-time constants.
#pragma once

#include <type_traits>

#include "common/fp8/fp8.h"

namespace fp8gemm {

/// A format as a type, e.g. `FormatTag<Fp8Format::kE4M3>`; its `value` is the format.
template <Fp8Format F>
using FormatTag = std::integral_constant<Fp8Format, F>;

/// Calls `fn(FormatTag<A>{})` for the run-time format `a`.
template <typename Fn>
decltype(auto) dispatch_fp8_format(Fp8Format a, Fn&& fn) {
  switch (a) {
    case Fp8Format::kE4M3: return fn(FormatTag<Fp8Format::kE4M3>{});
    case Fp8Format::kE5M2: return fn(FormatTag<Fp8Format::kE5M2>{});
    case Fp8Format::kE4M3Fnuz: return fn(FormatTag<Fp8Format::kE4M3Fnuz>{});
    default: return fn(FormatTag<Fp8Format::kE5M2Fnuz>{});
  }
}

/// Calls `fn(FormatTag<A>{}, FormatTag<B>{})` for the run-time formats a and b:
/// one instantiation per pair of formats, chosen once per launch.
template <typename Fn>
decltype(auto) dispatch_fp8_formats(Fp8Format a, Fp8Format b, Fn&& fn) {
  return dispatch_fp8_format(a, [&](auto tag_a) {
    return dispatch_fp8_format(b, [&](auto tag_b) { return fn(tag_a, tag_b); });
  });
}

}  // namespace fp8gemm
