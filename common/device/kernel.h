/// @file kernel.h
/// @brief The device toolkit: the one header a step's kernel file includes.
///
/// What every kernel of the ladder uses, whatever the GPU:
///   - common/portability.h      one source for CUDA (nvcc), HIP (clang) and the host
///   - common/fp8/fp8.h          the FP8 formats and their exact decode
///   - common/device/fp8_convert.h  fast decodes of FP8 to FP32 for the inner loops
///   - common/device/output.h    FP32 results written as BF16 or FP32
///   - common/device/dispatch.h  run-time FP8 formats turned into template arguments
///   - common/device/launch.h    alignment checks, row bands, status_from_launch()
///   - common/api/gemm.h         GemmArgs and Status, the API every launcher implements
///
/// Architecture primitives are separate, one concept per header:
/// common/sm90/ (Hopper: mbarrier, TMA, wgmma) and common/cdna/ (AMD MFMA).
#pragma once

#include "common/api/gemm.h"
#include "common/device/dispatch.h"
#include "common/device/fp8_convert.h"
#include "common/device/launch.h"
#include "common/device/output.h"
#include "common/fp8/fp8.h"
#include "common/portability.h"
