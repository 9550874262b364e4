#include "common/registry.h"

#include "common/launch.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace fp8gemm {

namespace {

// Function-local static: registration runs during static initialization of
// the step files, in an order the language does not fix.
std::vector<StepInfo>& registry() {
  static std::vector<StepInfo> steps;
  return steps;
}

Status not_supported(const std::string& message) { return Status::error(StatusCode::kNotSupported, message); }

}  // namespace

bool register_step(const StepInfo& step) {
  auto& steps = registry();
  steps.push_back(step);
  std::sort(steps.begin(), steps.end(), [](const StepInfo& x, const StepInfo& y) { return x.number < y.number; });
  return true;
}

const std::vector<StepInfo>& registered_steps() { return registry(); }

const StepInfo* find_step(const std::string& key) {
  for (const StepInfo& s : registry()) {
    if (s.folder == key) return &s;
    char* end = nullptr;
    const long number = std::strtol(key.c_str(), &end, 10);
    if (!key.empty() && end != nullptr && *end == '\0' && number == s.number) return &s;
  }
  return nullptr;
}

Status check_step_constraints(const StepInfo& step, const GemmArgs& args) {
  const StepConstraints& c = step.constraints;
  std::ostringstream msg;
  msg << step.folder << ": ";
  auto multiple = [&](const char* name, int64_t value, int64_t of) {
    if (value % of == 0) return true;
    msg << name << " % " << of << " == 0 required, got " << name << " = " << value;
    return false;
  };
  if (!multiple("M", args.m, c.m_multiple) || !multiple("N", args.n, c.n_multiple) ||
      !multiple("K", args.k, c.k_multiple)) {
    return not_supported(msg.str());
  }
  const int64_t align = c.operand_alignment_bytes;
  if (align > 1) {
    const int64_t d_bytes = output_bytes(args.d_type);
    if (!operand_rows_aligned(args, align) || !output_rows_aligned(args, align)) {
      msg << "rows of A, B and D must start on " << align << "-byte boundaries (pointers aligned, lda and ldb "
          << "multiples of " << align << ", ldd * " << d_bytes << " a multiple of " << align << "), got lda = "
          << args.lda << ", ldb = " << args.ldb << ", ldd = " << args.ldd;
      return not_supported(msg.str());
    }
  }
  for (Fp8Format f : {args.a_format, args.b_format}) {
    if ((c.formats >> static_cast<int>(f) & 1u) == 0) {
      msg << "FP8 format " << fp8_name(f) << " not supported (" << describe_constraints(c) << ")";
      return not_supported(msg.str());
    }
  }
  if (!c.mixed_formats && args.a_format != args.b_format) {
    msg << "A and B must have the same FP8 format, got " << fp8_name(args.a_format) << " and "
        << fp8_name(args.b_format);
    return not_supported(msg.str());
  }
  if ((c.outputs >> static_cast<int>(args.d_type) & 1u) == 0) {
    msg << "output type " << output_name(args.d_type) << " not supported";
    return not_supported(msg.str());
  }
  return Status::success();
}

Status run_step(const StepInfo& step, const GemmArgs& args) {
  Status s = validate_gemm_args(args);
  if (!s.ok()) return s;
  s = check_step_constraints(step, args);
  if (!s.ok()) return s;
  return step.launch(args);
}

std::string describe_constraints(const StepConstraints& c) {
  std::ostringstream out;
  const char* sep = "";
  auto add = [&](const std::string& text) {
    out << sep << text;
    sep = "; ";
  };
  if (c.m_multiple > 1) add("M % " + std::to_string(c.m_multiple) + " == 0");
  if (c.n_multiple > 1) add("N % " + std::to_string(c.n_multiple) + " == 0");
  if (c.k_multiple > 1) add("K % " + std::to_string(c.k_multiple) + " == 0");
  if (c.operand_alignment_bytes > 1) add(std::to_string(c.operand_alignment_bytes) + "-byte aligned rows");
  std::string formats = "formats";
  for (int i = 0; i < kNumFp8Formats; ++i) {
    if (c.formats >> i & 1u) formats += std::string(formats.size() == 7 ? " " : ", ") + fp8_name(Fp8Format(i));
  }
  add(formats);
  if (!c.mixed_formats) add("A and B in the same format");
  std::string outputs = "output";
  if (c.outputs & 1u) outputs += " bf16";
  if (c.outputs & 2u) outputs += (c.outputs & 1u) ? ", fp32" : " fp32";
  add(outputs);
  return out.str();
}

Status status_from_launch(const char* step) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return Status::success();
  std::ostringstream msg;
  msg << step << ": ";
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
    int device = 0, major = 0, minor = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    msg << "no kernel image for this GPU (compute capability " << major << "." << minor
        << "); rebuild with FP8GEMM_CUDA_ARCHITECTURES including it (" << cudaGetErrorString(err) << ")";
    return not_supported(msg.str());
  }
  msg << cudaGetErrorString(err);
  return Status::error(StatusCode::kRuntimeError, msg.str());
}

}  // namespace fp8gemm
