#include "bench/unfused_epilogue.h"

#include <algorithm>
#include <sstream>

#include "common/device/amax.cuh"
#include "common/device/epilogue.h"
#include "common/device/launch.h"
#include "common/device/output.h"

namespace fp8gemm::bench {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kColumnsPerThread = 4;
constexpr int64_t kTileColumns = int64_t{kThreads} * kColumnsPerThread;  // one tile: this many columns of one row
constexpr int kBlocksPerSm = 2048 / kThreads;                            // a full SM's worth of threads
constexpr int kAmaxBarrier = 1;                                          // the kernel's only named barrier

/// Tiles of kTileColumns columns of one row, tile after tile across the
/// grid: a thread reads kColumnsPerThread elements a tile, a warp's reads
/// coalesced. The branches on the epilogue's options are the same for every
/// thread, so they cost a few instructions, not divergence, in a kernel that
/// waits on memory.
__global__ void __launch_bounds__(kThreads)
    epilogue_kernel(const float* __restrict__ sum, int64_t ld_sum, int64_t m, int64_t n, const void* bias,
                    BiasType bias_type, Activation activation, void* d, int64_t ldd, OutputType d_type, float d_scale,
                    float* d_amax) {
  const int64_t tiles_per_row = (n + kTileColumns - 1) / kTileColumns;
  float amax = 0.0f;
  for (int64_t tile = blockIdx.x; tile < m * tiles_per_row; tile += gridDim.x) {
    const int64_t row = tile / tiles_per_row;
    const int64_t first = (tile - row * tiles_per_row) * kTileColumns + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kColumnsPerThread; ++i) {
      const int64_t col = first + int64_t{i} * kThreads;
      if (col >= n) break;
      const float bias_value = bias != nullptr ? load_bias(bias, col, bias_type) : 0.0f;
      const float y = epilogue_value(sum[row * ld_sum + col], bias_value, activation);
      amax = fmaxf(amax, fabsf(y));
      store_epilogue_output(d, row * ldd + col, d_type, y, d_scale);
    }
  }
  if (d_amax == nullptr) return;  // the same for the whole block: no thread waits at the barrier alone
  __shared__ float warp_amax[kWarps];
  block_amax_to_global(amax, warp_amax, kWarps, kAmaxBarrier, d_amax);
}

}  // namespace

GemmArgs plain_gemm_args(const GemmArgs& args, float* sum) {
  GemmArgs plain = args;
  plain.d = sum;
  plain.ldd = args.n;
  plain.d_type = OutputType::kFP32;
  plain.bias = nullptr;
  plain.activation = Activation::kNone;
  plain.d_scale = 1.0f;
  plain.d_amax = nullptr;
  return plain;
}

Status launch_epilogue_kernel(const float* sum, int64_t ld_sum, const GemmArgs& args, int blocks) {
  if (args.d_amax != nullptr) FP8GEMM_CUDA_CHECK(cudaMemsetAsync(args.d_amax, 0, sizeof(float), args.stream));
  const int64_t tiles = args.m * ((args.n + kTileColumns - 1) / kTileColumns);
  const int grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tiles, blocks)));
  epilogue_kernel<<<grid, kThreads, 0, args.stream>>>(sum, ld_sum, args.m, args.n, args.bias, args.bias_type,
                                                      args.activation, args.d, args.ldd, args.d_type, args.d_scale,
                                                      args.d_amax);
  return status_from_launch("unfused epilogue kernel");
}

UnfusedEpilogueGemm::UnfusedEpilogueGemm(const std::vector<const StepInfo*>& steps, const GemmArgs& args)
    : args_(args) {
  status_ = validate_gemm_args(args);
  if (!status_.ok()) return;
  sum_ = DeviceBuffer<float>(args.m * args.n);
  plain_args_ = plain_gemm_args(args, sum_.get());
  int device = 0, sm_count = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  blocks_ = sm_count * kBlocksPerSm;

  std::vector<const StepInfo*> by_number = steps;
  std::sort(by_number.begin(), by_number.end(),
            [](const StepInfo* x, const StepInfo* y) { return x->number > y->number; });
  const int compute_capability = cuda_compute_capability();
  auto version = [](int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); };
  std::string first_refusal;  // the highest-numbered step's, which says most about what is missing
  for (const StepInfo* step : by_number) {
    Status accepted = check_step_constraints(*step, plain_args_);
    const int needed = step->required_compute_capability;
    if (accepted.ok() && needed != 0 && needed != compute_capability) {
      accepted = Status::error(StatusCode::kNotSupported, step->folder + ": needs a GPU of compute capability " +
                                                              version(needed) + ", this one is " +
                                                              version(compute_capability));
    }
    if (accepted.ok()) {
      step_ = step;
      return;
    }
    if (first_refusal.empty()) first_refusal = accepted.message;
  }
  std::ostringstream msg;
  msg << "unfused: no step computes the plain GEMM this case needs (scales A "
      << granularity_name(args.a_scale_granularity) << ", B " << granularity_name(args.b_scale_granularity)
      << ", FP32 D)";
  if (!first_refusal.empty()) msg << "; the highest-numbered says " << first_refusal;
  status_ = Status::error(StatusCode::kNotSupported, msg.str());
}

Status UnfusedEpilogueGemm::launch() const {
  if (!status_.ok()) return status_;
  const Status gemm = run_step(*step_, plain_args_);
  if (!gemm.ok()) return gemm;
  return launch_epilogue_kernel(sum_.get(), args_.n, args_, blocks_);
}

}  // namespace fp8gemm::bench
