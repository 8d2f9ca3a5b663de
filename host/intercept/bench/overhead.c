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
 * Built and run by bench/overhead.sh. */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    int burst = argc > 1 ? atoi(argv[1]) : 4000;
    int bursts = argc > 2 ? atoi(argv[2]) : 51;
    long pause_us = argc > 3 ? atol(argv[3]) : 5000;
    if (burst < 1 || bursts < 1 || pause_us < 0) {
        fprintf(stderr, "usage: overhead BURST BURSTS PAUSE_US\n");
        return 2;
    }
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
