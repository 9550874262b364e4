/// @file grouped_problem.h
/// @brief A grouped GEMM problem on the GPU (common/api/grouped.h): one A for
///        all experts' rows, one B per expert, laid out in the contiguous or
///        masked layout with the index or count array, room for D inside a
///        guard band, and the arguments that run a grouped step on it, or one
///        plain GEMM per expert (the cuBLASLt loop the benchmark compares
///        with). The tests take each expert's operands back to the host for
///        the FP64 reference.
///
/// How the operands are made, and why:
///
/// - **A** is one matrix (the tokens routed to the experts), so a per-tensor A
///   scale is one scale for all experts: the valid rows of every expert are
///   drawn from N(0, 1) as one matrix (expert 0's rows, then expert 1's, ...),
///   quantized together on the GPU at A's granularity, then copied into each
///   expert's rows of the layout (with their per-row or 1 x 128 scales).
/// - **B** is per expert (its weights): expert g's N x K are drawn and
///   quantized on their own, so per-tensor B scales differ per expert. They
///   go to the kernel as GroupedGemmArgs describes: per tensor, `experts`
///   floats in device memory (gemm.b_scales, granularity kPerTensor,
///   b_scale = 1); per row, experts x N; 128 x 128, experts x ceil(N / 128) x
///   ceil(K / 128), one expert's plain layout after another.
/// - The rows that are not valid (a contiguous segment's padding, a masked
///   expert's rows past its count) hold the FP8 NaN code in A (0x7F for e4m3
///   and e5m2, 0x80 for the FNUZ formats) and scale 1 where a per-row or
///   1 x 128 scale exists, so that a kernel that multiplies them into a stored
///   element writes NaN there.
/// - D is filled with kDPoisonByte (NaN in every output type) before a
///   launch, inside a guard band of kDGuardByte: a test checks that the rows
///   that must not be written still hold the poison byte for byte
///   (download_d_bytes) and that nothing outside D changed (d_guard_untouched).
///
/// Everything is generated and quantized on the GPU (no host loop over the
/// elements), so the benchmark's 4 x 8192 x 4096 x 7168 is made in well under
/// a second of GPU time. A's 128 x 128 scales are refused (std::invalid_argument):
/// the masked layout's experts do not start on a 128-row block, and no step
/// takes them for A.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/grouped.h"
#include "common/fp8/quantize.h"
#include "common/harness/problem.h"

namespace fp8gemm {

/// The sizes of a grouped problem.
struct GroupedShape {
  GroupedLayout layout = GroupedLayout::kContiguous;  ///< Which rows of A and D are whose.
  /// Valid rows of each expert (its tokens): one entry per expert, each >= 0.
  std::vector<int64_t> expert_rows;
  int64_t n = 0;  ///< Columns of D, rows of each expert's B.
  int64_t k = 0;  ///< Reduction length.
  /// Masked: the rows each expert owns in A and D (>= every expert_rows
  /// entry); 0: the largest entry (at least 1). Contiguous: unused (each
  /// segment is its expert's rows padded to kGroupedRowAlignment).
  int64_t capacity = 0;
};

/// "<G>x<M>x<N>x<K>/<layout>" when all G experts have M rows (the
/// benchmark's names, e.g. "4x8192x4096x7168/contiguous"); for ragged rows,
/// "<rows,rows,...>x<N>x<K>/<layout>". A masked capacity set above the
/// largest expert adds "_capacity<C>".
std::string grouped_shape_name(const GroupedShape& shape);

/// G experts of m rows each: the benchmark's shapes (capacity m when masked).
GroupedShape uniform_grouped_shape(GroupedLayout layout, int experts, int64_t m, int64_t n, int64_t k);

/// Operands given by the caller instead of drawn (the exact-arithmetic
/// tests): quantized as GroupedProblem's own would be, in their plain layouts.
struct GroupedOperands {
  /// The valid rows of all experts, expert 0's first: sum(expert_rows) x K,
  /// at the options' A granularity and format (one scale for all of them
  /// per tensor). Its rows are copied into each expert's rows of the layout.
  QuantizedMatrix a;
  /// One N x K matrix per expert, at the options' B granularity and format.
  std::vector<QuantizedMatrix> b;
};

/// A grouped problem on the GPU (see the file's comment). Every member
/// throws (std::invalid_argument for a bad shape or operands, CudaError for
/// a runtime failure); the device work runs on the problem's stream.
class GroupedProblem {
 public:
  /// Byte written over D before a launch: 0xFF is NaN in BF16, FP32, e4m3
  /// and e5m2, so an element that is never written reads as NaN.
  static constexpr uint8_t kDPoisonByte = 0xFF;
  /// Byte written over the guard band before and after D.
  static constexpr uint8_t kDGuardByte = 0xA5;

  /// Draws, quantizes and lays out the operands (see the file's comment):
  /// A's values from options.seed, expert g's B from options.seed and g,
  /// one bias (options.bias) for all experts, an FP8 D's d_scale
  /// fp8_output_scale(K); D poisoned.
  GroupedProblem(const GroupedShape& shape, const ProblemOptions& options, cudaStream_t stream);
  /// The same with the caller's operands, laid out as drawn ones would be
  /// (their formats and granularities must be the options').
  GroupedProblem(const GroupedShape& shape, const ProblemOptions& options, const GroupedOperands& operands,
                 cudaStream_t stream);

  /// The shape; a masked shape's capacity is the one used (never 0).
  const GroupedShape& shape() const { return shape_; }
  /// The options the problem was made with.
  const ProblemOptions& options() const { return options_; }
  /// G: how many experts.
  int experts() const { return static_cast<int>(shape_.expert_rows.size()); }
  /// Valid rows of expert g.
  int64_t expert_rows(int g) const { return shape_.expert_rows[static_cast<size_t>(g)]; }
  /// Rows of A and D (gemm.m): the padded segments, or experts x capacity.
  int64_t rows() const { return rows_; }
  /// The rows computed: the sum of expert_rows.
  int64_t valid_rows() const { return valid_rows_; }
  /// The row of A and D where expert g's rows start.
  int64_t first_row(int g) const { return first_row_[static_cast<size_t>(g)]; }
  /// For each of the rows() rows of A and D, the expert whose valid row it
  /// is, or -1 for a row that must never be written (padding, past a count).
  /// For the contiguous layout this is m_indices.
  const std::vector<int>& row_experts() const { return row_experts_; }

  /// The grouped GEMM's arguments: gemm.m = rows(), tight leading
  /// dimensions, A's scales (per tensor: the host float a_scale; otherwise
  /// device scales of all rows()), B's scales on the device (per tensor:
  /// `experts` floats, b_scale = 1), the bias, activation, d_scale and d_amax
  /// of the options, m_indices or masked_counts (= expert_rows) and capacity,
  /// check_on_host = true, fast_accumulation false, split_k 0.
  GroupedGemmArgs args() const;

  /// Expert g's GEMM alone, as a plain GemmArgs over the grouped buffers:
  /// m = expert_rows(g) (0 for an empty expert: not a GEMM to run), its rows
  /// of A (from first_row(g), lda K), its B, its rows of D (ldd N); its
  /// scales as host floats per tensor (the one A scale, expert g's B scale),
  /// otherwise pointers into the grouped scale arrays (A per row: + first
  /// row; 1 x 128: + first row x ceil(K / 128); B per row: + g N; 128 x 128:
  /// + g ceil(N / 128) ceil(K / 128)); the bias, activation and d_scale;
  /// an FP8 D's d_amax is a slot of expert g's own (download_expert_d_amax),
  /// since each launch writes the amax of its own rows only.
  GemmArgs expert_args(int g) const;
  /// The per-tensor A scale in device memory (where cuBLASLt reads a scale);
  /// for another granularity, expert g's A scales as in expert_args(g).
  const float* expert_a_scale_on_device(int g) const;
  /// Expert g's per-tensor B scale in device memory; for another
  /// granularity, its B scales as in expert_args(g).
  const float* expert_b_scale_on_device(int g) const;

  /// The per-tensor A scale (1 for another granularity).
  float a_scale() const { return a_scale_host_; }
  /// Expert g's per-tensor B scale (1 for another granularity).
  float expert_b_scale(int g) const { return b_scale_host_[static_cast<size_t>(g)]; }
  /// The bias as the kernel reads it (BF16 values exactly as rounded), N
  /// floats; empty without a bias.
  const std::vector<float>& bias() const { return bias_host_; }
  /// D's dequantization scale: fp8_output_scale(K) for an FP8 D, else 1.
  float d_scale() const { return d_scale_; }

  /// Expert g's rows of A as the kernel reads them (codes and scales at A's
  /// granularity, in the plain layout of expert_rows(g) rows: the per-tensor
  /// scale, or the rows' own scales), for the FP64 reference; 0 rows for an
  /// empty expert.
  QuantizedMatrix download_expert_a(int g) const;
  /// Expert g's B as the kernel reads it (N x K codes, its scales in the
  /// plain layout of N rows), for the FP64 reference.
  QuantizedMatrix download_expert_b(int g) const;

  /// Fills D with kDPoisonByte and its guard band with kDGuardByte, and every
  /// d_amax slot with NaN.
  void poison_d() const;
  /// All rows() x N elements of D as floats (FP8 codes decoded times d_scale),
  /// after the stream has finished.
  std::vector<float> download_d() const;
  /// D's bytes, rows() x N elements of the output type, row-major (ldd = N):
  /// to check that a row holds exactly kDPoisonByte.
  std::vector<uint8_t> download_d_bytes() const;
  /// True when every byte of the guard band before and after D still holds
  /// kDGuardByte; otherwise false, and `where` (if given) names the first
  /// changed byte, as an offset from D's first byte.
  bool d_guard_untouched(std::string* where = nullptr) const;
  /// What the grouped launch wrote to d_amax (FP8 D), NaN for another output
  /// type or when nothing wrote it since poison_d().
  float download_d_amax() const;
  /// What a launch of expert_args(g) wrote to its d_amax slot, as download_d_amax().
  float download_expert_d_amax(int g) const;

 private:
  void make_layout(const GroupedShape& shape);
  void allocate();
  void scatter_a(const uint8_t* codes, const float* scales);
  void draw_operands();
  void upload_operands(const GroupedOperands& operands);
  void read_b_scales();
  void make_bias();
  void* d() const { return d_buffer_.get() + d_guard_bytes_; }
  int64_t d_bytes() const { return rows_ * shape_.n * output_bytes(options_.d_type); }
  int64_t b_scales_per_expert() const { return scale_count(shape_.n, shape_.k, options_.b_scale_granularity); }
  int64_t a_scales_per_row() const;

  GroupedShape shape_;
  ProblemOptions options_;
  cudaStream_t stream_;
  int64_t rows_ = 0, valid_rows_ = 0;
  std::vector<int64_t> first_row_;
  std::vector<int> row_experts_;
  DeviceBuffer<uint8_t> a_, b_;              // rows() x K and experts x N x K codes
  DeviceBuffer<float> a_scales_, b_scales_;  // in GroupedGemmArgs' layouts
  float a_scale_host_ = 1.0f;                // per-tensor A: its scale
  std::vector<float> b_scale_host_;          // per-tensor B: each expert's scale; else 1s
  DeviceBuffer<uint8_t> d_buffer_;           // guard, D, guard
  int64_t d_guard_bytes_ = 0;                // bytes of guard before and after D
  DeviceBuffer<float> d_amax_;               // FP8 D: [0] the grouped launch's, [1 + g] expert g's
  DeviceBuffer<uint8_t> bias_;               // N values of bias_type, or empty
  std::vector<float> bias_host_;
  float d_scale_ = 1.0f;
  DeviceBuffer<int> m_indices_, counts_;  // contiguous: rows() ints; masked: experts ints
};

}  // namespace fp8gemm
