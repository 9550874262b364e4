#include "bench/harness.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "common/output.h"
#include "common/registry.h"

#ifndef FP8GEMM_GIT_COMMIT
#define FP8GEMM_GIT_COMMIT "unknown"
#endif

namespace fp8gemm::bench {

// -----------------------------------------------------------------------------
// Shapes
// -----------------------------------------------------------------------------

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

std::vector<Shape> default_benchmark_shapes() {
  // The squares, then decode batches of 1 and 16 with the first DeepSeek-V3
  // (N, K), then DeepSeek-V3's GEMMs as DeepGEMM's tables list them.
  std::vector<Shape> shapes = {kDefaultShape, {8192, 8192, 8192}, {1, 2112, 7168}, {16, 2112, 7168}};
  const std::pair<int64_t, int64_t> deepseek_nk[] = {{2112, 7168}, {24576, 1536}, {32768, 512},
                                                     {7168, 16384}, {4096, 7168}, {7168, 2048}};
  for (int64_t m : {64, 128, 4096}) {
    for (const auto& [n, k] : deepseek_nk) shapes.push_back({m, n, k});
  }
  return shapes;
}

double gemm_min_bytes(const Shape& shape, OutputType d_type) {
  return double(shape.m) * double(shape.k) + double(shape.n) * double(shape.k) +
         double(shape.m) * double(shape.n) * output_bytes(d_type);
}

// -----------------------------------------------------------------------------
// The problem
// -----------------------------------------------------------------------------

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
    const float u1 = (static_cast<float>(bits >> 40) + 1.0f) * 0x1p-24f;  // (0, 1]: log is finite
    const float u2 = static_cast<float>((bits >> 16) & 0xFFFFFFu) * 0x1p-24f;  // [0, 1)
    const float radius = sqrtf(-2.0f * logf(u1));
    float sin_value, cos_value;
    sincospif(2.0f * u2, &sin_value, &cos_value);
    x[2 * p] = radius * cos_value;
    if (2 * p + 1 < count) x[2 * p + 1] = radius * sin_value;
  }
}

/// Draws a rows x cols matrix from N(0, 1) into `values` and quantizes it per
/// tensor into `codes` and `scale` (device). `which` separates A from B.
void make_operand(float* values, int64_t rows, int64_t cols, uint64_t seed, uint64_t which, Fp8Format format,
                  uint8_t* codes, float* scale, cudaStream_t stream) {
  const int64_t count = rows * cols;
  const int64_t pairs = (count + 1) / 2;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((pairs + kThreads - 1) / kThreads, 1 << 16);
  fill_normal_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(values, count,
                                                                             mix64(seed * 2 + which));
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  const Status status =
      quantize_on_gpu(values, rows, cols, cols, format, ScaleGranularity::kPerTensor, codes, scale, stream);
  if (!status.ok()) throw std::runtime_error("quantize_on_gpu: " + status.message);
}

float copy_scale_to_host(const float* scale, cudaStream_t stream) {
  float value = 0.0f;
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(&value, scale, sizeof(float), cudaMemcpyDeviceToHost, stream));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace

std::string describe(const ProblemOptions& options) {
  return std::string("A ") + fp8_name(options.a_format) + ", B " + fp8_name(options.b_format) +
         ", per-tensor scales, D " + output_name(options.d_type) + ", seed " + std::to_string(options.seed);
}

GemmProblem::GemmProblem(const Shape& shape, const ProblemOptions& options, cudaStream_t stream)
    : shape_(shape), options_(options), stream_(stream) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) {
    throw std::invalid_argument("GemmProblem: M, N and K must be >= 1, got " + shape_name(shape));
  }
  a_ = DeviceBuffer<uint8_t>(shape.m * shape.k);
  b_ = DeviceBuffer<uint8_t>(shape.n * shape.k);
  a_scale_ = DeviceBuffer<float>(1);
  b_scale_ = DeviceBuffer<float>(1);
  d_ = DeviceBuffer<uint8_t>(shape.m * shape.n * output_bytes(options.d_type));
  {
    // FP32 values before quantization: one buffer, used for A and then for B.
    DeviceBuffer<float> values(std::max(shape.m, shape.n) * shape.k);
    make_operand(values.get(), shape.m, shape.k, options.seed, 0, options.a_format, a_.get(), a_scale_.get(), stream);
    make_operand(values.get(), shape.n, shape.k, options.seed, 1, options.b_format, b_.get(), b_scale_.get(), stream);
    a_scale_host_ = copy_scale_to_host(a_scale_.get(), stream);  // also waits before `values` is freed
    b_scale_host_ = copy_scale_to_host(b_scale_.get(), stream);
  }
  poison_d();
}

GemmArgs GemmProblem::args() const {
  GemmArgs args;
  args.m = shape_.m;
  args.n = shape_.n;
  args.k = shape_.k;
  args.a = a_.get();
  args.lda = shape_.k;
  args.a_format = options_.a_format;
  args.b = b_.get();
  args.ldb = shape_.k;
  args.b_format = options_.b_format;
  args.d = d_.get();
  args.ldd = shape_.n;
  args.d_type = options_.d_type;
  args.a_scale = a_scale_host_;
  args.b_scale = b_scale_host_;
  args.stream = stream_;
  return args;
}

void GemmProblem::poison_d() const {
  // All-ones bytes are a NaN in both BF16 (0xFFFF) and FP32 (0xFFFFFFFF).
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(d_.get(), 0xFF, d_.bytes(), stream_));
}

std::vector<float> GemmProblem::download_d() const {
  std::vector<uint8_t> raw(d_.bytes());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(raw.data(), d_.get(), raw.size(), cudaMemcpyDeviceToHost));
  std::vector<float> d(shape_.m * shape_.n);
  for (size_t i = 0; i < d.size(); ++i) d[i] = load_output(raw.data(), static_cast<int64_t>(i), options_.d_type);
  return d;
}

QuantizedMatrix GemmProblem::download(const DeviceBuffer<uint8_t>& codes, const DeviceBuffer<float>& scale,
                                      int64_t rows, Fp8Format format) const {
  QuantizedMatrix q;
  q.rows = rows;
  q.cols = shape_.k;
  q.format = format;
  q.granularity = ScaleGranularity::kPerTensor;
  q.codes.resize(codes.size());
  q.scales.resize(1);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(q.codes.data(), codes.get(), codes.bytes(), cudaMemcpyDeviceToHost));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(q.scales.data(), scale.get(), sizeof(float), cudaMemcpyDeviceToHost));
  return q;
}

QuantizedMatrix GemmProblem::download_a() const { return download(a_, a_scale_, shape_.m, options_.a_format); }

QuantizedMatrix GemmProblem::download_b() const { return download(b_, b_scale_, shape_.n, options_.b_format); }

// -----------------------------------------------------------------------------
// Timing
// -----------------------------------------------------------------------------

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty list");
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  if (values.size() % 2 == 1) return values[middle];
  const double upper = values[middle];
  return (upper + *std::max_element(values.begin(), values.begin() + middle)) / 2.0;
}

LaunchTimer::LaunchTimer() {
  int device = 0, l2_bytes = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  l2_bytes_ = l2_bytes;
  // Writing more than twice the L2 evicts every line that a launch left behind.
  flush_buffer_ = DeviceBuffer<uint8_t>(2 * l2_bytes_ + (1 << 20));
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&start_));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop_));
}

LaunchTimer::~LaunchTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

std::string LaunchTimer::flush_description() const {
  return "cudaMemsetAsync of " + std::to_string(flush_buffer_.bytes() >> 20) + " MiB (2 x L2 of " +
         std::to_string(l2_bytes_ >> 20) + " MiB + 1 MiB) before every launch, outside the timed events";
}

Status LaunchTimer::launch_once(const std::function<Status()>& launch, float* ms) {
  // The flush is enqueued first, so the GPU is still busy with it while the
  // host enqueues the event and the launch: the start event is not stamped
  // before the kernel could begin.
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), 0, flush_buffer_.bytes(), stream_));
  FP8GEMM_CUDA_CHECK(cudaEventRecord(start_, stream_));
  const Status status = launch();
  if (!status.ok()) {
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return status;
  }
  FP8GEMM_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop_));  // a fault inside the kernel surfaces here
  FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(ms, start_, stop_));
  return Status::success();
}

Status LaunchTimer::time(const std::function<Status()>& launch, const TimingOptions& options, Timing* timing) {
  timing->launch_ms.clear();
  // Warm-up: loads the kernel's module, lets the clocks rise, and lets a
  // library make its one-time choices.
  double warmup_ms = 0.0;
  for (int i = 0; i == 0 || (i < options.max_warmup_launches && warmup_ms < options.warmup_seconds * 1e3); ++i) {
    float ms = 0.0f;
    const Status status = launch_once(launch, &ms);
    if (!status.ok()) return status;
    warmup_ms += ms;
  }
  double measured_ms = 0.0;
  while (static_cast<int>(timing->launch_ms.size()) < options.max_launches &&
         (static_cast<int>(timing->launch_ms.size()) < options.min_launches ||
          measured_ms < options.budget_seconds * 1e3)) {
    float ms = 0.0f;
    const Status status = launch_once(launch, &ms);
    if (!status.ok()) return status;
    timing->launch_ms.push_back(ms);
    measured_ms += ms;
  }
  timing->median_ms = median(timing->launch_ms);
  return Status::success();
}

// -----------------------------------------------------------------------------
// cuBLASLt
// -----------------------------------------------------------------------------

namespace {

void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cublasLtGetStatusString(status));
}

#define FP8GEMM_CUBLAS_CHECK(call) cublas_check((call), #call, __FILE__, __LINE__)

/// cuBLASLt's name for an FP8 format; false for the FNUZ formats, which it lacks.
bool cuda_fp8_type(Fp8Format format, cudaDataType_t* type) {
  if (format == Fp8Format::kE4M3) *type = CUDA_R_8F_E4M3;
  else if (format == Fp8Format::kE5M2) *type = CUDA_R_8F_E5M2;
  else return false;
  return true;
}

constexpr size_t kCublasLtWorkspaceBytes = 32u << 20;  // what NVIDIA suggests for Hopper

template <typename T>
void set_attribute(cublasLtMatmulDesc_t operation, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(operation, attribute, &value, sizeof(value)));
}

}  // namespace

CublasLtGemm::CublasLtGemm(const GemmArgs& args, const float* a_scale, const float* b_scale, bool fast_accumulation)
    : args_(args), a_scale_(a_scale), b_scale_(b_scale) {
  status_ = validate_gemm_args(args);
  if (!status_.ok()) return;
  cudaDataType_t a_type, b_type;
  if (!cuda_fp8_type(args.a_format, &a_type) || !cuda_fp8_type(args.b_format, &b_type)) {
    status_ = Status::error(StatusCode::kNotSupported, std::string("cuBLASLt: FP8 formats e4m3 and e5m2 only, got ") +
                                                           fp8_name(args.a_format) + " x " + fp8_name(args.b_format));
    return;
  }
  const cudaDataType_t d_type = args.d_type == OutputType::kBF16 ? CUDA_R_16BF : CUDA_R_32F;
  workspace_ = DeviceBuffer<uint8_t>(kCublasLtWorkspaceBytes);

  FP8GEMM_CUBLAS_CHECK(cublasLtCreate(&handle_));
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&operation_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // cuBLASLt's A is our B and its B our A (see the class comment), so the
  // transposes read "TN" and the scale pointers swap.
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(b_scale_));
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(a_scale_));
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<int8_t>(fast_accumulation ? 1 : 0));

  // Layouts as stored, column-major: our B is K x N (ld = ldb), our A is
  // K x M (ld = lda), our D is N x M (ld = ldd). C is D (beta = 0).
  FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, b_type, args.k, args.n, args.ldb));
  FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, a_type, args.k, args.m, args.lda));
  FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_layout_, d_type, args.n, args.m, args.ldd));

  cublasLtMatmulPreference_t preference = nullptr;
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const uint64_t workspace_bytes = workspace_.bytes();
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t heuristic = cublasLtMatmulAlgoGetHeuristic(
      handle_, operation_, a_layout_, b_layout_, d_layout_, d_layout_, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (heuristic == CUBLAS_STATUS_NOT_SUPPORTED || (heuristic == CUBLAS_STATUS_SUCCESS && found == 0)) {
    std::ostringstream msg;
    msg << "cuBLASLt: no FP8 algorithm for " << args.m << "x" << args.n << "x" << args.k << ", A "
        << fp8_name(args.a_format) << ", B " << fp8_name(args.b_format) << ", D " << output_name(args.d_type)
        << " (FP8 needs 16-byte aligned rows, e.g. K % 16 == 0)";
    status_ = Status::error(StatusCode::kNotSupported, msg.str());
    return;
  }
  FP8GEMM_CUBLAS_CHECK(heuristic);
  algo_ = result.algo;
}

CublasLtGemm::~CublasLtGemm() {
  if (d_layout_ != nullptr) cublasLtMatrixLayoutDestroy(d_layout_);
  if (b_layout_ != nullptr) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_ != nullptr) cublasLtMatrixLayoutDestroy(a_layout_);
  if (operation_ != nullptr) cublasLtMatmulDescDestroy(operation_);
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

Status CublasLtGemm::launch() const {
  if (!status_.ok()) return status_;
  const float alpha = 1.0f, beta = 0.0f;  // the scales come from the scale pointers
  const cublasStatus_t status =
      cublasLtMatmul(handle_, operation_, &alpha, args_.b, a_layout_, args_.a, b_layout_, &beta, args_.d, d_layout_,
                     args_.d, d_layout_, &algo_, workspace_.get(), workspace_.bytes(), args_.stream);
  if (status != CUBLAS_STATUS_SUCCESS) {
    return Status::error(StatusCode::kRuntimeError, std::string("cublasLtMatmul: ") + cublasLtGetStatusString(status));
  }
  return status_from_launch(kCublasLtName);
}

// -----------------------------------------------------------------------------
// The machine
// -----------------------------------------------------------------------------

namespace {

/// NVML, loaded at run time so that the programs build and run without it.
class Nvml {
 public:
  static const Nvml& instance() {
    static const Nvml nvml;
    return nvml;
  }

  bool available() const { return device_ != nullptr; }

  /// SM clock in MHz, now (max = false) or the highest it can be; -1 if unknown.
  int sm_clock_mhz(bool max) const {
    unsigned int mhz = 0;
    if (!available() || (max ? get_max_clock_ : get_clock_)(device_, kClockSm, &mhz) != kSuccess) return -1;
    return static_cast<int>(mhz);
  }

  /// Display driver version, "580.65.06"; empty if unknown.
  std::string driver_version() const {
    char version[96] = {};
    if (!available() || get_driver_version_(version, sizeof(version)) != kSuccess) return "";
    return version;
  }

 private:
  // The few NVML declarations used here (nvml.h is not always installed).
  using Device = struct nvmlDevice_st*;
  static constexpr int kSuccess = 0;   // NVML_SUCCESS
  static constexpr int kClockSm = 1;   // NVML_CLOCK_SM

  Nvml() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(library_, "nvmlInit_v2"));
    auto by_bus_id = reinterpret_cast<int (*)(const char*, Device*)>(dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
    get_clock_ = reinterpret_cast<int (*)(Device, int, unsigned int*)>(dlsym(library_, "nvmlDeviceGetClockInfo"));
    get_max_clock_ = reinterpret_cast<int (*)(Device, int, unsigned int*)>(dlsym(library_, "nvmlDeviceGetMaxClockInfo"));
    get_driver_version_ = reinterpret_cast<int (*)(char*, unsigned int)>(dlsym(library_, "nvmlSystemGetDriverVersion"));
    if (init == nullptr || by_bus_id == nullptr || get_clock_ == nullptr || get_max_clock_ == nullptr ||
        get_driver_version_ == nullptr || init() != kSuccess) {
      return;
    }
    // NVML numbers devices its own way; the PCI bus id names the same GPU as CUDA's.
    char bus_id[32] = {};
    int cuda_device = 0;
    Device device = nullptr;
    if (cudaGetDevice(&cuda_device) == cudaSuccess &&
        cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device) == cudaSuccess &&
        by_bus_id(bus_id, &device) == kSuccess) {
      device_ = device;
    }
  }

  void* library_ = nullptr;
  Device device_ = nullptr;
  int (*get_clock_)(Device, int, unsigned int*) = nullptr;
  int (*get_max_clock_)(Device, int, unsigned int*) = nullptr;
  int (*get_driver_version_)(char*, unsigned int) = nullptr;
};

/// Spins every thread for `cycles` SM clock cycles; block 0 reports how many passed.
__global__ void spin_kernel(long long cycles, long long* elapsed) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (blockIdx.x == 0 && threadIdx.x == 0) *elapsed = now - start;
}

/// The SM clock while every SM is busy (with integer work, not tensor cores):
/// cycles counted by clock64() over the event time of the kernel.
double measure_sm_clock_mhz(int sm_count) {
  constexpr long long kCycles = 20'000'000;  // about 10 ms at 2 GHz: the launch overhead is lost in it
  DeviceBuffer<long long> elapsed(1);
  cudaEvent_t start, stop;
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&start));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop));
  spin_kernel<<<sm_count, 128>>>(kCycles / 10, elapsed.get());  // wakes the clocks up
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaEventRecord(start));
  spin_kernel<<<sm_count, 128>>>(kCycles, elapsed.get());
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaEventRecord(stop));
  FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  long long cycles = 0;
  FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&cycles, elapsed.get(), sizeof(cycles), cudaMemcpyDeviceToHost));
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(start));
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(stop));
  return static_cast<double>(cycles) / (ms * 1e3);
}

/// "13.0" from the runtime's 13000.
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

int current_sm_clock_mhz() { return Nvml::instance().sm_clock_mhz(false); }

Environment describe_environment() {
  Environment env;
  int device = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  env.gpu = prop.name;
  env.sm_count = prop.multiProcessorCount;
  env.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  env.l2_bytes = prop.l2CacheSize;
  int clock_khz = 0;
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  env.sm_clock_max_mhz = clock_khz / 1000;
  const Nvml& nvml = Nvml::instance();
  env.sm_clock_nvml_max_mhz = nvml.sm_clock_mhz(true);
  env.sm_clock_measured_mhz = measure_sm_clock_mhz(env.sm_count);
  env.sm_clock_nvml_current_mhz = nvml.sm_clock_mhz(false);

  int driver = 0, runtime = 0;
  FP8GEMM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FP8GEMM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const std::string display_driver = nvml.driver_version();
  env.driver = display_driver.empty() ? "CUDA " + cuda_version_text(driver)
                                      : display_driver + " (CUDA " + cuda_version_text(driver) + ")";
  env.runtime = cuda_version_text(runtime);
  const size_t lt = cublasLtGetVersion();  // major * 10000 + minor * 100 + patch
  env.cublaslt = std::to_string(lt / 10000) + "." + std::to_string(lt / 100 % 100) + "." + std::to_string(lt % 100);
  env.git_commit = FP8GEMM_GIT_COMMIT;
  return env;
}

std::vector<std::pair<std::string, std::string>> context_entries(const Environment& env, const LaunchTimer& timer,
                                                                  const TimingOptions& timing) {
  auto mhz = [](double value) { return value < 0 ? std::string("unknown (no NVML)") : std::to_string(int(value + 0.5)); };
  std::ostringstream method;
  method << "median of timed launches; warm-up first (until " << timing.warmup_seconds * 1e3 << " ms or "
         << timing.max_warmup_launches << " launches); then " << timing.min_launches << " to " << timing.max_launches
         << " launches, stopping after " << timing.budget_seconds << " s of measured time; device events around "
         << "each launch alone";
  return {
      {"gpu", env.gpu},
      {"sm_count", std::to_string(env.sm_count)},
      {"compute_capability", env.compute_capability},
      {"sm_clock_mhz_max", std::to_string(env.sm_clock_max_mhz)},
      {"sm_clock_mhz_max_nvml", mhz(env.sm_clock_nvml_max_mhz)},
      {"sm_clock_mhz_measured", mhz(env.sm_clock_measured_mhz)},
      {"sm_clock_mhz_nvml_at_start", mhz(env.sm_clock_nvml_current_mhz)},
      {"driver", env.driver},
      {"runtime", env.runtime},
      {"cublaslt", env.cublaslt},
      {"git_commit", env.git_commit},
      {"l2_flush", timer.flush_description()},
      {"timing", method.str()},
      {"peak_tflops", std::to_string(int(kPeakTflops)) + " (dense FP8 of one H200 SXM, datasheet)"},
  };
}

}  // namespace fp8gemm::bench
