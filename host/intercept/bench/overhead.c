/* Overhead of interception: N calls of a cheap HIP function, timed with
 * CLOCK_MONOTONIC; prints the median ns per call over R repetitions.
 * Built and run by bench/overhead.sh in three configurations. */
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
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    enum { R = 9 };
    double per[R];
    int dev;
    hipGetDevice(&dev); /* warm up: runtime init, symbol resolution */
    for (int r = 0; r < R; r++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++) hipGetDevice(&dev);
        per[r] = (now_ns() - t0) / n;
    }
    qsort(per, R, sizeof per[0], cmp);
    printf("%.1f\n", per[R / 2]);
    return 0;
}
