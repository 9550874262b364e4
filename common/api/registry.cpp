#include "common/api/registry.h"

#include "common/device/launch.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace fp8gemm {

namespace {

Status not_supported(const std::string& message) { return Status::error(StatusCode::kNotSupported, message); }

}  // namespace

bool StepRegistry::add(const StepInfo& step) {
  for (const StepInfo& other : steps_) {
    if (other.number == step.number) {
      refusals_.push_back("steps/" + step.folder + ": number " + std::to_string(step.number) + " is taken by steps/" +
                          other.folder + "; rename one of the two folders to a free number");
      return false;
    }
  }
  steps_.push_back(step);
  std::sort(steps_.begin(), steps_.end(), [](const StepInfo& x, const StepInfo& y) { return x.number < y.number; });
  return true;
}

// Function-local static: registration runs during static initialization of
// the step files, in an order the language does not fix.
StepRegistry& step_registry() {
  static StepRegistry registry;
  return registry;
}

bool register_step(const StepInfo& step) { return step_registry().add(step); }

const std::vector<StepInfo>& registered_steps() { return step_registry().steps(); }

const std::vector<std::string>& refused_steps() { return step_registry().refusals(); }

const StepInfo* find_step(const std::string& key) {
  for (const StepInfo& s : registered_steps()) {
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
          << "multiples of " << align << ", ldd * " << d_bytes << " a multiple of " << align
          << "), got lda = " << args.lda << ", ldb = " << args.ldb << ", ldd = " << args.ldd;
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
  s = step.launch(args);
  if (!s.ok()) s.message = step.folder + ": " + s.message;
  return s;
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

}  // namespace fp8gemm
