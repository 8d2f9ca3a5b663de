// Device code for vector_add.c, compiled to a code object with
// `hipcc --genco --offload-arch=gfx90a` and loaded with hipModuleLoad.
// extern "C" keeps the kernel names unmangled for hipModuleGetFunction.
#include <hip/hip_runtime.h>

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void fill(float* d, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = value;
}
