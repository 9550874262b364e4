#include "bench/harness.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "common/device/output.h"
#include "common/api/registry.h"

#ifndef FP8GEMM_GIT_COMMIT
#define FP8GEMM_GIT_COMMIT "unknown"
#endif

namespace fp8gemm::bench {

// -----------------------------------------------------------------------------
// Shapes
// -----------------------------------------------------------------------------

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

// -----------------------------------------------------------------------------
// The problem
// -----------------------------------------------------------------------------

// -----------------------------------------------------------------------------
// Timing
// -----------------------------------------------------------------------------

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
