#include "common/harness/grouped_problem.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "common/device/output.h"

namespace fp8gemm {

namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

/// A 64-bit mix (splitmix64's finalizer): consecutive inputs give unrelated outputs.
__host__ __device__ uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The random streams of a problem: A, each expert's B and the bias, each a
// key of its own derived from the seed (and the expert).
uint64_t a_key(uint64_t seed) { return mix64(mix64(seed) ^ 0x4752504141414141ull); }
uint64_t b_key(uint64_t seed, int expert) {
  return mix64(mix64(seed) ^ 0x4752504242424242ull ^ (static_cast<uint64_t>(expert) << 32));
}
uint64_t bias_key(uint64_t seed) { return mix64(mix64(seed) ^ 0x4752504249415321ull); }

/// x[i] ~ N(0, 1), a pure function of (key, i): the same on every GPU and
/// launch configuration. Each thread turns one 64-bit hash into two values
/// with the Box-Muller transform (as GemmProblem's generator does).
__global__ void fill_normal_kernel(float* x, int64_t count, uint64_t key) {
  const int64_t pairs = (count + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs; p += stride) {
    const uint64_t bits = mix64(key + static_cast<uint64_t>(p));
    const float u1 = (static_cast<float>(bits >> 40) + 1.0f) * 0x1p-24f;       // (0, 1]: log is finite
    const float u2 = static_cast<float>((bits >> 16) & 0xFFFFFFu) * 0x1p-24f;  // [0, 1)
    const float radius = sqrtf(-2.0f * logf(u1));
    float sin_value, cos_value;
    sincospif(2.0f * u2, &sin_value, &cos_value);
    x[2 * p] = radius * cos_value;
    if (2 * p + 1 < count) x[2 * p + 1] = radius * sin_value;
  }
}

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;

int grid_for(int64_t work) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((work + kThreads - 1) / kThreads, kMaxBlocks)));
}

void fill_normal(float* values, int64_t count, uint64_t key, cudaStream_t stream) {
  fill_normal_kernel<<<grid_for((count + 1) / 2), kThreads, 0, stream>>>(values, count, key);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

__global__ void fill_float_kernel(float* x, int64_t count, float value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) x[i] = value;
}

void fill_floats(float* values, int64_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fill_float_kernel<<<grid_for(count), kThreads, 0, stream>>>(values, count, value);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

void quantize_or_throw(const float* values, int64_t rows, int64_t cols, Fp8Format format, ScaleGranularity granularity,
                       uint8_t* codes, float* scales, cudaStream_t stream) {
  const Status status = quantize_on_gpu(values, rows, cols, cols, format, granularity, codes, scales, stream);
  if (!status.ok()) throw std::runtime_error("GroupedProblem: " + status.message);
}

// The NaN code of a format: a padding row of A holds it, so that a kernel
// that multiplies a padding row into a stored element writes NaN.
uint8_t fp8_nan_code(Fp8Format format) { return fp8_is_fnuz(format) ? 0x80 : 0x7F; }

void copy_to_device(void* device, const void* host, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
}

void copy_to_host(void* host, const void* device, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
}

void invalid(const std::string& message) { throw std::invalid_argument("GroupedProblem: " + message); }

}  // namespace

std::string grouped_shape_name(const GroupedShape& shape) {
  const std::vector<int64_t>& rows = shape.expert_rows;
  std::string name;
  const bool uniform =
      !rows.empty() && std::all_of(rows.begin(), rows.end(), [&](int64_t r) { return r == rows.front(); });
  if (uniform) {
    name = std::to_string(rows.size()) + "x" + std::to_string(rows.front());
  } else {
    for (size_t g = 0; g < rows.size(); ++g) name += (g == 0 ? "" : ",") + std::to_string(rows[g]);
  }
  name += "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k) + "/" + grouped_layout_name(shape.layout);
  if (shape.layout == GroupedLayout::kMasked) {
    const int64_t largest = rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end());
    if (shape.capacity > std::max<int64_t>(largest, 1)) name += "_capacity" + std::to_string(shape.capacity);
  }
  return name;
}

GroupedShape uniform_grouped_shape(GroupedLayout layout, int experts, int64_t m, int64_t n, int64_t k) {
  GroupedShape shape;
  shape.layout = layout;
  shape.expert_rows.assign(static_cast<size_t>(std::max(experts, 0)), m);
  shape.n = n;
  shape.k = k;
  return shape;
}

// -----------------------------------------------------------------------------
// Construction
// -----------------------------------------------------------------------------

GroupedProblem::GroupedProblem(const GroupedShape& shape, const ProblemOptions& options, cudaStream_t stream)
    : options_(options), stream_(stream) {
  make_layout(shape);
  allocate();
  draw_operands();
  read_b_scales();
  if (options_.bias) make_bias();
  poison_d();
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

GroupedProblem::GroupedProblem(const GroupedShape& shape, const ProblemOptions& options,
                               const GroupedOperands& operands, cudaStream_t stream)
    : options_(options), stream_(stream) {
  make_layout(shape);
  allocate();
  upload_operands(operands);
  read_b_scales();
  if (options_.bias) make_bias();
  poison_d();
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void GroupedProblem::make_layout(const GroupedShape& shape) {
  shape_ = shape;
  if (shape.expert_rows.empty()) invalid("at least one expert required, got none");
  if (shape.expert_rows.size() > static_cast<size_t>(std::numeric_limits<int>::max())) invalid("too many experts");
  if (shape.n < 1 || shape.k < 1) {
    invalid("N and K must be >= 1, got N = " + std::to_string(shape.n) + ", K = " + std::to_string(shape.k));
  }
  if (shape.layout != GroupedLayout::kContiguous && shape.layout != GroupedLayout::kMasked) invalid("unknown layout");
  if (options_.a_scale_granularity == ScaleGranularity::kBlock128x128) {
    invalid("A's 128x128 scales are not supported (a masked expert's rows do not start on a 128-row block)");
  }
  int64_t largest = 0;
  for (size_t g = 0; g < shape.expert_rows.size(); ++g) {
    if (shape.expert_rows[g] < 0) {
      invalid("expert_rows[" + std::to_string(g) + "] = " + std::to_string(shape.expert_rows[g]) + " is negative");
    }
    largest = std::max(largest, shape.expert_rows[g]);
  }
  const int g_count = experts();
  first_row_.resize(static_cast<size_t>(g_count));
  valid_rows_ = 0;
  if (shape.layout == GroupedLayout::kMasked) {
    if (shape.capacity < 0)
      invalid("capacity must be >= 0 (0: the largest expert), got " + std::to_string(shape.capacity));
    shape_.capacity = shape.capacity > 0 ? shape.capacity : std::max<int64_t>(largest, 1);
    if (shape_.capacity < largest) {
      invalid("capacity " + std::to_string(shape_.capacity) + " is below an expert's " + std::to_string(largest) +
              " rows");
    }
    for (int g = 0; g < g_count; ++g) first_row_[static_cast<size_t>(g)] = g * shape_.capacity;
    rows_ = g_count * shape_.capacity;
  } else {
    // Each expert's segment: its rows padded to the row tile, empty for an expert with none.
    rows_ = 0;
    for (int g = 0; g < g_count; ++g) {
      first_row_[static_cast<size_t>(g)] = rows_;
      rows_ += round_up(expert_rows(g), kGroupedRowAlignment);
    }
    if (rows_ == 0) invalid("the contiguous layout needs at least one expert with rows");
  }
  row_experts_.assign(static_cast<size_t>(rows_), -1);
  for (int g = 0; g < g_count; ++g) {
    std::fill_n(row_experts_.begin() + first_row(g), expert_rows(g), g);
    valid_rows_ += expert_rows(g);
  }
}

int64_t GroupedProblem::a_scales_per_row() const {
  switch (options_.a_scale_granularity) {
    case ScaleGranularity::kPerRow: return 1;
    case ScaleGranularity::kGroup1x128: return (shape_.k + kQuantGroupSize - 1) / kQuantGroupSize;
    default: return 0;  // per tensor: one scale for all rows
  }
}

void GroupedProblem::allocate() {
  const int64_t n = shape_.n, k = shape_.k;
  a_ = DeviceBuffer<uint8_t>(static_cast<size_t>(rows_ * k));
  b_ = DeviceBuffer<uint8_t>(static_cast<size_t>(experts() * n * k));
  a_scales_ = DeviceBuffer<float>(static_cast<size_t>(std::max<int64_t>(1, rows_ * a_scales_per_row())));
  b_scales_ = DeviceBuffer<float>(static_cast<size_t>(experts() * b_scales_per_expert()));
  // A guard band of at least 4 rows (and 64 KiB) on either side of D, a
  // multiple of 256 bytes so that D is as aligned as cudaMalloc's pointers.
  const int64_t row_bytes = n * output_bytes(options_.d_type);
  d_guard_bytes_ = round_up(std::max<int64_t>(4 * row_bytes, 64 * 1024), 256);
  d_buffer_ = DeviceBuffer<uint8_t>(static_cast<size_t>(2 * d_guard_bytes_ + d_bytes()));
  if (is_fp8_output(options_.d_type)) {
    d_scale_ = fp8_output_scale(k, options_.d_type);
    d_amax_ = DeviceBuffer<float>(static_cast<size_t>(1 + experts()));
  }
  // Every row of A starts as NaN codes with scale 1; the valid rows are then copied in.
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(a_.get(), fp8_nan_code(options_.a_format), a_.bytes(), stream_));
  fill_floats(a_scales_.get(), static_cast<int64_t>(a_scales_.size()), 1.0f, stream_);

  if (shape_.layout == GroupedLayout::kContiguous) {
    m_indices_ = DeviceBuffer<int>(static_cast<size_t>(rows_));
    copy_to_device(m_indices_.get(), row_experts_.data(), m_indices_.bytes(), stream_);
  } else {
    std::vector<int> counts(shape_.expert_rows.begin(), shape_.expert_rows.end());
    counts_ = DeviceBuffer<int>(counts.size());
    copy_to_device(counts_.get(), counts.data(), counts_.bytes(), stream_);
  }
  // The host vectors copied from are pageable memory: wait before they go.
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void GroupedProblem::scatter_a(const uint8_t* codes, const float* scales) {
  const int64_t k = shape_.k;
  if (options_.a_scale_granularity == ScaleGranularity::kPerTensor) {
    FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(a_scales_.get(), scales, sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  }
  const int64_t per_row = a_scales_per_row();
  int64_t source_row = 0;  // expert g's first row in the compact A
  for (int g = 0; g < experts(); ++g) {
    const int64_t rows = expert_rows(g);
    if (rows == 0) continue;
    FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(a_.get() + first_row(g) * k, codes + source_row * k,
                                       static_cast<size_t>(rows * k), cudaMemcpyDeviceToDevice, stream_));
    if (per_row > 0) {
      FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(a_scales_.get() + first_row(g) * per_row, scales + source_row * per_row,
                                         static_cast<size_t>(rows * per_row) * sizeof(float), cudaMemcpyDeviceToDevice,
                                         stream_));
    }
    source_row += rows;
  }
}

void GroupedProblem::draw_operands() {
  const int64_t n = shape_.n, k = shape_.k;
  if (valid_rows_ > 0) {
    // All experts' valid rows as one matrix, quantized together: one A, one
    // per-tensor scale (or each row's own), then copied into the layout.
    DeviceBuffer<float> values(static_cast<size_t>(valid_rows_ * k));
    DeviceBuffer<uint8_t> codes(static_cast<size_t>(valid_rows_ * k));
    DeviceBuffer<float> scales(static_cast<size_t>(scale_count(valid_rows_, k, options_.a_scale_granularity)));
    fill_normal(values.get(), valid_rows_ * k, a_key(options_.seed), stream_);
    quantize_or_throw(values.get(), valid_rows_, k, options_.a_format, options_.a_scale_granularity, codes.get(),
                      scales.get(), stream_);
    scatter_a(codes.get(), scales.get());
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the compact buffers are freed
  }
  // Each expert's B on its own: its own per-tensor scale.
  DeviceBuffer<float> values(static_cast<size_t>(n * k));
  for (int g = 0; g < experts(); ++g) {
    fill_normal(values.get(), n * k, b_key(options_.seed, g), stream_);
    quantize_or_throw(values.get(), n, k, options_.b_format, options_.b_scale_granularity, b_.get() + g * n * k,
                      b_scales_.get() + g * b_scales_per_expert(), stream_);
  }
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `values` is freed
}

void GroupedProblem::upload_operands(const GroupedOperands& operands) {
  const int64_t n = shape_.n, k = shape_.k;
  const auto check_matrix = [&](const QuantizedMatrix& q, const std::string& name, int64_t rows, Fp8Format format,
                                ScaleGranularity granularity) {
    if (q.rows != rows || q.cols != k) {
      invalid(name + " must be " + std::to_string(rows) + " x " + std::to_string(k) + ", got " +
              std::to_string(q.rows) + " x " + std::to_string(q.cols));
    }
    if (q.format != format || q.granularity != granularity) {
      invalid(name + " must be " + fp8_name(format) + " with " + granularity_name(granularity) + " scales");
    }
    if (static_cast<int64_t>(q.codes.size()) != rows * k ||
        static_cast<int64_t>(q.scales.size()) != scale_count(rows, k, granularity)) {
      invalid(name + " holds the wrong number of codes or scales");
    }
  };
  if (static_cast<int>(operands.b.size()) != experts()) {
    invalid("one B per expert required: " + std::to_string(experts()) + ", got " + std::to_string(operands.b.size()));
  }
  if (valid_rows_ > 0) {
    check_matrix(operands.a, "A (the valid rows of all experts)", valid_rows_, options_.a_format,
                 options_.a_scale_granularity);
    DeviceBuffer<uint8_t> codes(operands.a.codes.size());
    DeviceBuffer<float> scales(operands.a.scales.size());
    copy_to_device(codes.get(), operands.a.codes.data(), codes.bytes(), stream_);
    copy_to_device(scales.get(), operands.a.scales.data(), scales.bytes(), stream_);
    scatter_a(codes.get(), scales.get());
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the compact buffers are freed
  }
  for (int g = 0; g < experts(); ++g) {
    const QuantizedMatrix& b = operands.b[static_cast<size_t>(g)];
    check_matrix(b, "B of expert " + std::to_string(g), n, options_.b_format, options_.b_scale_granularity);
    copy_to_device(b_.get() + g * n * k, b.codes.data(), b.codes.size(), stream_);
    copy_to_device(b_scales_.get() + g * b_scales_per_expert(), b.scales.data(), b.scales.size() * sizeof(float),
                   stream_);
  }
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host operands are pageable memory
}

void GroupedProblem::read_b_scales() {
  b_scale_host_.assign(static_cast<size_t>(experts()), 1.0f);
  if (options_.b_scale_granularity == ScaleGranularity::kPerTensor) {
    copy_to_host(b_scale_host_.data(), b_scales_.get(), b_scales_.bytes(), stream_);
  }
  if (options_.a_scale_granularity == ScaleGranularity::kPerTensor) {
    copy_to_host(&a_scale_host_, a_scales_.get(), sizeof(float), stream_);
  }
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void GroupedProblem::make_bias() {
  const int64_t n = shape_.n;
  DeviceBuffer<float> values(static_cast<size_t>(n));
  fill_normal(values.get(), n, bias_key(options_.seed), stream_);
  bias_host_.resize(static_cast<size_t>(n));
  copy_to_host(bias_host_.data(), values.get(), values.bytes(), stream_);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // A BF16 bias is rounded here, and the host copy keeps the rounded values:
  // they are what a kernel adds.
  if (options_.bias_type == BiasType::kBF16) {
    std::vector<uint16_t> bits(bias_host_.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = float_to_bf16_bits(bias_host_[i]);
      bias_host_[i] = bf16_bits_to_float(bits[i]);
    }
    bias_ = DeviceBuffer<uint8_t>(bits.size() * sizeof(uint16_t));
    copy_to_device(bias_.get(), bits.data(), bias_.bytes(), stream_);
  } else {
    bias_ = DeviceBuffer<uint8_t>(bias_host_.size() * sizeof(float));
    copy_to_device(bias_.get(), bias_host_.data(), bias_.bytes(), stream_);
  }
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `bits` is freed
}

// -----------------------------------------------------------------------------
// Arguments
// -----------------------------------------------------------------------------

GroupedGemmArgs GroupedProblem::args() const {
  GroupedGemmArgs grouped;
  grouped.layout = shape_.layout;
  grouped.experts = experts();
  const GemmShape shape{rows_, shape_.n, shape_.k, options_.a_format, options_.b_format, options_.d_type};
  const GemmBuffers buffers{a_.get(), shape_.k, a_scale_host_, b_.get(), shape_.k, 1.0f, d(), shape_.n};
  GemmArgs& gemm = grouped.gemm;
  gemm = make_gemm_args(shape, buffers, stream_);
  if (options_.a_scale_granularity != ScaleGranularity::kPerTensor) {
    gemm.a_scale_granularity = options_.a_scale_granularity;
    gemm.a_scales = a_scales_.get();
  }
  // B's scales always come from device memory: per tensor, one per expert.
  gemm.b_scale_granularity = options_.b_scale_granularity;
  gemm.b_scales = b_scales_.get();
  if (options_.bias) {
    gemm.bias = bias_.get();
    gemm.bias_type = options_.bias_type;
  }
  gemm.activation = options_.activation;
  if (is_fp8_output(options_.d_type)) {
    gemm.d_scale = d_scale_;
    gemm.d_amax = d_amax_.get();
  }
  if (shape_.layout == GroupedLayout::kContiguous) {
    grouped.m_indices = m_indices_.get();
  } else {
    grouped.masked_counts = counts_.get();
    grouped.capacity = shape_.capacity;
  }
  grouped.check_on_host = true;
  return grouped;
}

GemmArgs GroupedProblem::expert_args(int g) const {
  const int64_t n = shape_.n, k = shape_.k;
  const GemmShape shape{expert_rows(g), n, k, options_.a_format, options_.b_format, options_.d_type};
  uint8_t* d_rows = static_cast<uint8_t*>(d()) + first_row(g) * n * output_bytes(options_.d_type);
  const GemmBuffers buffers{
      a_.get() + first_row(g) * k, k, a_scale_host_, b_.get() + g * n * k, k, expert_b_scale(g), d_rows, n};
  GemmArgs args = make_gemm_args(shape, buffers, stream_);
  if (options_.a_scale_granularity != ScaleGranularity::kPerTensor) {
    args.a_scale_granularity = options_.a_scale_granularity;
    args.a_scales = expert_a_scale_on_device(g);
  }
  if (options_.b_scale_granularity != ScaleGranularity::kPerTensor) {
    args.b_scale_granularity = options_.b_scale_granularity;
    args.b_scales = expert_b_scale_on_device(g);
  }
  if (options_.bias) {
    args.bias = bias_.get();
    args.bias_type = options_.bias_type;
  }
  args.activation = options_.activation;
  if (is_fp8_output(options_.d_type)) {
    args.d_scale = d_scale_;
    args.d_amax = d_amax_.get() + 1 + g;
  }
  return args;
}

const float* GroupedProblem::expert_a_scale_on_device(int g) const {
  return a_scales_.get() + first_row(g) * a_scales_per_row();
}

const float* GroupedProblem::expert_b_scale_on_device(int g) const {
  return b_scales_.get() + g * b_scales_per_expert();
}

// -----------------------------------------------------------------------------
// Host copies
// -----------------------------------------------------------------------------

QuantizedMatrix GroupedProblem::download_expert_a(int g) const {
  QuantizedMatrix q;
  q.rows = expert_rows(g);
  q.cols = shape_.k;
  q.format = options_.a_format;
  q.granularity = options_.a_scale_granularity;
  q.codes.resize(static_cast<size_t>(q.rows * q.cols));
  q.scales.resize(static_cast<size_t>(scale_count(q.rows, q.cols, q.granularity)));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(q.codes.data(), a_.get() + first_row(g) * shape_.k, q.codes.size(), stream_);
  copy_to_host(q.scales.data(), expert_a_scale_on_device(g), q.scales.size() * sizeof(float), stream_);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return q;
}

QuantizedMatrix GroupedProblem::download_expert_b(int g) const {
  QuantizedMatrix q;
  q.rows = shape_.n;
  q.cols = shape_.k;
  q.format = options_.b_format;
  q.granularity = options_.b_scale_granularity;
  q.codes.resize(static_cast<size_t>(q.rows * q.cols));
  q.scales.resize(static_cast<size_t>(b_scales_per_expert()));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(q.codes.data(), b_.get() + g * shape_.n * shape_.k, q.codes.size(), stream_);
  copy_to_host(q.scales.data(), expert_b_scale_on_device(g), q.scales.size() * sizeof(float), stream_);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return q;
}

// -----------------------------------------------------------------------------
// D
// -----------------------------------------------------------------------------

void GroupedProblem::poison_d() const {
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(d_buffer_.get(), kDGuardByte, d_buffer_.bytes(), stream_));
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(d(), kDPoisonByte, static_cast<size_t>(d_bytes()), stream_));
  // All-ones bytes: a NaN float, which a launch asked for its amax must overwrite.
  if (d_amax_.size() > 0) FP8GEMM_CUDA_CHECK(cudaMemsetAsync(d_amax_.get(), 0xFF, d_amax_.bytes(), stream_));
}

std::vector<uint8_t> GroupedProblem::download_d_bytes() const {
  std::vector<uint8_t> bytes(static_cast<size_t>(d_bytes()));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(bytes.data(), d(), bytes.size(), stream_);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return bytes;
}

std::vector<float> GroupedProblem::download_d() const {
  const std::vector<uint8_t> raw = download_d_bytes();
  std::vector<float> values(static_cast<size_t>(rows_ * shape_.n));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = load_output(raw.data(), static_cast<int64_t>(i), options_.d_type, d_scale_);
  }
  return values;
}

bool GroupedProblem::d_guard_untouched(std::string* where) const {
  std::vector<uint8_t> before(static_cast<size_t>(d_guard_bytes_)), after(static_cast<size_t>(d_guard_bytes_));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(before.data(), d_buffer_.get(), before.size(), stream_);
  copy_to_host(after.data(), static_cast<const uint8_t*>(d()) + d_bytes(), after.size(), stream_);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const auto changed = [](const std::vector<uint8_t>& bytes) {
    return std::find_if(bytes.begin(), bytes.end(), [](uint8_t b) { return b != kDGuardByte; }) - bytes.begin();
  };
  const int64_t first_before = changed(before), first_after = changed(after);
  if (first_before == d_guard_bytes_ && first_after == d_guard_bytes_) return true;
  if (where != nullptr) {
    const int64_t offset = first_before < d_guard_bytes_ ? first_before - d_guard_bytes_ : d_bytes() + first_after;
    *where = "the byte at offset " + std::to_string(offset) + " from D's first byte (D has " +
             std::to_string(d_bytes()) + " bytes) was written";
  }
  return false;
}

float GroupedProblem::download_d_amax() const {
  if (d_amax_.size() == 0) return std::numeric_limits<float>::quiet_NaN();
  float amax = 0.0f;
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(&amax, d_amax_.get(), sizeof amax, stream_);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return amax;
}

float GroupedProblem::download_expert_d_amax(int g) const {
  if (d_amax_.size() == 0) return std::numeric_limits<float>::quiet_NaN();
  float amax = 0.0f;
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_to_host(&amax, d_amax_.get() + 1 + g, sizeof amax, stream_);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return amax;
}

}  // namespace fp8gemm
