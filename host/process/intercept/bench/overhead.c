/* Overhead of interception: bursts of a cheap HIP call, each timed with the
 * calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID: what the application
 * thread itself spends, not the time it was descheduled while the tool's
 * delivery thread shared its core) and with the wall clock; prints the
 * median ns per call over the bursts of each: "cpu wall".
 *
 *   overhead BURST BURSTS PAUSE_US
 *
 * A pause after each burst lets the tool's delivery thread drain the buffer,
 * so a burst that fits in the buffer measures what the application thread
 * pays (timestamps, ids, the copy into the buffer) rather than how fast the
 * output is written. One burst with no pause measures the sustained rate,
 * which a LOSSLESS buffer ties to the slowest consumer.
 *
 *   overhead BURST BURSTS PAUSE_US paired
 *
 * Alternates, in one process, a burst through the runtime's own hipGetDevice
 * (looked up in libamdhip64 itself, so a preloaded tool is bypassed) and a
 * burst through the symbol the program links to (the tool's interposer when
 * preloaded); prints the median CPU ns per call of each and the median of the
 * per-pair differences: "direct traced added". Pairs see the same machine
 * state, so the difference does not move with the host's load the way two
 * separate runs do.
 * Built and run by bench/overhead.sh. */
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef hipError_t (*get_device_fn)(int*);

static double now_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static void pause_for(long pause_us) {
    if (pause_us) {
        struct timespec p = {pause_us / 1000000, (pause_us % 1000000) * 1000};
        nanosleep(&p, NULL);
    }
}

/* CPU ns per call of one burst of `fn`. */
static double burst_cpu(get_device_fn fn, int burst) {
    int dev;
    double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < burst; i++) fn(&dev);
    return (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / burst;
}

static int paired(int burst, int bursts, long pause_us) {
    void* runtime = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
    get_device_fn direct = runtime ? (get_device_fn)dlsym(runtime, "hipGetDevice") : NULL;
    get_device_fn linked = hipGetDevice;
    if (!direct) {
        fprintf(stderr, "overhead: no hipGetDevice in libamdhip64.so.5\n");
        return 1;
    }
    double* d = malloc(sizeof(double) * bursts);
    double* t = malloc(sizeof(double) * bursts);
    double* diff = malloc(sizeof(double) * bursts);
    int dev;
    direct(&dev);
    linked(&dev);
    for (int r = 0; r < bursts; r++) {
        /* Alternate which goes first, so neither always follows a pause. */
        if (r % 2) {
            d[r] = burst_cpu(direct, burst);
            pause_for(pause_us);
            t[r] = burst_cpu(linked, burst);
        } else {
            t[r] = burst_cpu(linked, burst);
            pause_for(pause_us);
            d[r] = burst_cpu(direct, burst);
        }
        diff[r] = t[r] - d[r];
        pause_for(pause_us);
    }
    qsort(d, bursts, sizeof d[0], cmp);
    qsort(t, bursts, sizeof t[0], cmp);
    qsort(diff, bursts, sizeof diff[0], cmp);
    printf("%.1f %.1f %.1f\n", d[bursts / 2], t[bursts / 2], diff[bursts / 2]);
    free(d);
    free(t);
    free(diff);
    return 0;
}

int main(int argc, char** argv) {
    int burst = argc > 1 ? atoi(argv[1]) : 4000;
    int bursts = argc > 2 ? atoi(argv[2]) : 51;
    long pause_us = argc > 3 ? atol(argv[3]) : 5000;
    if (burst < 1 || bursts < 1 || pause_us < 0) {
        fprintf(stderr, "usage: overhead BURST BURSTS PAUSE_US [paired]\n");
        return 2;
    }
    if (argc > 4 && !strcmp(argv[4], "paired")) return paired(burst, bursts, pause_us);
    double* cpu = malloc(sizeof(double) * bursts);
    double* wall = malloc(sizeof(double) * bursts);
    int dev;
    hipGetDevice(&dev); /* warm up: runtime init, symbol resolution */
    for (int r = 0; r < bursts; r++) {
        double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < burst; i++) hipGetDevice(&dev);
        wall[r] = (now_ns(CLOCK_MONOTONIC) - w0) / burst;
        cpu[r] = (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / burst;
        if (pause_us) {
            struct timespec p = {pause_us / 1000000, (pause_us % 1000000) * 1000};
            nanosleep(&p, NULL);
        }
    }
    qsort(cpu, bursts, sizeof cpu[0], cmp);
    qsort(wall, bursts, sizeof wall[0], cmp);
    printf("%.1f %.1f\n", cpu[bursts / 2], wall[bursts / 2]);
    free(cpu);
    free(wall);
    return 0;
}
