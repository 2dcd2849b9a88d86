/* PMIx fence latency as a PMIx client sees it: the mean time of PMIx_Fence over the whole
 * namespace without data, and with 1 KiB per rank collected (a modex), after a warm-up.
 * Rank 0 prints "fence_us=X collect_us=Y". Run under a PMIx server: cohort run, mpirun. */
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? atoi(argv[1]) : 50;
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init failed: not started under a PMIx server\n");
        return 1;
    }
    pmix_proc_t all;
    PMIX_PROC_CONSTRUCT(&all);
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    PMIx_Fence(&all, 1, NULL, 0);

    double start = now_us();
    for (int i = 0; i < iterations; ++i) {
        PMIx_Fence(&all, 1, NULL, 0);
    }
    const double fence_us = (now_us() - start) / iterations;

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    char blob[1024];
    memset(blob, 'x', sizeof(blob) - 1);
    blob[sizeof(blob) - 1] = '\0';
    start = now_us();
    for (int i = 0; i < iterations; ++i) {
        /* The same key each time: a fence sends every committed value, not only new ones. */
        blob[0] = (char)('a' + i % 26);
        pmix_value_t value;
        PMIX_VALUE_LOAD(&value, blob, PMIX_STRING);
        PMIx_Put(PMIX_GLOBAL, "bench.blob", &value);
        PMIX_VALUE_DESTRUCT(&value);
        PMIx_Commit();
        PMIx_Fence(&all, 1, &collect, 1);
    }
    const double collect_us = (now_us() - start) / iterations;
    if (me.rank == 0) {
        printf("fence_us=%.1f collect_us=%.1f\n", fence_us, collect_us);
    }
    PMIx_Finalize(NULL, 0);
    return 0;
}
