// GELU's tanh form on the GPU, two ways, against the same formula in double (issue 9 run 13):
//   ex2:  z / (1 + 2^t) with ex2.approx and __fdividef (common/device/epilogue.h as of f744e14)
//   tanh: z / 2 + z / 2 * tanh.approx(u)              (the experiment's build)
// over 2^26 evenly spaced z in [-16, 16) and 2^26 z = +-2^e (1 + f) with e in [-20, 5].
// Prints, for each: the largest |y - Y| / (|z| + |Y|) in units of u = 2^-24 (the check's e_act
// is 8 of them), the largest |y - Y| / |z|, tanh.approx's own largest relative error, and how
// many z round to a different BF16 than Y does.
//   nvcc -O3 -arch=sm_90a run13_gelu_error.cu -o gelu_error && ./gelu_error
#include <cuda_bf16.h>
#include <cstdint>
#include <cstdio>

#define CHECK(x)                                          \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                           \
    }                                                     \
  } while (0)

struct Worst {
  unsigned act_bits, over_z_bits, tanh_rel_bits;
  unsigned long long bf16_differs;
};

__device__ float gelu_ex2(float z) {
  constexpr float kC1 = -2.0f * 0.7978845608028654f * 1.4426950408889634f, kC2 = 0.044715f * kC1;
  const float t = z * fmaf(kC2, z * z, kC1);
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(t));
  return __fdividef(z, 1.0f + e);
}
__device__ float tanh_approx(float u) {
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
  return t;
}
__device__ float gelu_tanh(float z) {
  const float u = z * fmaf(0.044715f * 0.7978845608028654f, z * z, 0.7978845608028654f);
  const float half_z = 0.5f * z;
  return fmaf(half_z, tanh_approx(u), half_z);
}
__device__ void record(Worst* w, float y, double ref, float z) {
  const double err = fabs(double(y) - ref);
  if (z != 0.0f) {  // GELU(0) = 0 exactly in every form
    atomicMax(&w->act_bits, __float_as_uint(float(err / (fabs(double(z)) + fabs(ref)) * 16777216.0)));
    atomicMax(&w->over_z_bits, __float_as_uint(float(err / fabs(double(z)))));
  }
  if (__bfloat162float(__float2bfloat16(y)) != __bfloat162float(__double2bfloat16(ref)))
    atomicAdd(&w->bf16_differs, 1ull);
}
__global__ void probe(Worst* w, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < 2 * n; i += int64_t{gridDim.x} * blockDim.x) {
    float z;
    if (i < n) z = -16.0f + 32.0f * float(double(i) / double(n));
    else {
      const int64_t j = i - n;
      const int e = -20 + int(j % 26);
      const float f = float(double(j / 26) / double(n / 26));
      z = ldexpf(1.0f + f, e) * ((j / 13) % 2 ? -1.0f : 1.0f);
    }
    const double zd = z, u = 0.7978845608028654 * (zd + 0.044715 * zd * zd * zd);
    const double ref = 0.5 * zd * (1.0 + tanh(u));
    record(&w[0], gelu_ex2(z), ref, z);
    record(&w[1], gelu_tanh(z), ref, z);
    const float uf = float(u), tu = tanh(double(uf));
    if (tu != 0.0f)
      atomicMax(&w[1].tanh_rel_bits,
                __float_as_uint(float(fabs(double(tanh_approx(uf)) - tanh(double(uf))) / fabs(tanh(double(uf))))));
  }
}
int main() {
  const int64_t n = int64_t{1} << 26;
  Worst* w;
  CHECK(cudaMalloc(&w, 2 * sizeof(Worst)));
  CHECK(cudaMemset(w, 0, 2 * sizeof(Worst)));
  probe<<<132 * 8, 256>>>(w, n);
  CHECK(cudaGetLastError());
  Worst h[2];
  CHECK(cudaMemcpy(h, w, sizeof h, cudaMemcpyDeviceToHost));
  const char* names[2] = {"ex2 + fast division (f744e14)", "tanh.approx"};
  for (int k = 0; k < 2; ++k) {
    unsigned b = h[k].act_bits, c = h[k].over_z_bits, d = h[k].tanh_rel_bits;
    float act, over_z, tanh_rel;
    memcpy(&act, &b, 4);
    memcpy(&over_z, &c, 4);
    memcpy(&tanh_rel, &d, 4);
    std::printf("%-30s max |y-Y|/(|z|+|Y|) = %.3g u   max |y-Y|/|z| = %.3g   BF16 differs at %llu of %lld z", names[k],
                act, over_z, h[k].bf16_differs, (long long)(2 * n));
    if (k == 1) std::printf("   tanh.approx max relative error %.3g (2^%.2f)", tanh_rel, log2f(tanh_rel));
    std::printf("\n");
  }
  return 0;
}
