/* vector_add.c: a C program against the HIP C API (no hipcc needed for the
 * host side): gcc -D__HIP_PLATFORM_AMD__ vector_add.c -lamdhip64 -lroctx64.
 *
 * It loads vector_add_kernels.co (next to the executable, or $VECTOR_ADD_CO)
 * with hipModuleLoad, then runs T worker threads (argv[1], default 4), each
 * with its own stream: H2D copies, vector_add twice (c = a + b; e = c + a),
 * a fill kernel on a scratch buffer, D2H copies, roctx ranges and markers.
 * It checks c = a + b and e = 2a + b and prints its own counts:
 *   DEVICES n=<count> name=<props.name> arch=<gcnArchName>
 *   COUNTS kernels=N copies=M markers=K hip_calls=H
 *   RESULT PASS|FAIL
 */
#include <hip/hip_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libroctx64.so.4 (ROCTX_4.1); Debian ships no roctx header. */
int roctxRangePushA(const char* message);
int roctxRangePop(void);
void roctxMarkA(const char* message);
uint64_t roctxRangeStartA(const char* message);
void roctxRangeStop(uint64_t id);

static atomic_int hip_calls, kernels, copies, markers, failures;

#define HIP(call)                                                                  \
    do {                                                                           \
        atomic_fetch_add(&hip_calls, 1);                                           \
        hipError_t e_ = (call);                                                    \
        if (e_ != hipSuccess) {                                                    \
            fprintf(stderr, "%s failed: %s (%d)\n", #call, hipGetErrorName(e_), e_); \
            atomic_fetch_add(&failures, 1);                                        \
            return NULL;                                                           \
        }                                                                          \
    } while (0)

static hipFunction_t k_vector_add, k_fill;
enum { N = 4096, BLOCK = 256 };

static void* worker(void* arg) {
    int id = (int)(intptr_t)arg;
    char label[64];
    snprintf(label, sizeof label, "worker %d", id);
    roctxRangePushA(label);
    atomic_fetch_add(&markers, 1);

    float *ha = malloc(N * sizeof(float)), *hb = malloc(N * sizeof(float));
    float *hc = malloc(N * sizeof(float)), *he = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        ha[i] = (float)(i + id);
        hb[i] = (float)(2 * i);
    }
    hipStream_t stream;
    float *da, *db, *dc, *de, *scratch;
    HIP(hipStreamCreate(&stream));
    HIP(hipMalloc((void**)&da, N * sizeof(float)));
    HIP(hipMalloc((void**)&db, N * sizeof(float)));
    HIP(hipMalloc((void**)&dc, N * sizeof(float)));
    HIP(hipMalloc((void**)&de, N * sizeof(float)));
    HIP(hipMalloc((void**)&scratch, N * sizeof(float)));
    HIP(hipMemcpyAsync(da, ha, N * sizeof(float), hipMemcpyHostToDevice, stream));
    HIP(hipMemcpyAsync(db, hb, N * sizeof(float), hipMemcpyHostToDevice, stream));
    atomic_fetch_add(&copies, 2);

    uint64_t range = roctxRangeStartA("kernels");
    atomic_fetch_add(&markers, 1);
    int n = N;
    void* args1[] = {&da, &db, &dc, &n};
    HIP(hipModuleLaunchKernel(k_vector_add, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, stream, args1, NULL));
    void* args2[] = {&dc, &da, &de, &n};
    HIP(hipModuleLaunchKernel(k_vector_add, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, stream, args2, NULL));
    float value = 1.0f;
    void* args3[] = {&scratch, &value, &n};
    HIP(hipModuleLaunchKernel(k_fill, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, stream, args3, NULL));
    atomic_fetch_add(&kernels, 3);
    roctxRangeStop(range);

    HIP(hipMemcpyAsync(hc, dc, N * sizeof(float), hipMemcpyDeviceToHost, stream));
    HIP(hipMemcpyAsync(he, de, N * sizeof(float), hipMemcpyDeviceToHost, stream));
    atomic_fetch_add(&copies, 2);
    HIP(hipStreamSynchronize(stream));
    roctxMarkA("synchronized");
    atomic_fetch_add(&markers, 1);

    int bad = 0;
    for (int i = 0; i < N; i++) {
        if (hc[i] != ha[i] + hb[i] || he[i] != 2 * ha[i] + hb[i]) bad++;
    }
    if (bad) {
        fprintf(stderr, "worker %d: %d wrong results\n", id, bad);
        atomic_fetch_add(&failures, 1);
    }
    HIP(hipFree(da));
    HIP(hipFree(db));
    HIP(hipFree(dc));
    HIP(hipFree(de));
    HIP(hipFree(scratch));
    HIP(hipStreamDestroy(stream));
    free(ha), free(hb), free(hc), free(he);
    roctxRangePop();
    return NULL;
}

static void* setup(const char* co_path) {
    int count = 0;
    HIP(hipGetDeviceCount(&count));
    hipDeviceProp_t props;
    HIP(hipGetDeviceProperties(&props, 0));
    printf("DEVICES n=%d name=%s arch=%s\n", count, props.name, props.gcnArchName);
    hipModule_t module;
    HIP(hipModuleLoad(&module, co_path));
    HIP(hipModuleGetFunction(&k_vector_add, module, "vector_add"));
    HIP(hipModuleGetFunction(&k_fill, module, "fill"));
    return (void*)1;
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    if (threads < 1 || threads > 64) threads = 4;
    char co_path[4096];
    const char* env = getenv("VECTOR_ADD_CO");
    if (env) {
        snprintf(co_path, sizeof co_path, "%s", env);
    } else {
        snprintf(co_path, sizeof co_path, "%s", argv[0]);
        char* slash = strrchr(co_path, '/');
        snprintf(slash ? slash + 1 : co_path, sizeof co_path - (slash ? (size_t)(slash + 1 - co_path) : 0),
                 "vector_add_kernels.co");
    }
    roctxMarkA("start");
    atomic_fetch_add(&markers, 1);
    if (!setup(co_path)) {
        printf("COUNTS kernels=%d copies=%d markers=%d hip_calls=%d\n", kernels, copies, markers, hip_calls);
        printf("RESULT FAIL\n");
        return 1;
    }
    pthread_t tid[64];
    for (int t = 0; t < threads; t++) pthread_create(&tid[t], NULL, worker, (void*)(intptr_t)t);
    for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    atomic_fetch_add(&hip_calls, 1);
    if (hipDeviceSynchronize() != hipSuccess) atomic_fetch_add(&failures, 1);
    printf("COUNTS kernels=%d copies=%d markers=%d hip_calls=%d\n", kernels, copies, markers, hip_calls);
    printf("RESULT %s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
