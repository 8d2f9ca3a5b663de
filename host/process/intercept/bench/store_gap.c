/* What an idle gap costs plain memory stores on this machine, without any
 * tool: bursts of BURST iterations of two rdtsc (and, with STORES=1, a
 * 64-byte record's eight stores into a 1 MiB ring, like a traced call's
 * record), a GAP_US sleep after each burst; prints the median burst's CPU ns
 * per iteration. Compare GAP_US 1000 and 5000: the difference is the warm-up
 * the machine charges for memory written after a gap (docs/PERFORMANCE.md).
 *
 *   gcc -O2 host/process/intercept/bench/store_gap.c -o /tmp/store_gap
 *   /tmp/store_gap GAP_US BURST STORES      # e.g. 5000 4000 1
 *
 * x86-64 only (rdtsc). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#define RING_WORDS (1 << 17) /* 1 MiB */
#define BURSTS 201

static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: store_gap GAP_US BURST STORES\n");
        return 2;
    }
    long gap_us = atol(argv[1]);
    int burst = atoi(argv[2]);
    int stores = atoi(argv[3]);
    uint64_t* ring = malloc(RING_WORDS * sizeof *ring);
    for (int i = 0; i < RING_WORDS; i++) ring[i] = 0;
    size_t pos = 0;
    double per_burst[BURSTS];
    for (int b = 0; b < BURSTS; b++) {
        double c0 = cpu_ns();
        for (int i = 0; i < burst; i++) {
            uint64_t t0 = __rdtsc(), t1 = __rdtsc();
            if (stores) {
                uint64_t* p = &ring[pos];
                p[1] = t0, p[2] = t1, p[3] = p[4] = p[5] = p[6] = p[7] = (uint64_t)i;
                __atomic_store_n(&p[0], t0 | 1, __ATOMIC_RELEASE);
                pos = (pos + 8) & (RING_WORDS - 1);
            } else {
                __asm__ volatile("" ::"r"(t0), "r"(t1));
            }
        }
        per_burst[b] = (cpu_ns() - c0) / burst;
        struct timespec p = {gap_us / 1000000, (gap_us % 1000000) * 1000};
        nanosleep(&p, NULL);
    }
    qsort(per_burst, BURSTS, sizeof per_burst[0], cmp);
    printf("gap %ld us, burst %d, stores %d: %.1f ns per iteration\n", gap_us, burst, stores,
           per_burst[BURSTS / 2]);
    free(ring);
    return 0;
}
