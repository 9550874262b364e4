/// @file mfma_layout.h
/// @brief Which lane of a 64-lane wavefront holds which element of A, B and D
///        for the two FP8 matrix instructions of the AMD kernels, written once
///        as plain functions that the kernel and the CPU tests share.
///
/// An MFMA instruction computes D = A * B + C for one small tile, with the
/// operands spread over the 64 lanes of a wavefront: every lane passes a few
/// bytes of A and of B in its registers and receives a few floats of D. Which
/// lane holds which element is fixed by the hardware; these functions say it.
///
/// Matrix names follow AMD's ISA guides: A is M x K, B is K x N, D is M x N
/// (for one instruction M = N = 16). The GEMM's B operand is stored N x K
/// (K-major), so element (k, j) of the instruction's B is row j, column k of
/// the stored B: both operands are read along contiguous K in memory.
///
/// | instruction (arch)                          | K   | A, B bytes per lane   | D floats per lane |
/// |---------------------------------------------|-----|-----------------------|-------------------|
/// | v_mfma_f32_16x16x32_fp8_fp8 (gfx942, CDNA3)  | 32  | 8 (2 VGPRs, 1 run)    | 4                 |
/// | v_mfma_f32_16x16x128_f8f6f4 (gfx950, CDNA4)  | 128 | 32 (8 VGPRs, 2 runs)  | 4                 |
///
/// A "run" is a group of a lane's operand bytes that hold consecutive k: it is
/// one vector load from a K-major row. Byte b of a lane's operand sits in
/// VGPR b / 4, bits 8 * (b % 4) .. 8 * (b % 4) + 7 (little-endian packing).
#pragma once

#include "common/fp8/fp8.h"
#include "common/portability.h"

namespace fp8gemm {
namespace mfma {

/// Lanes in a CDNA wavefront (wave64 is the only mode of gfx942 and gfx950).
inline constexpr int kWaveLanes = 64;

/// A position in a matrix.
struct MatrixIndex {
  int row;  ///< Row index.
  int col;  ///< Column index.
};

/// Equality of two matrix positions.
FP8GEMM_HOST_DEVICE constexpr bool operator==(MatrixIndex a, MatrixIndex b) { return a.row == b.row && a.col == b.col; }

/// Lane layout of v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (CDNA3, gfx942).
///
/// Source: AMD Instinct MI300 (CDNA3) ISA reference guide, chapter 7 "Matrix
/// Arithmetic Instructions", as tabulated by AMD's Matrix Instruction
/// Calculator (`matrix_calculator.py -a cdna3 -i v_mfma_f32_16x16x32_fp8_fp8
/// --detail-instruction`):
///  - A[i][k] is in lane 16 * floor(k / 8) + i, VGPR floor(k / 4) % 2,
///    bits 8 * (k % 4) and up: each lane holds 8 consecutive k of one row.
///  - B[k][j] is in lane 16 * floor(k / 8) + j, same VGPR and bits as A.
///  - D[i][j] is in lane 16 * floor(i / 4) + j, VGPR i % 4.
/// The instruction name picks the formats: fp8 = E4M3FNUZ, bf8 = E5M2FNUZ
/// (CDNA3 supports only the FNUZ variants).
struct Mfma16x16x32Fp8 {
  static constexpr int kM = 16;                            ///< Rows of A and D.
  static constexpr int kN = 16;                            ///< Columns of B and D.
  static constexpr int kK = 32;                            ///< Columns of A, rows of B.
  static constexpr int kOperandBytes = 8;                  ///< FP8 values of A (and of B) per lane.
  static constexpr int kRunBytes = 8;                      ///< Consecutive k held together by a lane.
  static constexpr int kRuns = kOperandBytes / kRunBytes;  ///< Runs per lane and operand.
  static constexpr int kAccumulators = 4;                  ///< FP32 values of D per lane.

  /// Element (i, k) of A held by `lane` in its operand byte `byte` (0..7).
  FP8GEMM_HOST_DEVICE static constexpr MatrixIndex a_element_of(int lane, int byte) {
    return {lane % 16, 8 * (lane / 16) + byte};
  }
  /// Element (k, j) of B held by `lane` in its operand byte `byte` (0..7).
  FP8GEMM_HOST_DEVICE static constexpr MatrixIndex b_element_of(int lane, int byte) {
    return {8 * (lane / 16) + byte, lane % 16};
  }
  /// Element (i, j) of D held by `lane` in its accumulator register `reg` (0..3).
  FP8GEMM_HOST_DEVICE static constexpr MatrixIndex d_element_of(int lane, int reg) {
    return {4 * (lane / 16) + reg, lane % 16};
  }
};

/// Lane layout of v_mfma_f32_16x16x128_f8f6f4 with FP8 or BF8 operands
/// (CDNA4, gfx950), reached through
/// `__builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4` with scales of 1.0
/// (kE8m0One).
///
/// Each lane passes 32 FP8 values of A (and of B) in 8 VGPRs: row (or column)
/// lane % 16, in two runs of 16 consecutive k. VGPRs 0-3 hold
/// k = 16 * floor(lane / 16) + 0..15, VGPRs 4-7 the same 16 k plus 64: the
/// FP8 instruction reads its operand as two 16x16x64 halves (it takes 32
/// cycles with FP8 operands, 16 with FP4/FP6 ones).
///
/// Sources: AMD Instinct CDNA4 ISA reference guide, section 7.1 (operand and
/// CBSZ/BLGP format tables); AMD's ROCm blog "Matrix Core Programming on AMD
/// CDNA3 and CDNA4 architecture" (Sept. 2025), whose FP8 example for the
/// 32x32x64 sibling loads two runs of 16 k per lane, half of K apart; Triton's
/// AMD layout notes, which give both f8f6f4 shapes with FP8 operands two
/// groups of 16 (kGroup = 2, kWidth = 16). D uses the layout of every 16x16
/// MFMA: D[i][j] in lane 16 * floor(i / 4) + j, VGPR i % 4.
///
/// Only the pairing matters for an unscaled product: byte b of lane l of A
/// meets byte b of every lane l' of B with l' / 16 == l / 16. Any numbering of
/// k that A and B share gives the same D (docs and tests/test_mfma_layout.cpp
/// show why), so a kernel that loads A and B with the same function is right
/// even if a reader numbers the k inside one instruction differently.
struct Mfma16x16x128F8f6f4 {
  static constexpr int kM = 16;                            ///< Rows of A and D.
  static constexpr int kN = 16;                            ///< Columns of B and D.
  static constexpr int kK = 128;                           ///< Columns of A, rows of B.
  static constexpr int kOperandBytes = 32;                 ///< FP8 values of A (and of B) per lane.
  static constexpr int kRunBytes = 16;                     ///< Consecutive k held together by a lane.
  static constexpr int kRuns = kOperandBytes / kRunBytes;  ///< Runs per lane and operand.
  static constexpr int kAccumulators = 4;                  ///< FP32 values of D per lane.

  /// Element (i, k) of A held by `lane` in its operand byte `byte` (0..31).
  FP8GEMM_HOST_DEVICE static constexpr MatrixIndex a_element_of(int lane, int byte) {
    return {lane % 16, 64 * (byte / 16) + 16 * (lane / 16) + byte % 16};
  }
  /// Element (k, j) of B held by `lane` in its operand byte `byte` (0..31).
  FP8GEMM_HOST_DEVICE static constexpr MatrixIndex b_element_of(int lane, int byte) {
    return {64 * (byte / 16) + 16 * (lane / 16) + byte % 16, lane % 16};
  }
  /// Element (i, j) of D held by `lane` in its accumulator register `reg` (0..3).
  FP8GEMM_HOST_DEVICE static constexpr MatrixIndex d_element_of(int lane, int reg) {
    return {4 * (lane / 16) + reg, lane % 16};
  }
};

/// The CBSZ (A) or BLGP (B) format code of v_mfma_*_f8f6f4 for an FP8 format:
/// 0 = FP8 E4M3, 1 = BF8 E5M2 (CDNA4 ISA guide, section 7.1; the same codes
/// are the `cbsz`/`blgp` arguments of the clang builtin). The codes 2, 3, 4
/// select FP6 E2M3, BF6 E3M2 and FP4 E2M1, which this project does not use.
/// The FNUZ formats have no code (gfx950 has no FNUZ MFMA): -1.
FP8GEMM_HOST_DEVICE constexpr int f8f6f4_format_code(Fp8Format f) {
  return f == Fp8Format::kE4M3 ? 0 : f == Fp8Format::kE5M2 ? 1 : -1;
}

/// The E8M0 scale byte of 1.0, for the scale operands of the scaled MFMA
/// builtins (`__builtin_amdgcn_mfma_scale_*_f8f6f4`) where no scale is meant.
/// E8M0 is a bare exponent with bias 127: byte e stands for 2^(e - 127), so
/// 127 is 1.0 and 0 is 2^-127 (255 is NaN): the E8M0 scale type of the OCP
/// Microscaling Formats (MX) specification v1.0, which the scaled MFMA reads.
inline constexpr int kE8m0One = 127;

}  // namespace mfma
}  // namespace fp8gemm
