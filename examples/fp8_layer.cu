// An FP8 layer end to end, the way a DeepSeek-V3-like model runs one:
//
//   1. X, the layer's BF16 activations (M x K), is on the GPU. It is quantized
//      there, per token, in groups of 1 x 128 along K (quantize_on_gpu). The
//      shared module takes FP32 only, so X is first widened to FP32 on the GPU
//      (exact: every BF16 value is a float).
//   2. The weights W1 (N1 x K) and W2 (N2 x N1) were quantized once, offline,
//      in 128 x 128 blocks, as a checkpoint ships them (quantize on the host).
//   3. GEMM 1, step 07: H = fp8_e4m3(GELU(X W1^T + b1) / d_scale), with a BF16
//      bias b1, GELU's tanh form, and amax = max |GELU(X W1^T + b1)| over H,
//      all in the GEMM's epilogue.
//   4. GEMM 2, step 07: Y = (H d_scale) W2^T in BF16, H's per-tensor scale
//      read from device memory, as the amax that sets it never has to leave
//      the GPU in a real model.
//
// H's d_scale is chosen by delayed scaling: from the amax that the previous
// run reported (see delayed_d_scale). Here the first GEMM runs twice, first
// with a guess, then with the d_scale its amax gives, which saturates nothing.
//
// Every GEMM is checked against an FP64 reference of its dequantized operands
// (common/check/check.h): GEMM 1 after bias, GELU and FP8 saturation
// (check_epilogue_rows) with its amax (reference_amax); GEMM 2 against H as
// decoded (code * d_scale) times W2 dequantized (check_rows).
#include "examples/fp8_layer.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/registry.h"
#include "common/device/output.h"
#include "common/fp8/quantize.h"

namespace fp8gemm::example {
namespace {

constexpr Fp8Format kE4M3 = Fp8Format::kE4M3;
// The step this example runs, by folder name: the registry finds it.
constexpr const char* kStepFolder = "07_fused_epilogue";

// ---- host data --------------------------------------------------------------

// `count` values from N(0, sigma^2), a pure function of (seed, which).
std::vector<float> random_normal(int64_t count, double sigma, uint64_t seed, uint64_t which) {
  std::mt19937_64 engine(seed * 0x9E3779B97F4A7C15ull + which);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(sigma));
  std::vector<float> values(static_cast<size_t>(count));
  for (float& x : values) x = normal(engine);
  return values;
}

// Float values rounded to BF16, as bits (the layout of a BF16 tensor).
std::vector<uint16_t> to_bf16(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = float_to_bf16_bits(values[i]);
  return bits;
}

template <typename T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
  DeviceBuffer<T> device(host.size());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(device.get(), host.data(), device.bytes(), cudaMemcpyHostToDevice));
  return device;
}

template <typename T>
std::vector<T> to_host(const DeviceBuffer<T>& device) {
  std::vector<T> host(device.size());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(host.data(), device.get(), device.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// An FP8 operand on the device: codes (ld = columns) and its scales.
struct DeviceOperand {
  DeviceBuffer<uint8_t> codes;
  DeviceBuffer<float> scales;
};

// ---- 1. the activations: BF16 -> FP32 -> 1 x 128 groups, on the GPU ----------

__global__ void bf16_to_float_kernel(const uint16_t* x, float* y, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    y[i] = bf16_bits_to_float(x[i]);
  }
}

// Quantizes X (m x k BF16 on the device) per token: one scale per row and
// 128 columns. quantize_on_gpu reads FP32, so X is widened first (a model
// would fuse the two; the codes and scales are the same, the widening being exact).
Status quantize_activations(const uint16_t* x_bf16, int64_t m, int64_t k, DeviceOperand* x) {
  const int64_t count = m * k;
  DeviceBuffer<float> x_fp32(static_cast<size_t>(count));
  const int64_t blocks = std::min<int64_t>((count + 255) / 256, 4096);
  bf16_to_float_kernel<<<static_cast<unsigned>(blocks), 256>>>(x_bf16, x_fp32.get(), count);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  x->codes = DeviceBuffer<uint8_t>(static_cast<size_t>(count));
  x->scales = DeviceBuffer<float>(static_cast<size_t>(scale_count(m, k, ScaleGranularity::kGroup1x128)));
  const Status status =
      quantize_on_gpu(x_fp32.get(), m, k, k, kE4M3, ScaleGranularity::kGroup1x128, x->codes.get(), x->scales.get());
  // The encode pass is still reading x_fp32: wait for it before freeing it.
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return status;
}

// ---- 2. the weights: 128 x 128 blocks, quantized once on the host -------------

DeviceOperand upload(const QuantizedMatrix& q) { return {to_device(q.codes), to_device(q.scales)}; }

// ---- 3. GEMM 1: H = fp8(GELU(X W1^T + b1) / d_scale), and its amax -------------

Status run_first_gemm(const StepInfo& step, const LayerShape& s, const DeviceOperand& x, const DeviceOperand& w1,
                      const uint16_t* b1, float d_scale, uint8_t* h, float* amax) {
  // Host scales stay 1: every scale of X and W1 comes from device memory.
  const GemmShape shape{s.m, s.n1, s.k, kE4M3, kE4M3, OutputType::kE4M3};
  GemmArgs args = make_gemm_args(shape, GemmBuffers{x.codes.get(), s.k, 1.0f, w1.codes.get(), s.k, 1.0f, h, s.n1},
                                 /*stream=*/nullptr);
  args.a_scale_granularity = ScaleGranularity::kGroup1x128;
  args.a_scales = x.scales.get();
  args.b_scale_granularity = ScaleGranularity::kBlock128x128;
  args.b_scales = w1.scales.get();
  args.bias = b1;
  args.bias_type = BiasType::kBF16;
  args.activation = Activation::kGeluTanh;
  args.d_scale = d_scale;  // H ~ code * d_scale
  args.d_amax = amax;      // max |y| over H, before quantization
  return run_step(step, args);
}

// ---- 4. GEMM 2: Y = (H d_scale) W2^T, H's scale from device memory ---------------

Status run_second_gemm(const StepInfo& step, const LayerShape& s, const uint8_t* h, const float* h_scale,
                       const DeviceOperand& w2, uint16_t* y) {
  const GemmShape shape{s.m, s.n2, s.n1, kE4M3, kE4M3, OutputType::kBF16};
  // a_scale must be 1 beside a scale pointer: the scale is *h_scale.
  GemmArgs args = make_gemm_args(shape, GemmBuffers{h, s.n1, 1.0f, w2.codes.get(), s.n1, 1.0f, y, s.n2},
                                 /*stream=*/nullptr);
  args.a_scale_granularity = ScaleGranularity::kPerTensor;
  args.a_scales = h_scale;
  args.b_scale_granularity = ScaleGranularity::kBlock128x128;
  args.b_scales = w2.scales.get();
  return run_step(step, args);
}

// ---- the checks ---------------------------------------------------------------------

// What GEMM 1 must match, whatever its d_scale: the FP64 product of the
// dequantized X and W1, and the epilogue's bias and activation.
struct FirstGemmReference {
  ReferenceProduct product;
  std::vector<double> bias;  // b1's BF16 values, as the kernel reads them
  Accumulation accumulation = Accumulation::kTensorCorePromoted;
  int64_t m = 0, k = 0;
};

// One line for a check that passed; describe_check()'s full report (the
// broken rule, the worst element, every metric) for one that failed.
std::string check_summary(const OutputCheck& check, const std::vector<float>& values, const ReferenceProduct& ref) {
  if (!check.passed) return describe_check(check, values, ref);
  const ErrorMetrics& m = check.result.metrics;
  std::ostringstream out;
  out << m.elements << " elements (" << ref.rows.size() << " rows) within their bounds; max |error| " << m.max_abs_error
      << ", the worst element at " << check.result.worst_ratio << " of its bound";
  return out.str();
}

FirstGemmRun check_first_gemm(const FirstGemmReference& ref, const std::vector<uint8_t>& h, float d_scale, float amax) {
  FirstGemmRun run;
  run.d_scale = d_scale;
  run.amax = amax;
  // fl(|y| / d_scale) grows with |y|: no element exceeds 448 exactly when the amax's does not.
  run.saturated = !(amax / d_scale <= fp8_max(kE4M3));
  for (uint8_t code : h) run.codes_at_max += std::fabs(fp8_to_float(code, kE4M3)) == fp8_max(kE4M3) ? 1 : 0;

  // The checked rows of H as values: code * d_scale.
  const int64_t n = ref.product.n;
  std::vector<float> values;
  values.reserve(ref.product.rows.size() * static_cast<size_t>(n));
  for (int64_t row : ref.product.rows) {
    for (int64_t col = 0; col < n; ++col)
      values.push_back(load_output(h.data(), row * n + col, OutputType::kE4M3, d_scale));
  }
  const EpilogueReference epilogue{ref.bias, Activation::kGeluTanh, d_scale};
  run.check = check_epilogue_rows(values, ref.product, epilogue, OutputType::kE4M3, ref.k, ref.accumulation);
  run.check_text = check_summary(run.check, values, ref.product);

  // The amax: within the reference's bound where every row was checked, at
  // least the checked rows' amax where they were sampled.
  run.amax_reference = reference_amax(ref.product, epilogue, ref.k, ref.accumulation);
  const bool every_row = static_cast<int64_t>(ref.product.rows.size()) == ref.m;
  const AmaxReference& expected = run.amax_reference;
  run.amax_ok = std::isfinite(amax) && amax >= expected.amax - expected.bound &&
                (!every_row || amax <= expected.amax + expected.bound);
  return run;
}

}  // namespace

std::string describe(const LayerShape& shape) {
  std::ostringstream out;
  out << "M " << shape.m << ", K " << shape.k << ", N1 " << shape.n1 << ", N2 " << shape.n2;
  return out.str();
}

// Delayed scaling. An FP8 output's scale must be known before the GEMM that
// writes it runs, but its amax only after. A model therefore takes d_scale
// from the amax of an earlier step (the previous iteration's, or the largest
// over a window of recent ones, often with a margin):
//     d_scale = amax_prev / 448       (448: e4m3's largest value)
// and records this step's amax for the next. If the data grow past amax_prev,
// the excess saturates (the codes clip at +-448); the history and the margin
// make that rare. Rounding up here makes amax_prev itself map to at most 448.
float delayed_d_scale(float amax) {
  const float max = fp8_max(kE4M3);
  float scale = dequant_scale_from_amax(amax, kE4M3);  // amax / 448 to nearest; 1 for 0
  // scale * 448 is exact in double (24 + 9 bits): round up where it fell short.
  if (static_cast<double>(scale) * max < static_cast<double>(amax))
    scale = std::nextafter(scale, std::numeric_limits<float>::infinity());
  return scale;
}

bool LayerReport::passed() const {
  return status.ok() && first.check.passed && first.amax_ok && second.check.passed && second.amax_ok &&
         !second.saturated && y_check.passed;
}

LayerReport run_fp8_layer(const LayerShape& s, uint64_t seed, float d_scale_guess) {
  LayerReport report;
  report.shape = s;
  report.seed = seed;
  const StepInfo* step = find_step(kStepFolder);
  if (step == nullptr) {
    report.status = Status::error(StatusCode::kNotSupported, std::string(kStepFolder) + " is not in this build");
    return report;
  }
  const Accumulation accumulation = accumulation_of(*step, /*fast_accumulation=*/false);

  // The layer's data. Weights with standard deviation 1 / sqrt(fan-in), as a
  // model initializes them, so that X W1^T + b1 is about N(0, 1.25).
  const std::vector<uint16_t> x_host = to_bf16(random_normal(s.m * s.k, 1.0, seed, 'X'));
  const std::vector<uint16_t> b1_host = to_bf16(random_normal(s.n1, 0.5, seed, 'b'));
  const std::vector<float> w1_fp32 = random_normal(s.n1 * s.k, 1.0 / std::sqrt(static_cast<double>(s.k)), seed, 'W');
  const std::vector<float> w2_fp32 = random_normal(s.n2 * s.n1, 1.0 / std::sqrt(static_cast<double>(s.n1)), seed, 'V');
  const DeviceBuffer<uint16_t> x_bf16 = to_device(x_host);  // where the previous layer left it
  const DeviceBuffer<uint16_t> b1 = to_device(b1_host);

  // 1. The activations, quantized on the GPU per token.
  DeviceOperand x;
  report.status = quantize_activations(x_bf16.get(), s.m, s.k, &x);
  if (!report.status.ok()) return report;
  report.activation_scales = static_cast<int64_t>(x.scales.size());

  // 2. The weights, quantized once in 128 x 128 blocks.
  const QuantizedMatrix w1_q = quantize(w1_fp32.data(), s.n1, s.k, s.k, kE4M3, ScaleGranularity::kBlock128x128);
  const QuantizedMatrix w2_q = quantize(w2_fp32.data(), s.n2, s.n1, s.n1, kE4M3, ScaleGranularity::kBlock128x128);
  const DeviceOperand w1 = upload(w1_q);
  const DeviceOperand w2 = upload(w2_q);

  DeviceBuffer<uint8_t> h(static_cast<size_t>(s.m * s.n1));  // H: e4m3 codes, ld = N1
  DeviceBuffer<float> amax(1);
  DeviceBuffer<float> h_scale(1);                             // H's d_scale on the device, for GEMM 2
  DeviceBuffer<uint16_t> y(static_cast<size_t>(s.m * s.n2));  // Y: BF16, ld = N2

  // The FP64 reference of GEMM 1, from X's codes and scales as the GPU made them.
  QuantizedMatrix x_q{s.m, s.k, kE4M3, ScaleGranularity::kGroup1x128, to_host(x.codes), to_host(x.scales)};
  FirstGemmReference ref1;
  ref1.product = reference_of_rows(x_q, w1_q, rows_to_check(s.m, s.n1, s.k, seed));
  ref1.bias.assign(b1_host.size(), 0.0);
  for (size_t i = 0; i < b1_host.size(); ++i) ref1.bias[i] = bf16_bits_to_float(b1_host[i]);
  ref1.accumulation = accumulation;
  ref1.m = s.m;
  ref1.k = s.k;

  // 3a. GEMM 1 with a guessed d_scale: only to learn the amax.
  float amax_host = 0.0f;
  report.status = run_first_gemm(*step, s, x, w1, b1.get(), d_scale_guess, h.get(), amax.get());
  if (!report.status.ok()) return report;
  report.gemms_run = 1;
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&amax_host, amax.get(), sizeof(float), cudaMemcpyDeviceToHost));
  report.first = check_first_gemm(ref1, to_host(h), d_scale_guess, amax_host);

  // 3b. GEMM 1 again, with d_scale from the amax just reported (delayed scaling).
  const float d_scale = delayed_d_scale(amax_host);
  report.status = run_first_gemm(*step, s, x, w1, b1.get(), d_scale, h.get(), amax.get());
  if (!report.status.ok()) return report;
  report.gemms_run = 2;
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&amax_host, amax.get(), sizeof(float), cudaMemcpyDeviceToHost));
  const std::vector<uint8_t> h_codes = to_host(h);
  report.second = check_first_gemm(ref1, h_codes, d_scale, amax_host);

  // 4. GEMM 2 consumes H with its d_scale from device memory. (A model would
  // write it there with a kernel from the amax, without a trip through the
  // host; GemmArgs::d_scale of GEMM 1 is a host float, so the host has it here.)
  FP8GEMM_CUDA_CHECK(cudaMemcpy(h_scale.get(), &d_scale, sizeof(float), cudaMemcpyHostToDevice));
  report.status = run_second_gemm(*step, s, h.get(), h_scale.get(), w2, y.get());
  if (!report.status.ok()) return report;
  report.gemms_run = 3;
  const std::vector<uint16_t> y_host = to_host(y);

  // Its reference: H as decoded (code * d_scale, a per-tensor scale) times W2 dequantized.
  const QuantizedMatrix h_q{s.m, s.n1, kE4M3, ScaleGranularity::kPerTensor, h_codes, {d_scale}};
  const ReferenceProduct ref2 = reference_of_rows(h_q, w2_q, rows_to_check(s.m, s.n2, s.n1, seed));
  std::vector<float> y_values;
  y_values.reserve(ref2.rows.size() * static_cast<size_t>(s.n2));
  for (int64_t row : ref2.rows) {
    for (int64_t col = 0; col < s.n2; ++col) y_values.push_back(bf16_bits_to_float(y_host[row * s.n2 + col]));
  }
  report.y_check = check_rows(y_values, ref2, OutputType::kBF16, s.n1, accumulation);
  report.y_check_text = check_summary(report.y_check, y_values, ref2);
  return report;
}

namespace {

void print_first_gemm(const FirstGemmRun& run, const LayerShape& s, std::ostream& out) {
  out << "   d_amax = " << run.amax << ": amax / d_scale = " << run.amax / run.d_scale
      << (run.saturated ? " > 448: SATURATED (elements beyond +-448 d_scale were clipped)"
                        : " <= 448: nothing saturated")
      << "; " << run.codes_at_max << " of " << s.m * s.n1 << " codes of H are +-448\n";
  out << "   H against FP64 (check_epilogue_rows): " << (run.check.passed ? "passed" : "FAILED") << "\n      "
      << run.check_text << "\n";
  out << "   d_amax against FP64 (reference_amax): " << (run.amax_ok ? "passed" : "FAILED") << ", reference "
      << run.amax_reference.amax << " +- " << run.amax_reference.bound << "\n";
}

}  // namespace

void print_report(const LayerReport& r, std::ostream& out) {
  const LayerShape& s = r.shape;
  out << "FP8 layer, " << describe(s) << ", seed " << r.seed << ", step " << kStepFolder << "\n";
  out << "1. X: " << s.m << " x " << s.k
      << " BF16 on the GPU, widened to FP32 on the GPU (quantize_on_gpu reads FP32),\n"
      << "   quantized per token to e4m3 in 1 x 128 groups: " << r.activation_scales << " scales\n";
  out << "2. W1 " << s.n1 << " x " << s.k << " and W2 " << s.n2 << " x " << s.n1
      << ": e4m3 in 128 x 128 blocks, quantized once on the host\n";
  if (r.gemms_run >= 1) {
    out << "3. GEMM 1 (" << s.m << " x " << s.n1 << " x " << s.k
        << "): H = e4m3(GELU_tanh(X W1^T + b1) / d_scale), BF16 bias, amax\n";
    out << "   run 1, d_scale guessed: " << r.first.d_scale << " (as if max |y| were "
        << r.first.d_scale * fp8_max(kE4M3) << ")\n";
    print_first_gemm(r.first, s, out);
  }
  if (r.gemms_run >= 2) {
    out << "   run 2, delayed scaling: d_scale = amax / 448 rounded up = " << r.second.d_scale << "\n";
    print_first_gemm(r.second, s, out);
  }
  if (r.gemms_run >= 3) {
    out << "4. GEMM 2 (" << s.m << " x " << s.n2 << " x " << s.n1
        << "): Y = (H d_scale) W2^T in BF16, H's scale a per-tensor scale read from device memory\n";
    out << "   Y against FP64 of (H as decoded) x (W2 dequantized) (check_rows): "
        << (r.y_check.passed ? "passed" : "FAILED") << "\n      " << r.y_check_text << "\n";
  }
  if (!r.status.ok()) out << "could not run: " << status_code_name(r.status.code) << ": " << r.status.message << "\n";
  const bool not_run = r.status.code == StatusCode::kNotSupported;
  out << (r.passed() ? "PASSED" : not_run ? "NOT RUN (step 07 refused it)" : "FAILED") << "\n";
}

}  // namespace fp8gemm::example
