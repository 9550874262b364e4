#include "common/harness/problem.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/device/output.h"

namespace fp8gemm {

std::string shape_name(const Shape& shape) {
  return std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
}

bool parse_shape(const std::string& text, Shape* shape) {
  int64_t dims[3];
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? text.find('x', start) : text.size();
    if (end == std::string::npos) return false;
    const std::string digits = text.substr(start, end - start);
    // At most 12 digits: no overflow, and far beyond any GPU's memory.
    if (digits.empty() || digits.size() > 12) return false;
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    dims[i] = std::stoll(digits);
    if (dims[i] < 1) return false;
    start = end + 1;
  }
  *shape = Shape{dims[0], dims[1], dims[2]};
  return true;
}

std::vector<Shape> parse_shape_list(const std::string& text) {
  std::vector<Shape> shapes;
  std::stringstream entries(text);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    Shape shape;
    if (!parse_shape(entry, &shape)) {
      throw std::invalid_argument("bad shape '" + entry + "': expected MxNxK with M, N, K >= 1, e.g. 4096x4096x4096");
    }
    shapes.push_back(shape);
  }
  if (shapes.empty()) throw std::invalid_argument("empty shape list");
  return shapes;
}

double gemm_min_bytes(const Shape& shape, OutputType d_type) {
  return double(shape.m) * double(shape.k) + double(shape.n) * double(shape.k) +
         double(shape.m) * double(shape.n) * output_bytes(d_type);
}

namespace {

/// A 64-bit mix (splitmix64's finalizer): consecutive inputs give unrelated outputs.
__host__ __device__ uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// x[i] ~ N(0, 1), a pure function of (stream_key, i): the same on every GPU
/// and launch configuration. Each thread turns one 64-bit hash into two
/// values with the Box-Muller transform.
__global__ void fill_normal_kernel(float* x, int64_t count, uint64_t stream_key) {
  const int64_t pairs = (count + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs; p += stride) {
    const uint64_t bits = mix64(stream_key + static_cast<uint64_t>(p));
    const float u1 = (static_cast<float>(bits >> 40) + 1.0f) * 0x1p-24f;       // (0, 1]: log is finite
    const float u2 = static_cast<float>((bits >> 16) & 0xFFFFFFu) * 0x1p-24f;  // [0, 1)
    const float radius = sqrtf(-2.0f * logf(u1));
    float sin_value, cos_value;
    sincospif(2.0f * u2, &sin_value, &cos_value);
    x[2 * p] = radius * cos_value;
    if (2 * p + 1 < count) x[2 * p + 1] = radius * sin_value;
  }
}

/// Launches fill_normal_kernel: `count` values from N(0, 1) of the stream `key`.
void fill_normal(float* values, int64_t count, uint64_t key, cudaStream_t stream) {
  const int64_t pairs = (count + 1) / 2;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((pairs + kThreads - 1) / kThreads, 1 << 16);
  fill_normal_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(values, count, key);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

/// Draws a rows x cols matrix from N(0, 1) into `values` and quantizes it at
/// `granularity` into `codes` and `scales` (device). `which` separates A from B.
void make_operand(float* values, int64_t rows, int64_t cols, uint64_t seed, uint64_t which, Fp8Format format,
                  ScaleGranularity granularity, uint8_t* codes, float* scales, cudaStream_t stream) {
  fill_normal(values, rows * cols, mix64(seed * 2 + which), stream);
  const Status status = quantize_on_gpu(values, rows, cols, cols, format, granularity, codes, scales, stream);
  if (!status.ok()) throw std::runtime_error("quantize_on_gpu: " + status.message);
}

float copy_scale_to_host(const float* scale, cudaStream_t stream) {
  float value = 0.0f;
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(&value, scale, sizeof(float), cudaMemcpyDeviceToHost, stream));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace

bool is_plain(const ProblemOptions& options) {
  return options.a_scale_granularity == ScaleGranularity::kPerTensor &&
         options.b_scale_granularity == ScaleGranularity::kPerTensor && !options.bias &&
         options.activation == Activation::kNone && !is_fp8_output(options.d_type);
}

std::string describe(const ProblemOptions& options) {
  const bool per_tensor = options.a_scale_granularity == ScaleGranularity::kPerTensor &&
                          options.b_scale_granularity == ScaleGranularity::kPerTensor;
  std::string text = std::string("A ") + fp8_name(options.a_format) + ", B " + fp8_name(options.b_format) + ", ";
  text += per_tensor ? std::string("per-tensor scales")
                     : std::string("scales A ") + granularity_name(options.a_scale_granularity) + ", B " +
                           granularity_name(options.b_scale_granularity);
  if (options.bias) text += std::string(", bias ") + (options.bias_type == BiasType::kBF16 ? "bf16" : "fp32");
  if (options.activation != Activation::kNone)
    text += std::string(", activation ") + activation_name(options.activation);
  text += std::string(", D ") + output_name(options.d_type);
  if (is_fp8_output(options.d_type)) text += " (d_scale: fp8_output_scale(K), d_amax)";
  return text + ", seed " + std::to_string(options.seed);
}

float fp8_output_scale(int64_t k, OutputType d_type) {
  constexpr double kStandardDeviations = 8.0;
  const double wanted = kStandardDeviations * std::sqrt(double(k) + 1.0) / fp8_max(fp8_output_format(d_type));
  return static_cast<float>(std::exp2(std::ceil(std::log2(wanted))));
}

GemmProblem::GemmProblem(const Shape& shape, const ProblemOptions& options, cudaStream_t stream)
    : shape_(shape), options_(options), stream_(stream) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) {
    throw std::invalid_argument("GemmProblem: M, N and K must be >= 1, got " + shape_name(shape));
  }
  a_ = DeviceBuffer<uint8_t>(shape.m * shape.k);
  b_ = DeviceBuffer<uint8_t>(shape.n * shape.k);
  a_scales_ = DeviceBuffer<float>(scale_count(shape.m, shape.k, options.a_scale_granularity));
  b_scales_ = DeviceBuffer<float>(scale_count(shape.n, shape.k, options.b_scale_granularity));
  d_ = DeviceBuffer<uint8_t>(shape.m * shape.n * output_bytes(options.d_type));
  {
    // FP32 values before quantization: one buffer, used for A and then for B.
    DeviceBuffer<float> values(std::max(shape.m, shape.n) * shape.k);
    make_operand(values.get(), shape.m, shape.k, options.seed, 0, options.a_format, options.a_scale_granularity,
                 a_.get(), a_scales_.get(), stream);
    make_operand(values.get(), shape.n, shape.k, options.seed, 1, options.b_format, options.b_scale_granularity,
                 b_.get(), b_scales_.get(), stream);
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));  // before `values` is freed
  }
  // Per tensor, the scale goes to the kernel as a host float, as it always did.
  if (options.a_scale_granularity == ScaleGranularity::kPerTensor)
    a_scale_host_ = copy_scale_to_host(a_scales_.get(), stream);
  if (options.b_scale_granularity == ScaleGranularity::kPerTensor)
    b_scale_host_ = copy_scale_to_host(b_scales_.get(), stream);
  if (options.bias) make_bias();
  if (is_fp8_output(options.d_type)) {
    d_scale_ = fp8_output_scale(shape.k, options.d_type);
    d_amax_ = DeviceBuffer<float>(1);
  }
  poison_d();
}

void GemmProblem::make_bias() {
  // A stream of its own: B's key with bits flipped by a constant, which no
  // seed's A or B key (mix64(seed * 2 + which)) equals but by chance.
  const uint64_t key = mix64(options_.seed * 2 + 1) ^ 0xB1A5B1A5B1A5B1A5ull;
  DeviceBuffer<float> values(shape_.n);
  fill_normal(values.get(), shape_.n, key, stream_);
  bias_host_.resize(shape_.n);
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(bias_host_.data(), values.get(), values.bytes(), cudaMemcpyDeviceToHost, stream_));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // A BF16 bias is rounded here, and the host copy keeps the rounded values:
  // they are what a kernel adds.
  const void* source = bias_host_.data();
  size_t bytes = bias_host_.size() * sizeof(float);
  std::vector<uint16_t> bits;
  if (options_.bias_type == BiasType::kBF16) {
    bits.resize(bias_host_.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = float_to_bf16_bits(bias_host_[i]);
      bias_host_[i] = bf16_bits_to_float(bits[i]);
    }
    source = bits.data();
    bytes = bits.size() * sizeof(uint16_t);
  }
  bias_ = DeviceBuffer<uint8_t>(bytes);
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(bias_.get(), source, bytes, cudaMemcpyHostToDevice, stream_));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `bits` is freed
}

GemmArgs GemmProblem::args() const {
  const GemmShape shape{shape_.m, shape_.n, shape_.k, options_.a_format, options_.b_format, options_.d_type};
  const GemmBuffers buffers{a_.get(), shape_.k, a_scale_host_, b_.get(), shape_.k, b_scale_host_, d_.get(), shape_.n};
  GemmArgs args = make_gemm_args(shape, buffers, stream_);
  // make_gemm_args() fills the plain problem; the rest is this problem's own.
  if (options_.a_scale_granularity != ScaleGranularity::kPerTensor) {
    args.a_scale_granularity = options_.a_scale_granularity;
    args.a_scales = a_scales_.get();
  }
  if (options_.b_scale_granularity != ScaleGranularity::kPerTensor) {
    args.b_scale_granularity = options_.b_scale_granularity;
    args.b_scales = b_scales_.get();
  }
  if (options_.bias) {
    args.bias = bias_.get();
    args.bias_type = options_.bias_type;
  }
  args.activation = options_.activation;
  if (is_fp8_output(options_.d_type)) {
    args.d_scale = d_scale_;
    args.d_amax = d_amax_.get();
  }
  return args;
}

void GemmProblem::poison_d() const {
  // All-ones bytes are a NaN in BF16 (0xFFFF), FP32 (0xFFFFFFFF), e4m3 and e5m2 (0xFF).
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(d_.get(), 0xFF, d_.bytes(), stream_));
  if (d_amax_.size() > 0) FP8GEMM_CUDA_CHECK(cudaMemsetAsync(d_amax_.get(), 0xFF, d_amax_.bytes(), stream_));
}

std::vector<float> GemmProblem::download_d() const {
  std::vector<uint8_t> raw(d_.bytes());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(raw.data(), d_.get(), raw.size(), cudaMemcpyDeviceToHost));
  std::vector<float> d(shape_.m * shape_.n);
  for (size_t i = 0; i < d.size(); ++i) {
    d[i] = load_output(raw.data(), static_cast<int64_t>(i), options_.d_type, d_scale_);
  }
  return d;
}

float GemmProblem::download_d_amax() const {
  if (d_amax_.size() == 0) return std::numeric_limits<float>::quiet_NaN();
  float amax = 0.0f;
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&amax, d_amax_.get(), sizeof(float), cudaMemcpyDeviceToHost));
  return amax;
}

QuantizedMatrix GemmProblem::download(const DeviceBuffer<uint8_t>& codes, const DeviceBuffer<float>& scales,
                                      int64_t rows, Fp8Format format, ScaleGranularity granularity) const {
  QuantizedMatrix q;
  q.rows = rows;
  q.cols = shape_.k;
  q.format = format;
  q.granularity = granularity;
  q.codes.resize(codes.size());
  q.scales.resize(scales.size());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(q.codes.data(), codes.get(), codes.bytes(), cudaMemcpyDeviceToHost));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(q.scales.data(), scales.get(), scales.bytes(), cudaMemcpyDeviceToHost));
  return q;
}

QuantizedMatrix GemmProblem::download_a() const {
  return download(a_, a_scales_, shape_.m, options_.a_format, options_.a_scale_granularity);
}

QuantizedMatrix GemmProblem::download_b() const {
  return download(b_, b_scales_, shape_.n, options_.b_format, options_.b_scale_granularity);
}

}  // namespace fp8gemm
