/* memory_probe.c: exercises the simulated HIP runtime's copies and
 * stream-ordered allocation for sim/hip/tests/all/memory.rs.
 *
 *   memory_probe copies BYTES   pageable, pinned, registered, D2D copies
 *   memory_probe pool           hipMallocAsync / hipFreeAsync / pools
 *
 * Needs vector_add_kernels.co ($VECTOR_ADD_CO). Prints `PHASE name` on
 * stderr before each group of copies (so the test can group the runtime's
 * `ROCWASM_SIM_LOG` copy lines, which precede the sync that ends the
 * group) and `key=value` result lines on stdout. Exits non-zero on a
 * failed HIP call.
 */
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIP(call)                                                                \
    do {                                                                         \
        hipError_t e_ = (call);                                                  \
        if (e_ != hipSuccess) {                                                  \
            fprintf(stderr, "%s failed: %s\n", #call, hipGetErrorName(e_));      \
            exit(3);                                                             \
        }                                                                        \
    } while (0)

static hipModule_t module;

static hipFunction_t kernel(const char* name) {
    static int loaded = 0;
    if (!loaded) {
        const char* co = getenv("VECTOR_ADD_CO");
        if (!co) {
            fprintf(stderr, "VECTOR_ADD_CO is not set\n");
            exit(2);
        }
        HIP(hipModuleLoad(&module, co));
        loaded = 1;
    }
    hipFunction_t f;
    HIP(hipModuleGetFunction(&f, module, name));
    return f;
}

/* A `fill` dispatch: the test's scenario makes it long, so that work
 * queued after it on the stream waits. */
static void delay(hipStream_t stream) {
    float* d;
    float value = 0;
    int n = 0;
    HIP(hipMalloc((void**)&d, 4));
    void* args[] = {&d, &value, &n};
    HIP(hipModuleLaunchKernel(kernel("fill"), 1, 1, 1, 1, 1, 1, 0, stream, args, NULL));
}

/* On a line of its own even if a runtime thread is writing a log line
 * (one write; the runtime's lines may be written in pieces). */
static void phase(const char* name) {
    fprintf(stderr, "\nPHASE %s\n", name);
}

static int copies(size_t bytes) {
    unsigned char* src = malloc(bytes);
    unsigned char* back = malloc(bytes);
    unsigned char* dev;
    unsigned char* dev2;
    for (size_t i = 0; i < bytes; i++) src[i] = (unsigned char)(i * 7 + 3);
    HIP(hipMalloc((void**)&dev, bytes));
    HIP(hipMalloc((void**)&dev2, bytes));
    printf("PTRS src=%lu back=%lu\n", (unsigned long)(uintptr_t)src, (unsigned long)(uintptr_t)back);

    phase("pageable_h2d");
    HIP(hipMemcpy(dev, src, bytes, hipMemcpyHostToDevice));
    phase("pageable_d2h");
    HIP(hipMemcpy(back, dev, bytes, hipMemcpyDeviceToHost));
    printf("PAGEABLE equal=%d\n", memcmp(src, back, bytes) == 0);

    unsigned char* pinned;
    HIP(hipHostMalloc((void**)&pinned, bytes, 0));
    memcpy(pinned, src, bytes);
    phase("pinned_h2d");
    HIP(hipMemcpy(dev2, pinned, bytes, hipMemcpyHostToDevice));
    phase("d2d");
    HIP(hipMemcpy(dev, dev2, bytes, hipMemcpyDeviceToDevice));

    /* Registered memory: pinned, one copy each way, its device pointer is
     * usable, and unregistering makes it pageable again. */
    memset(back, 0, bytes);
    HIP(hipHostRegister(back, bytes, hipHostRegisterDefault));
    void* mapped = NULL;
    HIP(hipHostGetDevicePointer(&mapped, back + 16, 0));
    printf("REGISTERED device_pointer_ok=%d\n", mapped == (void*)(back + 16));
    phase("registered_d2h");
    HIP(hipMemcpy(back, dev, bytes, hipMemcpyDeviceToHost));
    phase("registered_h2d");
    HIP(hipMemcpy(dev2, back, bytes, hipMemcpyHostToDevice));
    printf("REGISTERED equal=%d again=%d\n", memcmp(src, back, bytes) == 0,
           hipHostRegister(back, bytes, 0) == hipErrorHostMemoryAlreadyRegistered);
    HIP(hipHostUnregister(back));
    printf("UNREGISTERED twice=%d pointer=%d\n", hipHostUnregister(back) == hipErrorHostMemoryNotRegistered,
           hipHostGetDevicePointer(&mapped, back, 0) == hipErrorInvalidValue);

    /* Host to host: the CPU copies, no copy-engine work. */
    phase("h2h");
    HIP(hipMemcpy(back, src, bytes, hipMemcpyHostToHost));

    /* A small pageable hipMemcpyAsync to the device is staged when it is
     * called: overwriting the source afterwards, while the copy still
     * waits behind a long kernel, does not change what arrives. */
    hipStream_t stream;
    HIP(hipStreamCreate(&stream));
    size_t small = bytes < 4096 ? bytes : 4096;
    memset(back, 0x11, small);
    delay(stream);
    phase("async_staged");
    HIP(hipMemcpyAsync(dev, back, small, hipMemcpyHostToDevice, stream));
    int queued = hipStreamQuery(stream) == hipErrorNotReady;
    memset(back, 0x22, small);
    HIP(hipStreamSynchronize(stream));
    HIP(hipMemcpy(src, dev, small, hipMemcpyDeviceToHost));
    printf("SNAPSHOT queued=%d first=%d\n", queued, src[0]);
    phase("end");
    HIP(hipStreamDestroy(stream));
    HIP(hipHostFree(pinned));
    HIP(hipFree(dev));
    HIP(hipFree(dev2));
    free(src);
    free(back);
    return 0;
}

static unsigned long long attr(hipMemPool_t pool, hipMemPoolAttr a) {
    uint64_t v = 0;
    HIP(hipMemPoolGetAttribute(pool, a, &v));
    return (unsigned long long)v;
}

static void report(const char* tag, hipMemPool_t pool) {
    printf("POOL %s reserved=%llu used=%llu\n", tag, attr(pool, hipMemPoolAttrReservedMemCurrent),
           attr(pool, hipMemPoolAttrUsedMemCurrent));
}

static int pool_checks(void) {
    enum { N = 4096 };
    const size_t bytes = N * sizeof(float);
    hipMemPool_t pool;
    HIP(hipDeviceGetDefaultMemPool(&pool, 0));
    hipStream_t s, s2;
    HIP(hipStreamCreate(&s));
    HIP(hipStreamCreate(&s2));
    float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes);
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = 2.0f * (float)i;
        hc[i] = -1.0f;
    }

    /* Allocated on the stream, used by copies and a kernel queued after. */
    float *a, *b, *c;
    HIP(hipMallocAsync((void**)&a, bytes, s));
    HIP(hipMallocAsync((void**)&b, bytes, s));
    HIP(hipMallocAsync((void**)&c, bytes, s));
    HIP(hipMemcpyAsync(a, ha, bytes, hipMemcpyHostToDevice, s));
    HIP(hipMemcpyAsync(b, hb, bytes, hipMemcpyHostToDevice, s));
    int n = N;
    void* args[] = {&a, &b, &c, &n};
    HIP(hipModuleLaunchKernel(kernel("vector_add"), N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
    HIP(hipMemcpyAsync(hc, c, bytes, hipMemcpyDeviceToHost, s));
    HIP(hipStreamSynchronize(s));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= hc[i] == 3.0f * (float)i;
    printf("KERNEL used_async_memory=%d\n", ok);
    report("allocated", pool);

    /* Freed in stream order: the same stream reuses a block at once. */
    HIP(hipFreeAsync(a, s));
    HIP(hipFreeAsync(b, s));
    HIP(hipFreeAsync(c, s));
    float* d;
    HIP(hipMallocAsync((void**)&d, bytes, s));
    printf("REUSE same_stream=%d\n", d == a || d == b || d == c);
    HIP(hipFreeAsync(d, s));
    HIP(hipStreamSynchronize(s));
    report("synchronized", pool);

    /* A release threshold keeps freed memory through a sync; trimming
     * returns it. */
    uint64_t keep = 1 << 30;
    HIP(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep));
    float* e;
    HIP(hipMallocAsync((void**)&e, bytes, s));
    HIP(hipFreeAsync(e, s));
    HIP(hipStreamSynchronize(s));
    report("kept", pool);
    HIP(hipMemPoolTrimTo(pool, 0));
    report("trimmed", pool);
    keep = 0;
    HIP(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep));

    /* Another stream does not reuse a block whose free has not yet
     * happened on the GPU (it waits behind a long kernel). */
    float *f, *g;
    HIP(hipMallocAsync((void**)&f, bytes, s));
    delay(s);
    HIP(hipFreeAsync(f, s));
    HIP(hipMallocFromPoolAsync((void**)&g, bytes, pool, s2));
    printf("REUSE other_stream_before_free=%d\n", g == f);
    HIP(hipFreeAsync(g, s2));
    HIP(hipDeviceSynchronize());
    report("device_synchronized", pool);

    /* hipFreeAsync of hipMalloc memory is an ordinary free. */
    float* plain;
    HIP(hipMalloc((void**)&plain, bytes));
    printf("PLAIN free_async=%d\n", hipFreeAsync(plain, s) == hipSuccess);
    printf("HIGH used=%llu\n", attr(pool, hipMemPoolAttrUsedMemHigh));
    HIP(hipStreamDestroy(s));
    HIP(hipStreamDestroy(s2));
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 3 && strcmp(argv[1], "copies") == 0) {
        return copies((size_t)strtoull(argv[2], NULL, 10));
    }
    if (argc >= 2 && strcmp(argv[1], "pool") == 0) {
        return pool_checks();
    }
    fprintf(stderr, "usage: %s copies BYTES | pool\n", argv[0]);
    return 2;
}
