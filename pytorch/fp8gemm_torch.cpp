// torch.ops.fp8gemm.mm — a step of this project as a PyTorch operator, laid
// out like torch._scaled_mm so that a model can swap one for the other:
//
//   y = torch.ops.fp8gemm.mm(a, b, scale_a, scale_b, bias=None,
//                            activation="none", out_dtype=None, step="last")
//
//   a        M x K, torch.float8_e4m3fn or float8_e5m2, row-major (stride 1 along K)
//   b        K x N, the same formats, column-major (stride 1 along K): the
//            transpose of an N x K row-major tensor, as torch._scaled_mm wants
//            it, which is the project's K-major B
//   scale_a  float32 on a's device: 1 element (per tensor), M (per row: shape
//            (M, 1) or (M,)), or M x ceil(K/128) (1 x 128 groups; any strides,
//            so torch._scaled_mm's M-contiguous tensor too)
//   scale_b  float32: 1 element, N (per column of y: shape (1, N) or (N,)),
//            or ceil(K/128) x ceil(N/128) (128 x 128 blocks, indexed like b:
//            K blocks down, N blocks across; torch._scaled_mm's own tensor,
//            whose K blocks may be padded to a multiple of 4, is taken as is)
//   bias     None, or N values in bfloat16 or float32
//   activation  "none", "gelu" (tanh form) or "gelu_erf"
//   out_dtype   None (bfloat16), torch.bfloat16, float32, float8_e4m3fn or float8_e5m2
//   step     "last" (the highest-numbered step) or a step's number or folder ("07")
//
// It runs on the current CUDA stream of a's device and returns a new M x N
// tensor. What the step refuses (a layout, an alignment, a granularity) comes
// back as a Python RuntimeError carrying the step's own message. The scales
// follow docs/scales.md: A ~ codes(A) * scale_a, B ~ codes(B) * scale_b.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <torch/library.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/api/registry.h"

namespace {

using fp8gemm::Fp8Format;
using fp8gemm::ScaleGranularity;

constexpr int64_t kScaleBlock = 128;  // the K group of 1 x 128 and the block of 128 x 128 scales

int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

// Where a call's CPU time goes, summed over the calls since the last reset
// (launch_clock): the whole C++ body of mm, and the library's launch inside it
// (fp8gemm::run_step). A call's time from Python minus the body is torch's
// dispatch; the body minus the launch is this file's checks and the output's
// allocation. pytorch/bench_fp8gemm_op.py reads them in the same process as
// its calls. Two clock reads a call, about 50 ns.
struct CallClock {
  std::atomic<int64_t> calls{0}, body_ns{0}, launch_ns{0};
};
CallClock call_clock;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// [calls, ns in mm's body, ns in the library's launch] since the last reset.
std::vector<int64_t> launch_clock(bool reset) {
  std::vector<int64_t> sums = {call_clock.calls.load(), call_clock.body_ns.load(), call_clock.launch_ns.load()};
  if (reset) {
    call_clock.calls = 0;
    call_clock.body_ns = 0;
    call_clock.launch_ns = 0;
  }
  return sums;
}

Fp8Format format_of(const at::Tensor& t, const char* name) {
  if (t.scalar_type() == at::kFloat8_e4m3fn) return Fp8Format::kE4M3;
  if (t.scalar_type() == at::kFloat8_e5m2) return Fp8Format::kE5M2;
  TORCH_CHECK(false, "fp8gemm.mm: ", name, " must be torch.float8_e4m3fn or torch.float8_e5m2, not ", t.scalar_type());
}

// The granularity of an operand's scales from their shape. `rows` is M for A
// and N for B. B's 128 x 128 scales come indexed like b (K blocks x N
// blocks), as torch._scaled_mm takes them, its K blocks possibly padded to a
// multiple of 4 (cuBLASLt's requirement, which torch passes on).
ScaleGranularity granularity_of(const at::Tensor& scales, int64_t rows, int64_t k, bool is_b, const char* name) {
  const int64_t groups = ceil_div(k, kScaleBlock);
  if (scales.numel() == 1) return ScaleGranularity::kPerTensor;
  const bool vector = scales.dim() == 1 || (scales.dim() == 2 && (is_b ? scales.size(0) : scales.size(1)) == 1);
  if (vector && scales.numel() == rows) return ScaleGranularity::kPerRow;
  if (!is_b && scales.dim() == 2 && scales.size(0) == rows && scales.size(1) == groups) {
    return ScaleGranularity::kGroup1x128;
  }
  const int64_t padded_groups = ceil_div(groups, 4) * 4;
  if (is_b && scales.dim() == 2 && (scales.size(0) == groups || scales.size(0) == padded_groups) &&
      scales.size(1) == ceil_div(rows, kScaleBlock)) {
    return ScaleGranularity::kBlock128x128;
  }
  TORCH_CHECK(false, "fp8gemm.mm: ", name, " has shape ", scales.sizes(), "; expected 1 element, ",
              is_b ? "(1, N) or (N,)" : "(M, 1) or (M,)", " for one scale per ", is_b ? "column" : "row", ", or ",
              is_b ? "(ceil(K/128), ceil(N/128))" : "(M, ceil(K/128))", " = (", is_b ? groups : rows, ", ",
              is_b ? ceil_div(rows, kScaleBlock) : groups, ")",
              is_b ? " (its K blocks may be padded to a multiple of 4)" : "");
}

void check_cuda_tensor(const at::Tensor& t, const at::Tensor& a, const char* name) {
  TORCH_CHECK(t.is_cuda(), "fp8gemm.mm: ", name, " must be a CUDA tensor, not on ", t.device());
  TORCH_CHECK(t.device() == a.device(), "fp8gemm.mm: ", name, " is on ", t.device(), ", a on ", a.device());
}

fp8gemm::OutputType output_type_of(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16: return fp8gemm::OutputType::kBF16;
    case at::kFloat: return fp8gemm::OutputType::kFP32;
    case at::kFloat8_e4m3fn: return fp8gemm::OutputType::kE4M3;
    case at::kFloat8_e5m2: return fp8gemm::OutputType::kE5M2;
    default:
      TORCH_CHECK(false, "fp8gemm.mm: out_dtype must be torch.bfloat16, torch.float32, torch.float8_e4m3fn or ",
                  "torch.float8_e5m2, not ", t);
  }
}

fp8gemm::Activation activation_of(c10::string_view name) {
  for (fp8gemm::Activation a :
       {fp8gemm::Activation::kNone, fp8gemm::Activation::kGeluTanh, fp8gemm::Activation::kGeluErf}) {
    if (name == fp8gemm::activation_name(a)) return a;
  }
  TORCH_CHECK(false, "fp8gemm.mm: activation must be \"none\", \"gelu\" or \"gelu_erf\", not \"", name, "\"");
}

// One call's arguments for the library, checked: the GemmArgs (D, scales and
// bias pointing into the tensors kept here) and the step that runs them.
struct PreparedCall {
  const fp8gemm::StepInfo* step = nullptr;
  fp8gemm::GemmArgs args;
  at::Tensor d, sa, sb, bias_values;  // what args points into, alive as long as the call
};

PreparedCall prepare_call(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                          const at::Tensor& scale_b, const std::optional<at::Tensor>& bias, c10::string_view activation,
                          std::optional<at::ScalarType> out_dtype, c10::string_view step_name) {
  PreparedCall call;
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "fp8gemm.mm: a and b must be 2-D, got ", a.sizes(), " and ", b.sizes());
  check_cuda_tensor(a, a, "a");
  check_cuda_tensor(b, a, "b");
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  TORCH_CHECK(b.size(0) == k, "fp8gemm.mm: a is ", a.sizes(), " and b is ", b.sizes(), ": their K differ");
  // The layouts the steps read: A's rows and B's columns contiguous along K.
  TORCH_CHECK(a.stride(1) == 1 || k == 1, "fp8gemm.mm: a must be row-major (stride 1 along K), got strides ",
              a.strides());
  TORCH_CHECK(b.stride(0) == 1 || k == 1,
              "fp8gemm.mm: b must be column-major (stride 1 along K: b = w.t() for a row-major N x K w), got strides ",
              b.strides());
  const Fp8Format a_format = format_of(a, "a"), b_format = format_of(b, "b");

  if (step_name == "last") {
    const std::vector<fp8gemm::StepInfo>& steps = fp8gemm::registered_steps();
    TORCH_CHECK(!steps.empty(), "fp8gemm.mm: the library registers no step");
    call.step = &steps.back();
  } else {
    call.step = fp8gemm::find_step(std::string(step_name));
    TORCH_CHECK(call.step != nullptr, "fp8gemm.mm: no step \"", step_name, "\" (see fp8gemm --list)");
  }

  const at::ScalarType out_scalar_type = out_dtype.value_or(at::kBFloat16);
  const fp8gemm::OutputType d_type = output_type_of(out_scalar_type);
  call.d = at::empty({m, n}, a.options().dtype(out_scalar_type));

  fp8gemm::GemmArgs& args = call.args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = static_cast<const uint8_t*>(a.data_ptr());
  args.lda = k == 1 ? 1 : a.stride(0);
  args.a_format = a_format;
  args.b = static_cast<const uint8_t*>(b.data_ptr());
  args.ldb = k == 1 ? 1 : b.stride(1);
  args.b_format = b_format;
  args.d = call.d.data_ptr();
  args.ldd = n;
  args.d_type = d_type;

  // Scales: always from device memory, contiguous float32 (a copy where they are not).
  call.sa = scale_a;
  call.sb = scale_b;
  for (auto [s, name] : {std::pair<at::Tensor*, const char*>{&call.sa, "scale_a"}, {&call.sb, "scale_b"}}) {
    check_cuda_tensor(*s, a, name);
    TORCH_CHECK(s->scalar_type() == at::kFloat, "fp8gemm.mm: ", name, " must be float32, not ", s->scalar_type());
    *s = s->contiguous();
  }
  args.a_scale_granularity = granularity_of(call.sa, m, k, /*is_b=*/false, "scale_a");
  args.b_scale_granularity = granularity_of(call.sb, n, k, /*is_b=*/true, "scale_b");
  if (args.b_scale_granularity == ScaleGranularity::kBlock128x128) {
    // The steps read B's blocks as docs/scales.md lays them out, N blocks x K
    // blocks row-major: the transpose of torch's, without its padding.
    call.sb = call.sb.narrow(0, 0, ceil_div(k, kScaleBlock)).t().contiguous();
  }
  args.a_scales = call.sa.data_ptr<float>();
  args.b_scales = call.sb.data_ptr<float>();

  if (bias.has_value()) {
    call.bias_values = bias->contiguous();
    check_cuda_tensor(call.bias_values, a, "bias");
    TORCH_CHECK(call.bias_values.numel() == n, "fp8gemm.mm: bias must have N = ", n, " values, has ",
                call.bias_values.numel());
    TORCH_CHECK(call.bias_values.scalar_type() == at::kBFloat16 || call.bias_values.scalar_type() == at::kFloat,
                "fp8gemm.mm: bias must be bfloat16 or float32, not ", call.bias_values.scalar_type());
    args.bias = call.bias_values.data_ptr();
    args.bias_type =
        call.bias_values.scalar_type() == at::kBFloat16 ? fp8gemm::BiasType::kBF16 : fp8gemm::BiasType::kFP32;
  }
  args.activation = activation_of(activation);
  return call;
}

void check_status(const PreparedCall& call, const fp8gemm::Status& status) {
  TORCH_CHECK(status.ok(), "fp8gemm.mm: ", call.step->folder, ": ", fp8gemm::status_code_name(status.code), ": ",
              status.message);
}

at::Tensor mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a, const at::Tensor& scale_b,
              const std::optional<at::Tensor>& bias, c10::string_view activation,
              std::optional<at::ScalarType> out_dtype, c10::string_view step_name) {
  const int64_t body_start = now_ns();
  PreparedCall call = prepare_call(a, b, scale_a, scale_b, bias, activation, out_dtype, step_name);
  const c10::cuda::CUDAGuard guard(a.device());
  call.args.stream = at::cuda::getCurrentCUDAStream(a.device().index()).stream();
  const int64_t launch_start = now_ns();
  const fp8gemm::Status status = fp8gemm::run_step(*call.step, call.args);
  const int64_t launch_end = now_ns();
  check_status(call, status);
  call_clock.calls += 1;
  call_clock.launch_ns += launch_end - launch_start;
  call_clock.body_ns += now_ns() - body_start;
  return call.d;
}

#define FP8GEMM_TORCH_CUDA_CHECK(call)                                                            \
  do {                                                                                            \
    const cudaError_t fp8gemm_err = (call);                                                       \
    TORCH_CHECK(fp8gemm_err == cudaSuccess, #call, " failed: ", cudaGetErrorString(fp8gemm_err)); \
  } while (0)

// For the benchmark: the C++ driver's measurement of mm's launch, in this
// process. With the arguments mm would pass (per-tensor or any other scales,
// no bias, BF16 out) and D allocated once, each of `launches` launches is
// timed as fp8gemm_bench times one (LaunchTimer::launch_once in
// common/harness/timer.cu): `flush` written first (so the GPU is busy while
// the CPU enqueues the rest), a CUDA event, the library's launch straight
// from C++, a CUDA event, a wait. Returns the device time of each, in us.
// Called between timed calls of mm from Python, it compares the two on the
// same tensors, GPU and clocks, without another process in between.
std::vector<double> driver_launch_us(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                                     const at::Tensor& scale_b, at::Tensor& flush, int64_t launches,
                                     c10::string_view step_name) {
  PreparedCall call = prepare_call(a, b, scale_a, scale_b, std::nullopt, "none", std::nullopt, step_name);
  check_cuda_tensor(flush, a, "flush");
  const c10::cuda::CUDAGuard guard(a.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(a.device().index()).stream();
  call.args.stream = stream;
  cudaEvent_t start = nullptr, stop = nullptr;
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventCreate(&start));
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> times;
  for (int64_t i = 0; i < launches; ++i) {
    FP8GEMM_TORCH_CUDA_CHECK(cudaMemsetAsync(flush.data_ptr(), 0, flush.nbytes(), stream));
    FP8GEMM_TORCH_CUDA_CHECK(cudaEventRecord(start, stream));
    check_status(call, fp8gemm::run_step(*call.step, call.args));
    FP8GEMM_TORCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    FP8GEMM_TORCH_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    FP8GEMM_TORCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return times;
}

// For the benchmark: `launches` launches of mm's GEMM straight from C++, one
// after another with nothing between them (no flush, no wait), and events
// around them all: the device time per launch, in us, where the GPU never
// waits for the CPU unless a launch costs the CPU more than the kernel takes.
double driver_back_to_back_us(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                              const at::Tensor& scale_b, int64_t launches, c10::string_view step_name) {
  PreparedCall call = prepare_call(a, b, scale_a, scale_b, std::nullopt, "none", std::nullopt, step_name);
  const c10::cuda::CUDAGuard guard(a.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(a.device().index()).stream();
  call.args.stream = stream;
  TORCH_CHECK(launches > 0, "fp8gemm.driver_back_to_back_us: launches must be positive");
  cudaEvent_t start = nullptr, stop = nullptr;
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventCreate(&start));
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventCreate(&stop));
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventRecord(start, stream));
  for (int64_t i = 0; i < launches; ++i) check_status(call, fp8gemm::run_step(*call.step, call.args));
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventRecord(stop, stream));
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  FP8GEMM_TORCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms * 1e3 / static_cast<double>(launches);
}

}  // namespace

TORCH_LIBRARY(fp8gemm, m) {
  m.def(
      "mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, *, Tensor? bias=None, str activation=\"none\", "
      "ScalarType? out_dtype=None, str step=\"last\") -> Tensor");
  // For benchmarks: [calls, ns in mm's C++ body, ns in the library's launch]
  // summed since the last reset (see CallClock).
  m.def("launch_clock(bool reset=False) -> int[]", &launch_clock);
  // For benchmarks: the C++ driver's timing of mm's launch in this process
  // (driver_launch_us), and back-to-back launches from C++ (driver_back_to_back_us).
  m.def(
      "driver_launch_us(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor(f!) flush, int launches, "
      "str step=\"last\") -> float[]");
  m.def(
      "driver_back_to_back_us(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, int launches, "
      "str step=\"last\") -> float");
}

TORCH_LIBRARY_IMPL(fp8gemm, CUDA, m) {
  m.impl("mm", &mm);
  m.impl("driver_launch_us", &driver_launch_us);
  m.impl("driver_back_to_back_us", &driver_back_to_back_us);
}
