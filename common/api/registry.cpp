#include "common/api/registry.h"

#include "common/api/json.h"
#include "common/device/launch.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace fp8gemm {

namespace {

Status not_supported(const std::string& message) { return Status::error(StatusCode::kNotSupported, message); }

}  // namespace

std::vector<GemmShape> default_must_run(const StepConstraints& c) {
  // The ladder's square and DeepSeek-V3's decode shape (M x N x K).
  constexpr int64_t kShapes[][3] = {{4096, 4096, 4096}, {64, 2112, 7168}};
  std::vector<GemmShape> cases;
  for (const auto& s : kShapes) {
    for (int a = 0; a < kNumFp8Formats; ++a) {
      for (int b = 0; b < kNumFp8Formats; ++b) {
        if ((c.formats >> a & 1u) == 0 || (c.formats >> b & 1u) == 0 || (a != b && !c.mixed_formats)) continue;
        for (int d = 0; d < kNumOutputTypes; ++d) {
          if ((c.outputs >> d & 1u) == 0) continue;
          cases.push_back(GemmShape{s[0], s[1], s[2], Fp8Format(a), Fp8Format(b), OutputType(d)});
        }
      }
    }
  }
  return cases;
}

bool same_gemm_shape(const GemmShape& x, const GemmShape& y) {
  return x.m == y.m && x.n == y.n && x.k == y.k && x.a_format == y.a_format && x.b_format == y.b_format &&
         x.d_type == y.d_type;
}

std::string gemm_shape_name(const GemmShape& s) {
  std::string name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  if (s.a_format != Fp8Format::kE4M3 || s.b_format != Fp8Format::kE4M3) {
    name += std::string("_") + fp8_name(s.a_format) + "_" + fp8_name(s.b_format);
  }
  if (s.d_type == OutputType::kFP32) name += "_fp32";
  if (is_fp8_output(s.d_type)) name += std::string("_to_") + output_name(s.d_type);
  return name;
}

StepInfo make_step_info(int number, const std::string& folder, const std::string& title, StepLauncher launch,
                        const StepConstraints& constraints, Accumulation accumulation, const StepOptions& options) {
  StepInfo step;
  step.number = number;
  step.folder = folder;
  step.title = title;
  step.constraints = constraints;
  step.launch = launch;
  step.accumulation = accumulation;
  step.must_run = default_must_run(constraints);
  for (const GemmShape& extra : options.extra_must_run) {
    const bool listed = std::any_of(step.must_run.begin(), step.must_run.end(),
                                    [&](const GemmShape& listed_case) { return same_gemm_shape(listed_case, extra); });
    if (!listed) step.must_run.push_back(extra);
  }
  step.required_compute_capability = options.required_compute_capability;
  step.describe_launch = options.describe_launch;
  step.launch_grouped = options.launch_grouped;
  return step;
}

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
    msg << "output type " << output_name(args.d_type) << " not supported (" << describe_constraints(c) << ")";
    return not_supported(msg.str());
  }
  const struct {
    const char* name;
    ScaleGranularity granularity;
    const float* pointer;
    uint32_t accepted;
  } scales[] = {{"A", args.a_scale_granularity, args.a_scales, c.a_scales},
                {"B", args.b_scale_granularity, args.b_scales, c.b_scales}};
  for (const auto& o : scales) {
    if ((o.accepted >> static_cast<int>(o.granularity) & 1u) == 0) {
      msg << o.name << "'s scale granularity " << granularity_name(o.granularity) << " not supported ("
          << describe_constraints(c) << ")";
      return not_supported(msg.str());
    }
    if (o.granularity == ScaleGranularity::kPerTensor && o.pointer != nullptr && !c.scale_pointers) {
      msg << o.name << "'s per-tensor scale from device memory not supported (the scale is a host float: "
          << (o.name[0] == 'A' ? "a_scale" : "b_scale") << ")";
      return not_supported(msg.str());
    }
  }
  if (args.bias != nullptr && (c.epilogue & kEpilogueBias) == 0) {
    msg << "bias not supported (" << describe_constraints(c) << ")";
    return not_supported(msg.str());
  }
  const uint32_t activation_bit = args.activation == Activation::kGeluTanh  ? kEpilogueGeluTanh
                                  : args.activation == Activation::kGeluErf ? kEpilogueGeluErf
                                                                            : 0u;
  if (activation_bit != 0 && (c.epilogue & activation_bit) == 0) {
    msg << "activation " << activation_name(args.activation) << " not supported (" << describe_constraints(c) << ")";
    return not_supported(msg.str());
  }
  if (args.split_k_reduction != SplitKReduction::kAuto &&
      (c.split_k_reductions >> static_cast<int>(args.split_k_reduction) & 1u) == 0) {
    msg << "split_k_reduction " << split_k_reduction_name(args.split_k_reduction) << " not supported ("
        << describe_constraints(c) << ")";
    return not_supported(msg.str());
  }
  if (args.split_k > c.max_split_k) {
    msg << "split_k = " << args.split_k << " not supported (";
    if (c.max_split_k > 1) {
      msg << "this step splits K into at most " << c.max_split_k << " slices)";
    } else {
      msg << "this step does not split K)";
    }
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

Status run_grouped_step(const StepInfo& step, const GroupedGemmArgs& args) {
  if (step.launch_grouped == nullptr) {
    return not_supported(step.folder + ": this step has no grouped GEMM (the grouped steps are those with one)");
  }
  Status s = validate_grouped_args(args);
  if (!s.ok()) return s;
  s = check_step_constraints(step, args.gemm);
  if (!s.ok()) return s;
  if (args.check_on_host) {
    s = check_grouped_device_data(args);
    if (!s.ok()) return s;
  }
  s = step.launch_grouped(args);
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
  for (int i = 0; i < kNumOutputTypes; ++i) {
    if (c.outputs >> i & 1u) outputs += std::string(outputs.size() == 6 ? " " : ", ") + output_name(OutputType(i));
  }
  add(outputs);
  const uint32_t per_tensor_only = 1u << static_cast<int>(ScaleGranularity::kPerTensor);
  auto granularities = [](uint32_t mask) {
    std::string text;
    for (int i = 0; i < kNumScaleGranularities; ++i) {
      if (mask >> i & 1u) text += std::string(text.empty() ? "" : ", ") + granularity_name(ScaleGranularity(i));
    }
    return text;
  };
  if (c.a_scales != per_tensor_only || c.b_scales != per_tensor_only || c.scale_pointers) {
    add("scales A " + granularities(c.a_scales) + ", B " + granularities(c.b_scales) +
        (c.scale_pointers ? " (per tensor also from device memory)" : ""));
  }
  if (c.epilogue != 0) {
    std::string ops = "epilogue";
    if (c.epilogue & kEpilogueBias) ops += " bias";
    if (c.epilogue & kEpilogueGeluTanh) ops += std::string(ops.size() == 8 ? " " : ", ") + "gelu";
    if (c.epilogue & kEpilogueGeluErf) ops += std::string(ops.size() == 8 ? " " : ", ") + "gelu_erf";
    add(ops);
  }
  if (c.max_split_k > 1) {
    std::string forms;
    for (int r = 1; r < kNumSplitKReductions; ++r) {
      if (c.split_k_reductions >> r & 1u)
        forms += std::string(forms.empty() ? "" : " or ") + split_k_reduction_name(SplitKReduction(r));
    }
    add("split-K into up to " + std::to_string(c.max_split_k) + " slices" + (forms.empty() ? "" : " (" + forms + ")"));
  }
  return out.str();
}

const char* accumulation_name(Accumulation accumulation) {
  switch (accumulation) {
    case Accumulation::kFp32: return "fp32";
    case Accumulation::kTensorCorePromoted: return "tensor_core_promoted";
    case Accumulation::kTensorCoreFast: return "tensor_core_fast";
  }
  return "unknown";
}

namespace {

// ["e4m3", "e5m2"]: the names of the set bits of `mask`, named by `name`.
template <typename Name>
std::string json_names(uint32_t mask, int count, Name name) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) {
    if ((mask >> i & 1u) == 0) continue;
    if (out.size() > 1) out += ", ";
    out += json_string(name(i));
  }
  return out + "]";
}

}  // namespace

std::string steps_json(const std::vector<StepInfo>& steps, const std::vector<std::string>& refusals) {
  std::ostringstream out;
  out << "{\n";
  out << "  \"about\": "
      << json_string(
             "The step registry of fp8gemm, written by `build/bench/fp8gemm --list=json`. README.md's table "
             "\"What each step accepts\" is generated from this file (python3 bench/make_table.py --update "
             "README.md); the test docs/steps_json_matches_registry fails when it differs from the build's "
             "registry.")
      << ",\n";
  out << "  \"steps\": [";
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepInfo& step = steps[i];
    const StepConstraints& c = step.constraints;
    out << (i == 0 ? "\n" : ",\n");
    out << "    {\n";
    out << "      \"number\": " << step.number << ",\n";
    out << "      \"folder\": " << json_string(step.folder) << ",\n";
    out << "      \"title\": " << json_string(step.title) << ",\n";
    out << "      \"accumulation\": " << json_string(accumulation_name(step.accumulation)) << ",\n";
    out << "      \"required_compute_capability\": " << step.required_compute_capability << ",\n";
    out << "      \"grouped\": " << (step.launch_grouped != nullptr ? "true" : "false") << ",\n";
    out << "      \"constraints\": {\n";
    out << "        \"m_multiple\": " << c.m_multiple << ",\n";
    out << "        \"n_multiple\": " << c.n_multiple << ",\n";
    out << "        \"k_multiple\": " << c.k_multiple << ",\n";
    out << "        \"operand_alignment_bytes\": " << c.operand_alignment_bytes << ",\n";
    out << "        \"formats\": "
        << json_names(c.formats, kNumFp8Formats, [](int f) { return std::string(fp8_name(Fp8Format(f))); }) << ",\n";
    out << "        \"mixed_formats\": " << (c.mixed_formats ? "true" : "false") << ",\n";
    out << "        \"outputs\": " << json_names(c.outputs, kNumOutputTypes, [](int d) {
      return std::string(output_name(OutputType(d)));
    }) << ",\n";
    const auto granularity = [](int g) { return std::string(granularity_name(ScaleGranularity(g))); };
    out << "        \"a_scales\": " << json_names(c.a_scales, kNumScaleGranularities, granularity) << ",\n";
    out << "        \"b_scales\": " << json_names(c.b_scales, kNumScaleGranularities, granularity) << ",\n";
    out << "        \"scale_pointers\": " << (c.scale_pointers ? "true" : "false") << ",\n";
    out << "        \"epilogue\": " << json_names(c.epilogue, 3, [](int e) {
      return std::string(e == 0 ? "bias" : e == 1 ? "gelu" : "gelu_erf");
    }) << ",\n";
    out << "        \"max_split_k\": " << c.max_split_k << ",\n";
    out << "        \"split_k_reductions\": " << json_names(c.split_k_reductions, kNumSplitKReductions, [](int r) {
      return std::string(split_k_reduction_name(SplitKReduction(r)));
    }) << "\n";
    out << "      },\n";
    out << "      \"accepts\": " << json_string(describe_constraints(c)) << ",\n";
    out << "      \"must_run\": [";
    for (size_t j = 0; j < step.must_run.size(); ++j) {
      const GemmShape& s = step.must_run[j];
      out << (j == 0 ? "\n" : ",\n");
      out << "        {\"m\": " << s.m << ", \"n\": " << s.n << ", \"k\": " << s.k
          << ", \"a_format\": " << json_string(fp8_name(s.a_format))
          << ", \"b_format\": " << json_string(fp8_name(s.b_format))
          << ", \"d_type\": " << json_string(output_name(s.d_type)) << "}";
    }
    out << (step.must_run.empty() ? "]\n" : "\n      ]\n");
    out << "    }";
  }
  out << (steps.empty() ? "],\n" : "\n  ],\n");
  out << "  \"refused\": [";
  for (size_t i = 0; i < refusals.size(); ++i) out << (i == 0 ? "" : ", ") << json_string(refusals[i]);
  out << "]\n}\n";
  return out.str();
}

}  // namespace fp8gemm
