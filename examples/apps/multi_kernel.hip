// multi_kernel.hip: a real HIP program (hipcc --offload-arch=gfx90a) with
// several __global__ kernels launched with <<<>>>, copies (linear and one
// pitched 2D copy), roctx ranges and worker threads (--threads N, default 8),
// each on its own stream.
// With --regions it runs three workers one after the other on the main
// thread instead, the second between roctxProfilerResume(0) and
// roctxProfilerPause(0) (what rocprofv3's --selected-regions records), and
// prints REGION kernels=K copies=C for that second worker.
// With --dispatches N it launches N small `scale` kernels back to back on one
// stream instead (the end-to-end bench's workload), then prints
// PEAK rss_kb=R, its peak resident memory (VmHWM), the profiler's included.
// With --copy-launch N it runs N rounds of (host-to-device copy, kernel) on
// one stream with a single synchronisation at the end.
// Only vector_add's result is checked (the simulated runtime reproduces it
// on the host); the other kernels exercise launches and timing.
// Prints DEVICES, COUNTS kernels=N copies=M markers=K hip_calls=H, RESULT.
#include <hip/hip_runtime.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" {
int roctxRangePushA(const char* message);
int roctxRangePop(void);
void roctxMarkA(const char* message);
int roctxProfilerPause(unsigned long long tid);
int roctxProfilerResume(unsigned long long tid);
}

static std::atomic<int> hip_calls{0}, kernels{0}, copies{0}, markers{0}, failures{0};

#define HIP(call)                                                                         \
    do {                                                                                  \
        hip_calls++;                                                                      \
        hipError_t e_ = (call);                                                           \
        if (e_ != hipSuccess) {                                                           \
            std::fprintf(stderr, "%s failed: %s (%d)\n", #call, hipGetErrorName(e_), e_); \
            failures++;                                                                   \
            return;                                                                       \
        }                                                                                 \
    } while (0)

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

__global__ void scale(float* a, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= s;
}

__global__ void square(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] * a[i];
}

__global__ void block_sum(const float* a, float* sums, int n) {
    __shared__ float part[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0;
        for (int k = 0; k < blockDim.x; k++) s += part[k];
        sums[blockIdx.x] = s;
    }
}

constexpr int N = 1 << 14;
constexpr int BLOCK = 256;
// The 2D copy reads the result as ROWS rows of COLS floats into host rows
// padded to PADDED floats.
constexpr int COLS = 128;
constexpr int ROWS = N / COLS;
constexpr int PADDED = COLS + 16;

static void worker(int id) {
    char label[64];
    std::snprintf(label, sizeof label, "worker %d", id);
    roctxRangePushA(label);
    markers++;
    std::vector<float> ha(N), hb(N), hc(N);
    for (int i = 0; i < N; i++) {
        ha[i] = float(i % 1000 + id);
        hb[i] = float(3 * (i % 500));
    }
    hipStream_t stream;
    float *da, *db, *dc, *tmp, *sums;
    HIP(hipStreamCreate(&stream));
    HIP(hipMalloc(&da, N * sizeof(float)));
    HIP(hipMalloc(&db, N * sizeof(float)));
    HIP(hipMalloc(&dc, N * sizeof(float)));
    HIP(hipMalloc(&tmp, N * sizeof(float)));
    HIP(hipMalloc(&sums, (N / BLOCK) * sizeof(float)));
    HIP(hipMemcpyAsync(da, ha.data(), N * sizeof(float), hipMemcpyHostToDevice, stream));
    HIP(hipMemcpyAsync(db, hb.data(), N * sizeof(float), hipMemcpyHostToDevice, stream));
    copies += 2;

    roctxRangePushA("kernels");
    markers++;
    vector_add<<<N / BLOCK, BLOCK, 0, stream>>>(da, db, dc, N);
    square<<<N / BLOCK, BLOCK, 0, stream>>>(da, tmp, N);
    scale<<<N / BLOCK, BLOCK, 0, stream>>>(tmp, 0.5f, N);
    block_sum<<<N / BLOCK, BLOCK, 0, stream>>>(tmp, sums, N);
    kernels += 4;
    hip_calls += 4;  // each <<<>>> is one hipLaunchKernel
    HIP(hipGetLastError());
    roctxRangePop();

    HIP(hipMemcpyAsync(hc.data(), dc, N * sizeof(float), hipMemcpyDeviceToHost, stream));
    copies++;
    std::vector<float> padded(ROWS * PADDED, -1.0f);
    HIP(hipMemcpy2DAsync(padded.data(), PADDED * sizeof(float), dc, COLS * sizeof(float),
                         COLS * sizeof(float), ROWS, hipMemcpyDeviceToHost, stream));
    copies++;
    HIP(hipStreamSynchronize(stream));
    roctxMarkA("synchronized");
    markers++;
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (hc[i] != ha[i] + hb[i]) bad++;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < PADDED; c++) {
            float want = c < COLS ? hc[r * COLS + c] : -1.0f;
            if (padded[r * PADDED + c] != want) bad++;
        }
    if (bad) {
        std::fprintf(stderr, "worker %d: %d wrong results\n", id, bad);
        failures++;
    }
    HIP(hipFree(da));
    HIP(hipFree(db));
    HIP(hipFree(dc));
    HIP(hipFree(tmp));
    HIP(hipFree(sums));
    HIP(hipStreamDestroy(stream));
    roctxRangePop();
}

/// N launches of `scale` over one block, then one synchronisation.
static void dispatches(long n) {
    float* d;
    HIP(hipMalloc(&d, BLOCK * sizeof(float)));
    for (long i = 0; i < n; i++) {
        scale<<<1, BLOCK>>>(d, 1.0f, BLOCK);
        kernels++;
        hip_calls++;
    }
    HIP(hipDeviceSynchronize());
    HIP(hipFree(d));
}

/// N rounds of (a small host-to-device copy, then a kernel reading it) on
/// one stream, with no synchronisation until the end: every kernel waits
/// for the copy before it (a barrier packet), and the runtime reclaims
/// completed signals while the queue is still behind.
static void copy_launch(long n) {
    hipStream_t stream;
    float* d;
    std::vector<float> h(BLOCK, 1.0f);
    HIP(hipStreamCreate(&stream));
    HIP(hipMalloc(&d, BLOCK * sizeof(float)));
    for (long i = 0; i < n; i++) {
        HIP(hipMemcpyAsync(d, h.data(), BLOCK * sizeof(float), hipMemcpyHostToDevice, stream));
        copies++;
        scale<<<1, BLOCK, 0, stream>>>(d, 1.0f, BLOCK);
        kernels++;
        hip_calls++;
    }
    HIP(hipStreamSynchronize(stream));
    HIP(hipFree(d));
    HIP(hipStreamDestroy(stream));
}

/// VmHWM of /proc/self/status, in kB (0 if unreadable).
static long peak_rss_kb() {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long kb = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    std::fclose(f);
    return kb;
}

static bool report_devices() {
    int count = 0;
    hip_calls++;
    hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess || count == 0) {
        std::fprintf(stderr, "hipGetDeviceCount: %s (%d)\n", hipGetErrorName(e), e);
        return false;
    }
    hipDeviceProp_t props;
    hip_calls++;
    if (hipGetDeviceProperties(&props, 0) != hipSuccess) return false;
    std::printf("DEVICES n=%d name=%s arch=%s\n", count, props.name, props.gcnArchName);
    return true;
}

int main(int argc, char** argv) {
    int threads = 8;
    bool regions = false;
    long n_dispatches = 0;
    long n_copy_launch = 0;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--regions")) regions = true;
        if (!std::strcmp(argv[i], "--dispatches") && i + 1 < argc) n_dispatches = std::atol(argv[i + 1]);
        if (!std::strcmp(argv[i], "--copy-launch") && i + 1 < argc) n_copy_launch = std::atol(argv[i + 1]);
    }
    if (threads < 1 || threads > 64) threads = 8;
    roctxMarkA("start");
    markers++;
    bool ok = report_devices();
    if (ok && n_dispatches > 0) {
        dispatches(n_dispatches);
    } else if (ok && n_copy_launch > 0) {
        copy_launch(n_copy_launch);
    } else if (ok && regions) {
        worker(0);
        int k = kernels.load(), c = copies.load();
        roctxProfilerResume(0);
        worker(1);
        roctxProfilerPause(0);
        std::printf("REGION kernels=%d copies=%d\n", kernels.load() - k, copies.load() - c);
        worker(2);
        hip_calls++;
        if (hipDeviceSynchronize() != hipSuccess) failures++;
    } else if (ok) {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; t++) pool.emplace_back(worker, t);
        for (auto& t : pool) t.join();
        hip_calls++;
        if (hipDeviceSynchronize() != hipSuccess) failures++;
    }
    std::printf("COUNTS kernels=%d copies=%d markers=%d hip_calls=%d\n", kernels.load(), copies.load(),
                markers.load(), hip_calls.load());
    if (n_dispatches > 0) std::printf("PEAK rss_kb=%ld\n", peak_rss_kb());
    bool pass = ok && failures == 0;
    std::printf("RESULT %s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
