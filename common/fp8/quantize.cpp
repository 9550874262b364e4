// Host quantization: the reference that quantize_on_gpu() must match bit for
// bit. It is written for clarity: a check that every element is finite, then
// three passes over the matrix: the amax of every group, the scale of every
// group, then every element's code.
#include "common/fp8/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace fp8gemm {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t scale_count(int64_t rows, int64_t cols, ScaleGranularity g) {
  const int64_t groups_per_row = ceil_div(cols, kQuantGroupSize);
  switch (g) {
    case ScaleGranularity::kPerTensor: return 1;
    case ScaleGranularity::kPerRow: return rows;
    case ScaleGranularity::kGroup1x128: return rows * groups_per_row;
    default: return ceil_div(rows, kQuantGroupSize) * groups_per_row;
  }
}

Status validate_quantize_args(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                              ScaleGranularity granularity, Fp8Overflow overflow) {
  std::ostringstream msg;
  if (rows < 1 || cols < 1) {
    msg << "rows and cols must be >= 1, got rows = " << rows << ", cols = " << cols;
    return Status::error(StatusCode::kInvalidArgument, msg.str());
  }
  if (ld < cols) {
    msg << "ld >= cols required (row-major), got ld = " << ld << ", cols = " << cols;
    return Status::error(StatusCode::kInvalidArgument, msg.str());
  }
  if (rows - 1 > (std::numeric_limits<int64_t>::max() - cols) / ld) {
    return Status::error(StatusCode::kInvalidArgument,
                         "matrix extent (rows - 1) * ld + cols overflows a 64-bit offset");
  }
  if (x == nullptr) return Status::error(StatusCode::kInvalidArgument, "x must not be a null pointer");
  if (static_cast<int>(format) >= kNumFp8Formats) {
    return Status::error(StatusCode::kInvalidArgument, "format must be one of e4m3, e5m2, e4m3fnuz, e5m2fnuz");
  }
  if (static_cast<int>(granularity) > static_cast<int>(ScaleGranularity::kBlock128x128)) {
    return Status::error(StatusCode::kInvalidArgument, "granularity must be per tensor, per row, 1x128 or 128x128");
  }
  if (overflow != Fp8Overflow::kSaturate && overflow != Fp8Overflow::kNoSaturate) {
    return Status::error(StatusCode::kInvalidArgument, "overflow must be kSaturate or kNoSaturate");
  }
  return Status::success();
}

Status non_finite_input_error(int64_t row, int64_t col, float value) {
  std::ostringstream msg;
  msg << "every element of x must be finite (no NaN or infinity); the first that is not, in row-major order, is x["
      << row << ", " << col << "] = " << (std::isnan(value) ? "nan" : (value > 0.0f ? "inf" : "-inf"));
  return Status::error(StatusCode::kInvalidArgument, msg.str());
}

Status check_finite_input(const float* x, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[r * ld + c];
      if (!std::isfinite(v)) return non_finite_input_error(r, c, v);
    }
  }
  return Status::success();
}

Status try_quantize(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                    ScaleGranularity granularity, QuantizedMatrix* out, Fp8Overflow overflow) {
  Status status = validate_quantize_args(x, rows, cols, ld, format, granularity, overflow);
  if (!status.ok()) return status;
  if (out == nullptr) return Status::error(StatusCode::kInvalidArgument, "out must not be a null pointer");
  // Pass 0: the input is finite (docs/quantization.md, "What quantization
  // accepts"). After this no amax can be infinite or NaN.
  status = check_finite_input(x, rows, cols, ld);
  if (!status.ok()) return status;

  QuantizedMatrix q;
  q.rows = rows;
  q.cols = cols;
  q.format = format;
  q.granularity = granularity;
  q.codes.resize(static_cast<size_t>(rows * cols));
  q.scales.resize(static_cast<size_t>(scale_count(rows, cols, granularity)));

  // Pass 1: the largest magnitude of each group.
  std::vector<float> amax(q.scales.size(), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      float& group_amax = amax[scale_index(r, c, rows, cols, granularity)];
      group_amax = std::max(group_amax, std::fabs(x[r * ld + c]));
    }
  }

  // Pass 2: one dequantization scale per group.
  for (size_t i = 0; i < amax.size(); ++i) q.scales[i] = dequant_scale_from_amax(amax[i], format);

  // Pass 3: every element with the scale of its group.
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float scale = q.scales[scale_index(r, c, rows, cols, granularity)];
      q.codes[r * cols + c] = quantize_value(x[r * ld + c], scale, format, overflow);
    }
  }
  *out = std::move(q);
  return Status::success();
}

QuantizedMatrix quantize(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                         ScaleGranularity granularity, Fp8Overflow overflow) {
  QuantizedMatrix q;
  const Status status = try_quantize(x, rows, cols, ld, format, granularity, &q, overflow);
  if (!status.ok()) throw std::invalid_argument("quantize: " + status.message);
  return q;
}

std::vector<double> dequantize(const QuantizedMatrix& q) {
  std::vector<double> values(q.codes.size());
  for (int64_t r = 0; r < q.rows; ++r) {
    for (int64_t c = 0; c < q.cols; ++c) {
      const int64_t i = r * q.cols + c;
      const float scale = q.scales[scale_index(r, c, q.rows, q.cols, q.granularity)];
      // An FP8 value has at most 4 significant bits and a float 24: the
      // product is exact in double.
      values[i] = static_cast<double>(fp8_to_float(q.codes[i], q.format)) * static_cast<double>(scale);
    }
  }
  return values;
}

}  // namespace fp8gemm
