/* crash_after_kernels.c: a program that ends badly after doing real work,
 * for checking that a profiler keeps what it recorded.
 *
 *   crash_after_kernels N MODE
 *
 * Loads vector_add_kernels.co (next to the executable, or $VECTOR_ADD_CO),
 * copies a buffer to the device, launches the `fill` kernel N times, copies
 * the buffer back, synchronises, prints "LAUNCHED kernels=N copies=2", and
 * then ends as MODE says: `exit` (returns 0), `segv` (writes through a null
 * pointer), `abort` (abort()), `kill` (SIGKILL to itself), `term` (SIGTERM
 * to itself: a profiler that handles it finalizes, then the process dies
 * of it).
 * Host side is plain C against the HIP C API: gcc -D__HIP_PLATFORM_AMD__
 * crash_after_kernels.c -lamdhip64.
 */
#include <hip/hip_runtime_api.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        hipError_t e_ = (call);                                                  \
        if (e_ != hipSuccess) {                                                  \
            fprintf(stderr, "%s failed: %s\n", #call, hipGetErrorName(e_));      \
            return 3;                                                            \
        }                                                                        \
    } while (0)

enum { LEN = 1024, BLOCK = 256 };

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s N exit|segv|abort|kill|term\n", argv[0]);
        return 2;
    }
    int launches = atoi(argv[1]);
    const char* mode = argv[2];
    char co[4096];
    const char* env = getenv("VECTOR_ADD_CO");
    if (env) {
        snprintf(co, sizeof co, "%s", env);
    } else {
        snprintf(co, sizeof co, "%s", argv[0]);
        char* slash = strrchr(co, '/');
        size_t at = slash ? (size_t)(slash + 1 - co) : 0;
        snprintf(co + at, sizeof co - at, "vector_add_kernels.co");
    }
    hipModule_t module;
    hipFunction_t fill;
    CHECK(hipModuleLoad(&module, co));
    CHECK(hipModuleGetFunction(&fill, module, "fill"));
    static float host[LEN];
    float* dev;
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    CHECK(hipMalloc((void**)&dev, sizeof host));
    CHECK(hipMemcpyAsync(dev, host, sizeof host, hipMemcpyHostToDevice, stream));
    int n = LEN;
    for (int i = 0; i < launches; i++) {
        float value = (float)i;
        void* args[] = {&dev, &value, &n};
        CHECK(hipModuleLaunchKernel(fill, LEN / BLOCK, 1, 1, BLOCK, 1, 1, 0, stream, args, NULL));
    }
    CHECK(hipMemcpyAsync(host, dev, sizeof host, hipMemcpyDeviceToHost, stream));
    CHECK(hipStreamSynchronize(stream));
    printf("LAUNCHED kernels=%d copies=2 last=%g\n", launches, (double)host[LEN - 1]);
    fflush(stdout);
    /* A profiler records a dispatch on the runtime's completion-handler
     * thread, just after the GPU signalled it: the program can see the
     * stream idle a moment before that. A program that dies within that
     * moment loses those records (rocwasm's docs/ARCHITECTURE.md, "Who
     * writes the outputs"). 20 ms keeps this program about what happens
     * after it, even on a loaded machine. */
    usleep(20000);
    if (strcmp(mode, "segv") == 0) {
        *(volatile int*)(uintptr_t)0 = 1;
    } else if (strcmp(mode, "abort") == 0) {
        abort();
    } else if (strcmp(mode, "kill") == 0) {
        kill(getpid(), SIGKILL);
        pause();
    } else if (strcmp(mode, "term") == 0) {
        kill(getpid(), SIGTERM);
        for (;;) pause();
    }
    return 0;
}
