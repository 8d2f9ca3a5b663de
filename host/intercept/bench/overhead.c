/* Overhead of interception: bursts of a cheap HIP call, each timed with
 * CLOCK_MONOTONIC; prints the median ns per call over the bursts.
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

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
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
    double* per = malloc(sizeof(double) * bursts);
    int dev;
    hipGetDevice(&dev); /* warm up: runtime init, symbol resolution */
    for (int r = 0; r < bursts; r++) {
        double t0 = now_ns();
        for (int i = 0; i < burst; i++) hipGetDevice(&dev);
        per[r] = (now_ns() - t0) / burst;
        if (pause_us) {
            struct timespec p = {pause_us / 1000000, (pause_us % 1000000) * 1000};
            nanosleep(&p, NULL);
        }
    }
    qsort(per, bursts, sizeof per[0], cmp);
    printf("%.1f\n", per[bursts / 2]);
    free(per);
    return 0;
}
