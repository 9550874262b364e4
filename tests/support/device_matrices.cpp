#include "support/device_matrices.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common/device/output.h"

namespace fp8gemm::test_support {

namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// Floor division, also for a negative numerator (elements before D).
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

std::string describe_position(int64_t offset, int64_t ldd) {
  const int64_t row = floor_div(offset, ldd);
  std::ostringstream out;
  out << "row " << row << ", column " << offset - row * ldd;
  return out.str();
}

}  // namespace

uint8_t fp8_nan_code(Fp8Format format) { return fp8_is_fnuz(format) ? 0x80 : 0x7F; }

namespace {

// q's codes, rows `ld` bytes apart, from byte `offset` of a new buffer of
// `bytes` bytes that hold the NaN code elsewhere.
DeviceBuffer<uint8_t> upload_codes(const QuantizedMatrix& q, int64_t ld, int64_t offset, int64_t bytes) {
  DeviceBuffer<uint8_t> device(static_cast<size_t>(bytes));
  FP8GEMM_CUDA_CHECK(cudaMemset(device.get(), fp8_nan_code(q.format), device.bytes()));
  FP8GEMM_CUDA_CHECK(cudaMemcpy2D(device.get() + offset, static_cast<size_t>(ld), q.codes.data(),
                                  static_cast<size_t>(q.cols), static_cast<size_t>(q.cols), static_cast<size_t>(q.rows),
                                  cudaMemcpyHostToDevice));
  // A copy from pageable memory may return before it lands; the kernel runs
  // on another stream.
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  return device;
}

}  // namespace

DeviceBuffer<uint8_t> upload_operand(const QuantizedMatrix& q, int64_t ld) {
  return upload_codes(q, ld, 0, q.rows * ld);
}

DeviceBuffer<uint8_t> upload_operand_at(const QuantizedMatrix& q, int64_t ld, int64_t offset) {
  return upload_codes(q, ld, offset, offset + (q.rows - 1) * ld + q.cols);
}

// -----------------------------------------------------------------------------
// GuardedOutput
// -----------------------------------------------------------------------------

GuardedOutput::GuardedOutput(int64_t m, int64_t n, int64_t ldd, OutputType type, float d_scale)
    : m_(m), n_(n), ldd_(ldd), type_(type), d_scale_(d_scale) {
  const int64_t row_bytes = ldd * output_bytes(type);
  // A multiple of 256 bytes keeps D as aligned as cudaMalloc's own pointers.
  guard_bytes_ = round_up(std::max<int64_t>(kGuardRows * row_bytes, 64 * 1024), 256);
  buffer_ = DeviceBuffer<uint8_t>(static_cast<size_t>(2 * guard_bytes_ + m * row_bytes));
}

void GuardedOutput::poison(cudaStream_t stream) {
  const size_t row_bytes = static_cast<size_t>(ldd_ * output_bytes(type_));
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(buffer_.get(), kGuardByte, buffer_.bytes(), stream));
  FP8GEMM_CUDA_CHECK(cudaMemset2DAsync(d(), row_bytes, kPoisonByte, static_cast<size_t>(n_ * output_bytes(type_)),
                                       static_cast<size_t>(m_), stream));
}

OutputSnapshot GuardedOutput::download(cudaStream_t stream) const {
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint8_t> bytes(buffer_.bytes());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer_.get(), buffer_.bytes(), cudaMemcpyDeviceToHost));
  return OutputSnapshot(std::move(bytes), guard_bytes_, m_, n_, ldd_, type_, d_scale_);
}

// -----------------------------------------------------------------------------
// OutputSnapshot
// -----------------------------------------------------------------------------

OutputSnapshot::OutputSnapshot(std::vector<uint8_t> bytes, int64_t guard_bytes, int64_t m, int64_t n, int64_t ldd,
                               OutputType type, float d_scale)
    : bytes_(std::move(bytes)), guard_bytes_(guard_bytes), m_(m), n_(n), ldd_(ldd), type_(type), d_scale_(d_scale) {}

float OutputSnapshot::value(int64_t row, int64_t col) const {
  const uint8_t* element = bytes_.data() + guard_bytes_ + (row * ldd_ + col) * output_bytes(type_);
  if (type_ == OutputType::kBF16) {
    uint16_t bits;
    std::memcpy(&bits, element, sizeof bits);
    return bf16_bits_to_float(bits);
  }
  if (is_fp8_output(type_)) return load_output(element, 0, type_, d_scale_);
  float value;
  std::memcpy(&value, element, sizeof value);
  return value;
}

std::vector<float> OutputSnapshot::rows(const std::vector<int64_t>& rows) const {
  std::vector<float> values;
  values.reserve(rows.size() * static_cast<size_t>(n_));
  for (int64_t row : rows) {
    for (int64_t col = 0; col < n_; ++col) values.push_back(value(row, col));
  }
  return values;
}

int64_t OutputSnapshot::element_offset(int64_t byte) const {
  return floor_div(byte - guard_bytes_, output_bytes(type_));
}

::testing::AssertionResult OutputSnapshot::guard_untouched() const {
  const int64_t element = output_bytes(type_);
  const int64_t row_bytes = ldd_ * element;
  const int64_t d_end = guard_bytes_ + m_ * row_bytes;
  int64_t changed = 0;
  int64_t first = -1;
  auto scan = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (bytes_[static_cast<size_t>(i)] != kGuardByte) {
        if (first < 0) first = i;
        ++changed;
      }
    }
  };
  scan(0, guard_bytes_);                    // before D
  for (int64_t row = 0; row < m_; ++row) {  // between N and ldd in each row
    const int64_t row_start = guard_bytes_ + row * row_bytes;
    scan(row_start + n_ * element, row_start + row_bytes);
  }
  scan(d_end, static_cast<int64_t>(bytes_.size()));  // after D
  if (changed == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << changed << " bytes outside D were written (D is " << m_ << " x " << n_
                                       << ", ldd " << ldd_ << "); the first is in the element at "
                                       << describe_position(element_offset(first), ldd_) << " relative to D[0, 0]";
}

::testing::AssertionResult OutputSnapshot::every_element_written() const {
  int64_t non_finite = 0;
  int64_t first_row = -1, first_col = -1;
  for (int64_t row = 0; row < m_; ++row) {
    for (int64_t col = 0; col < n_; ++col) {
      if (std::isfinite(value(row, col))) continue;
      if (non_finite++ == 0) {
        first_row = row;
        first_col = col;
      }
    }
  }
  if (non_finite == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << non_finite << " of " << m_ * n_
                                       << " elements of D are NaN or infinite (never written, or a non-finite"
                                       << " result) where the reference is finite; the first is D[" << first_row << ", "
                                       << first_col << "] = " << value(first_row, first_col);
}

::testing::AssertionResult OutputSnapshot::nothing_written() const {
  const int64_t element = output_bytes(type_);
  for (int64_t row = 0; row < m_; ++row) {
    const uint8_t* begin = bytes_.data() + guard_bytes_ + row * ldd_ * element;
    const uint8_t* end = begin + n_ * element;
    const uint8_t* changed = std::find_if(begin, end, [](uint8_t b) { return b != kPoisonByte; });
    if (changed != end) {
      return ::testing::AssertionFailure()
             << "D was written although the step rejected the call: D[" << row << ", " << (changed - begin) / element
             << "] = " << value(row, (changed - begin) / element);
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace fp8gemm::test_support
