#include "common/api/gemm.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace fp8gemm {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotSupported: return "not supported";
    default: return "runtime error";
  }
}

namespace {

Status invalid(const std::string& message) { return Status::error(StatusCode::kInvalidArgument, message); }

// Largest element offset of a rows x cols matrix with leading dimension ld,
// checked against int64 overflow.
bool extent_fits(int64_t rows, int64_t cols, int64_t ld) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  return rows - 1 <= (max - cols) / ld;
}

}  // namespace

Status validate_gemm_args(const GemmArgs& args) {
  std::ostringstream msg;
  if (args.m < 1 || args.n < 1 || args.k < 1) {
    msg << "M, N and K must be >= 1, got M = " << args.m << ", N = " << args.n << ", K = " << args.k;
    return invalid(msg.str());
  }
  if (args.a == nullptr) return invalid("A must not be a null pointer");
  if (args.b == nullptr) return invalid("B must not be a null pointer");
  if (args.d == nullptr) return invalid("D must not be a null pointer");
  if (args.lda < args.k) {
    msg << "lda >= K required (A is K-major), got lda = " << args.lda << ", K = " << args.k;
    return invalid(msg.str());
  }
  if (args.ldb < args.k) {
    msg << "ldb >= K required (B is K-major), got ldb = " << args.ldb << ", K = " << args.k;
    return invalid(msg.str());
  }
  if (args.ldd < args.n) {
    msg << "ldd >= N required (D is row-major), got ldd = " << args.ldd << ", N = " << args.n;
    return invalid(msg.str());
  }
  if (!extent_fits(args.m, args.k, args.lda) || !extent_fits(args.n, args.k, args.ldb) ||
      !extent_fits(args.m, args.n, args.ldd)) {
    return invalid("matrix extent (rows - 1) * ld + cols overflows a 64-bit offset");
  }
  if (static_cast<int>(args.a_format) >= kNumFp8Formats || static_cast<int>(args.b_format) >= kNumFp8Formats) {
    return invalid("a_format and b_format must be one of e4m3, e5m2, e4m3fnuz, e5m2fnuz");
  }
  if (args.d_type != OutputType::kBF16 && args.d_type != OutputType::kFP32) {
    return invalid("d_type must be bf16 or fp32");
  }
  if (!std::isfinite(args.a_scale) || !std::isfinite(args.b_scale)) {
    msg << "a_scale and b_scale must be finite, got " << args.a_scale << " and " << args.b_scale;
    return invalid(msg.str());
  }
  // Every step multiplies its sums by a_scale * b_scale in FP32
  // (docs/tolerances.md): that product must be a finite normal float, or zero
  // because a scale is zero. An overflow makes D infinite, and an underflow
  // (a zero or subnormal product of non-zero scales) flushes D to zero or
  // loses the relative precision the tolerance counts on.
  const float scale_product = args.a_scale * args.b_scale;
  if (!std::isfinite(scale_product)) {
    msg << "a_scale * b_scale must be finite, got " << args.a_scale << " * " << args.b_scale << " = " << scale_product
        << " in float";
    return invalid(msg.str());
  }
  if (args.a_scale != 0.0f && args.b_scale != 0.0f &&
      !(std::fabs(scale_product) >= std::numeric_limits<float>::min())) {
    msg << "a_scale * b_scale must not underflow (|a_scale * b_scale| >= 2^-126 unless a scale is 0), got "
        << args.a_scale << " * " << args.b_scale << " = " << scale_product << " in float";
    return invalid(msg.str());
  }
  return Status::success();
}

}  // namespace fp8gemm
