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
  if (static_cast<int>(args.d_type) >= kNumOutputTypes) {
    return invalid("d_type must be one of bf16, fp32, e4m3, e5m2");
  }
  if (static_cast<int>(args.a_scale_granularity) >= kNumScaleGranularities ||
      static_cast<int>(args.b_scale_granularity) >= kNumScaleGranularities) {
    return invalid("a_scale_granularity and b_scale_granularity must be one of per_tensor, per_row, 1x128, 128x128");
  }
  const struct {
    const char* name;
    ScaleGranularity granularity;
    const float* pointer;
    float host;
  } operands[] = {{"A", args.a_scale_granularity, args.a_scales, args.a_scale},
                  {"B", args.b_scale_granularity, args.b_scales, args.b_scale}};
  for (const auto& o : operands) {
    if (o.granularity != ScaleGranularity::kPerTensor && o.pointer == nullptr) {
      msg << o.name << "'s " << granularity_name(o.granularity) << " scales need a device pointer ("
          << (o.name[0] == 'A' ? "a_scales" : "b_scales") << ")";
      return invalid(msg.str());
    }
    if (o.pointer != nullptr && o.host != 1.0f) {
      msg << o.name << "'s scales come from device memory, so its host scale must be 1, got " << o.host;
      return invalid(msg.str());
    }
  }
  if (static_cast<int>(args.bias_type) > static_cast<int>(BiasType::kFP32))
    return invalid("bias_type must be bf16 or fp32");
  if (static_cast<int>(args.activation) > static_cast<int>(Activation::kGeluErf)) {
    return invalid("activation must be none, gelu or gelu_erf");
  }
  if (!is_fp8_output(args.d_type) && (args.d_scale != 1.0f || args.d_amax != nullptr)) {
    msg << "d_scale and d_amax are for FP8 D only (d_type " << output_name(args.d_type)
        << "), got d_scale = " << args.d_scale << (args.d_amax != nullptr ? " and a d_amax pointer" : "");
    return invalid(msg.str());
  }
  if (is_fp8_output(args.d_type) && !(std::isfinite(args.d_scale) && args.d_scale > 0.0f)) {
    msg << "d_scale must be finite and > 0 for FP8 D, got " << args.d_scale;
    return invalid(msg.str());
  }
  if (static_cast<int>(args.split_k_reduction) >= kNumSplitKReductions) {
    msg << "split_k_reduction must be auto, cluster or workspace, got " << static_cast<int>(args.split_k_reduction);
    return invalid(msg.str());
  }
  if (args.split_k < 0) {
    msg << "split_k must be >= 0 (0: the step chooses), got " << args.split_k;
    return invalid(msg.str());
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
