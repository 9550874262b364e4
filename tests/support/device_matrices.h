/// @file device_matrices.h
/// @brief The matrices of a GPU test on the device: operands whose row
///        padding would poison any read past K, and an output D inside a
///        guard band, poisoned with NaN before the launch and checked after.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/fp8/quantize.h"

namespace fp8gemm::test_support {

/// The NaN code of a format: 0x7F for e4m3 and e5m2, 0x80 for the FNUZ formats.
uint8_t fp8_nan_code(Fp8Format format);

/// Copies an operand (rows x cols codes) to the device with `ld` >= cols
/// bytes between rows. The ld - cols padding bytes of every row hold the
/// format's NaN code: a kernel that uses a byte past K produces NaN.
DeviceBuffer<uint8_t> upload_operand(const QuantizedMatrix& q, int64_t ld);

/// The same at a pointer off every alignment: the operand starts `offset`
/// bytes into an allocation that ends with its last row's last byte (the
/// operand's pointer is the buffer's plus `offset`); the bytes before it and
/// the padding of every row but the last hold the NaN code.
DeviceBuffer<uint8_t> upload_operand_at(const QuantizedMatrix& q, int64_t ld, int64_t offset);

/// Byte written over the guard band around D.
inline constexpr uint8_t kGuardByte = 0xA5;
/// Byte written over D before a launch: 0xFFFF and 0xFFFFFFFF are NaN in
/// BF16 and FP32, so an element the kernel never writes reads as NaN.
inline constexpr uint8_t kPoisonByte = 0xFF;

/// A host copy of D and its guard band, taken after a launch.
class OutputSnapshot {
 public:
  /// Takes over the bytes of the whole allocation (guard, D, guard); d_scale
  /// is an FP8 D's dequantization scale (1 for the other types).
  OutputSnapshot(std::vector<uint8_t> bytes, int64_t guard_bytes, int64_t m, int64_t n, int64_t ldd, OutputType type,
                 float d_scale = 1.0f);

  /// Rows of D.
  int64_t m() const { return m_; }
  /// Columns of D.
  int64_t n() const { return n_; }
  /// Element type of D.
  OutputType type() const { return type_; }
  /// FP8 D's dequantization scale (1 for the other types).
  float d_scale() const { return d_scale_; }
  /// The amax the launch wrote (GemmArgs::d_amax), if one was asked for.
  const std::optional<float>& amax() const { return amax_; }
  /// Records the amax read back after the launch.
  void set_amax(float amax) { amax_ = amax; }
  /// Element (row, col) of D as a float (FP8: the code's value times d_scale).
  float value(int64_t row, int64_t col) const;
  /// The listed rows of D as floats: rows.size() x N, row-major.
  std::vector<float> rows(const std::vector<int64_t>& rows) const;

  /// Every byte outside D (before it, after it, and between N and ldd in each
  /// row) still holds kGuardByte; otherwise names the first changed element.
  ::testing::AssertionResult guard_untouched() const;
  /// Every element of D is finite: the poison was overwritten everywhere.
  ::testing::AssertionResult every_element_written() const;
  /// Every element of D still holds the poison: nothing was written.
  ::testing::AssertionResult nothing_written() const;
  /// D and its guard band as copied, byte for byte (to compare two runs).
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  // Offset in elements from D[0, 0] of the element holding byte `byte` of the allocation.
  int64_t element_offset(int64_t byte) const;

  std::vector<uint8_t> bytes_;
  int64_t guard_bytes_;
  int64_t m_, n_, ldd_;
  OutputType type_;
  float d_scale_;
  std::optional<float> amax_;
};

/// D (M x N, leading dimension ldd) on the device inside a guard band of at
/// least kGuardRows rows (and 64 KiB) before and after it; the ldd - N
/// elements at the end of each row belong to the guard too.
class GuardedOutput {
 public:
  /// Rows of guard before and after D, at least.
  static constexpr int64_t kGuardRows = 4;

  /// Allocates D and its guard band; call poison() before each launch.
  GuardedOutput(int64_t m, int64_t n, int64_t ldd, OutputType type, float d_scale = 1.0f);

  /// Device pointer to D[0, 0]; 256-byte aligned.
  void* d() const { return buffer_.get() + guard_bytes_; }
  /// Leading dimension of D in elements.
  int64_t ldd() const { return ldd_; }
  /// Element type of D.
  OutputType type() const { return type_; }
  /// FP8 D's dequantization scale.
  float d_scale() const { return d_scale_; }

  /// Fills the guard band with kGuardByte and D with kPoisonByte (NaN).
  void poison(cudaStream_t stream);
  /// Waits for `stream` and copies D and its guard band to the host.
  OutputSnapshot download(cudaStream_t stream) const;

 private:
  int64_t m_, n_, ldd_;
  OutputType type_;
  float d_scale_;
  int64_t guard_bytes_;  // before D and after it
  DeviceBuffer<uint8_t> buffer_;
};

}  // namespace fp8gemm::test_support
