/// @file grouped.h
/// @brief The grouped GEMM of a mixture-of-experts layer: many GEMMs that
///        share N, K and everything but their rows, one per expert, run as
///        one launch. The layouts, the arguments, and the checks every
///        grouped step shares (steps/12_grouped_moe/README.md).
///
/// Expert g multiplies its rows of A by its own B (N x K, K-major, expert
/// g's rows g * N .. g * N + N - 1 of the stacked B) into its rows of D, with
/// the epilogue of a plain GEMM (GemmArgs). Which rows are expert g's depends
/// on the layout:
///
/// - **contiguous** (training, prefill): the experts' rows one segment after
///   another along M, each segment padded to a multiple of
///   kGroupedRowAlignment rows; `m_indices[row]` (device memory, gemm.m
///   ints) names the expert of each row, -1 for a padding row. Rows of
///   padding are neither computed nor written.
/// - **masked** (decode under CUDA graphs, where the host cannot know how
///   many tokens each expert got): expert g owns rows g * capacity ..
///   g * capacity + capacity - 1 of A and D, of which the first
///   `masked_counts[g]` (device memory) are valid. Rows past the count are
///   neither computed nor written.
///
/// @code
///   contiguous                      masked (capacity 4)
///   row  m_indices                  row  expert  valid (counts = {3, 0, 4})
///    0     0   expert 0's segment    0     0       yes
///   ..     0                         2     0       yes
///  127    -1   padding               3     0       no: never written
///  128     1   expert 1's segment    4-7   1       no: never written
///   ..                               8-11  2       yes
/// @endcode
#pragma once

#include <cstdint>
#include <string>

#include "common/api/gemm.h"

namespace fp8gemm {

/// How the experts' rows are laid out in A and D.
enum class GroupedLayout : uint8_t {
  kContiguous = 0,  ///< Segments along M, padded to kGroupedRowAlignment, named by m_indices.
  kMasked = 1,      ///< `capacity` rows per expert, the first masked_counts[g] valid.
};

/// Short name of a layout ("contiguous", "masked"): also the last part of a
/// grouped benchmark's name.
inline const char* grouped_layout_name(GroupedLayout layout) {
  return layout == GroupedLayout::kContiguous ? "contiguous" : "masked";
}

/// The contiguous layout's segments are padded to this many rows: the row
/// tile of the grouped kernels, so that no tile holds rows of two experts
/// (DeepGEMM's alignment for the same layout).
inline constexpr int64_t kGroupedRowAlignment = 128;

/// Arguments of one grouped GEMM.
struct GroupedGemmArgs {
  GroupedLayout layout = GroupedLayout::kContiguous;  ///< Which rows are whose.
  int experts = 1;                                    ///< G >= 1: how many GEMMs.
  /// What the experts share, as for a plain GEMM (common/api/gemm.h), with:
  /// - `m`: all rows of A and D (contiguous: the padded segments, a multiple
  ///   of kGroupedRowAlignment; masked: experts * capacity);
  /// - `b`: the experts' B stacked, experts * N rows of ldb elements;
  /// - B's scales per expert, one plain layout after another: per tensor,
  ///   `experts` floats (or the host b_scale, the same for every expert); per
  ///   row, experts x N; 128 x 128, experts x ceil(N / 128) x ceil(K / 128).
  ///   A's scales as for a plain GEMM of gemm.m rows;
  /// - `split_k`: 0 or 1 (the grouped kernels do not split K).
  GemmArgs gemm;
  /// Contiguous: gemm.m ints in device memory, the expert of each row in [0,
  /// experts) or -1 for padding; every block of kGroupedRowAlignment rows
  /// holds one expert's rows followed only by padding, or padding alone.
  const int* m_indices = nullptr;
  /// Masked: `experts` ints in device memory, the valid rows of each expert,
  /// 0 .. capacity.
  const int* masked_counts = nullptr;
  /// Masked: the rows each expert owns in A and D (>= 1).
  int64_t capacity = 0;
  /// Check m_indices or masked_counts before the launch: they are copied to
  /// the host (the stream is synchronized) and a broken layout, or a count
  /// below 0 or above capacity, is refused naming the row or expert. false:
  /// nothing is copied (a launch that a CUDA graph can capture); the kernel
  /// then takes an expert index outside [0, experts) for padding and clamps
  /// each count into [0, capacity], so it never writes outside an expert's
  /// rows, but a broken layout gives a wrong D without an error.
  bool check_on_host = true;
};

/// Checks the grouped contract on the host, without reading device memory:
/// experts >= 1, a valid layout, the index or count pointer the layout needs,
/// gemm.m a multiple of kGroupedRowAlignment (contiguous) or experts *
/// capacity (masked), split_k 0 or 1, and validate_gemm_args(gemm) with the
/// stacked B's experts * N rows. kInvalidArgument naming the first broken rule.
Status validate_grouped_args(const GroupedGemmArgs& args);

/// The device checks of check_on_host: copies m_indices or masked_counts to
/// the host (synchronizing gemm.stream) and refuses a broken layout
/// (first_bad_contiguous_row in common/device/grouped_scheduler.h) or a count
/// outside [0, capacity], with kInvalidArgument naming the row or expert.
/// `valid_rows`, if not null, gets the rows that are computed (the sum of the
/// counts, or the rows that are not padding).
Status check_grouped_device_data(const GroupedGemmArgs& args, int64_t* valid_rows = nullptr);

/// Floating-point operations of a grouped GEMM with `valid_rows` rows computed.
inline double grouped_flops(int64_t valid_rows, int64_t n, int64_t k) { return gemm_flops(valid_rows, n, k); }

}  // namespace fp8gemm
