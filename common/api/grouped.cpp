#include "common/api/grouped.h"

#include <cuda_runtime_api.h>

#include <limits>
#include <sstream>
#include <vector>

#include "common/device/grouped_scheduler.h"

namespace fp8gemm {

namespace {

Status invalid(const std::string& message) { return Status::error(StatusCode::kInvalidArgument, message); }

}  // namespace

Status validate_grouped_args(const GroupedGemmArgs& args) {
  std::ostringstream msg;
  if (args.experts < 1) {
    msg << "experts >= 1 required, got " << args.experts;
    return invalid(msg.str());
  }
  if (args.layout != GroupedLayout::kContiguous && args.layout != GroupedLayout::kMasked) {
    msg << "layout must be contiguous or masked, got " << static_cast<int>(args.layout);
    return invalid(msg.str());
  }
  const GemmArgs& g = args.gemm;
  if (args.layout == GroupedLayout::kContiguous) {
    if (args.m_indices == nullptr) return invalid("the contiguous layout needs m_indices (the expert of each row)");
    if (g.m < 1 || g.m % kGroupedRowAlignment != 0) {
      msg << "the contiguous layout's rows (M) must be a multiple of " << kGroupedRowAlignment
          << " (each expert's segment padded to it), got M = " << g.m;
      return invalid(msg.str());
    }
  } else {
    if (args.masked_counts == nullptr) return invalid("the masked layout needs masked_counts (valid rows per expert)");
    if (args.capacity < 1) {
      msg << "the masked layout's capacity must be >= 1, got " << args.capacity;
      return invalid(msg.str());
    }
    if (g.m != args.capacity * args.experts) {
      msg << "the masked layout's M must be experts * capacity = " << args.experts << " * " << args.capacity << " = "
          << args.capacity * args.experts << ", got M = " << g.m;
      return invalid(msg.str());
    }
  }
  if (g.split_k > 1) {
    msg << "a grouped GEMM does not split K: split_k must be 0 or 1, got " << g.split_k;
    return invalid(msg.str());
  }
  // The plain contract, then B's extent as one matrix of experts * N rows
  // (checked alone: D still has N columns).
  if (g.n > std::numeric_limits<int64_t>::max() / args.experts)
    return invalid("experts * N overflows a 64-bit row count");
  Status s = validate_gemm_args(g);
  if (!s.ok()) return s;
  GemmArgs stacked_b = g;
  stacked_b.n = g.n * args.experts;
  stacked_b.m = 1;
  stacked_b.ldd = stacked_b.n;
  return validate_gemm_args(stacked_b);
}

Status check_grouped_device_data(const GroupedGemmArgs& args, int64_t* valid_rows) {
  std::ostringstream msg;
  const cudaStream_t stream = args.gemm.stream;
  if (args.layout == GroupedLayout::kContiguous) {
    std::vector<int> indices(static_cast<size_t>(args.gemm.m));
    if (cudaMemcpyAsync(indices.data(), args.m_indices, indices.size() * sizeof(int), cudaMemcpyDeviceToHost, stream) !=
            cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
      cudaGetLastError();
      return Status::error(StatusCode::kRuntimeError, "copying m_indices to the host failed");
    }
    const int64_t bad = first_bad_contiguous_row(indices.data(), args.gemm.m, kGroupedRowAlignment, args.experts);
    if (bad >= 0) {
      msg << "m_indices is not a contiguous layout at row " << bad << " (m_indices[" << bad
          << "] = " << indices[static_cast<size_t>(bad)] << "): each block of " << kGroupedRowAlignment
          << " rows must hold one expert in [0, " << args.experts << ") followed only by padding (-1)";
      return invalid(msg.str());
    }
    if (valid_rows != nullptr) {
      *valid_rows = 0;
      for (int e : indices) *valid_rows += e >= 0 ? 1 : 0;
    }
    return Status::success();
  }
  std::vector<int> counts(static_cast<size_t>(args.experts));
  if (cudaMemcpyAsync(counts.data(), args.masked_counts, counts.size() * sizeof(int), cudaMemcpyDeviceToHost, stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, "copying masked_counts to the host failed");
  }
  int64_t rows = 0;
  for (int g = 0; g < args.experts; ++g) {
    if (counts[g] < 0 || counts[g] > args.capacity) {
      msg << "masked_counts[" << g << "] = " << counts[g] << " is outside [0, capacity = " << args.capacity << "]";
      return invalid(msg.str());
    }
    rows += counts[g];
  }
  if (valid_rows != nullptr) *valid_rows = rows;
  return Status::success();
}

}  // namespace fp8gemm
