// What memory new to a process costs the first time it is written: map, fill and unmap a region,
// 200 times, in 4 KB pages or marked for 2 MB huge pages (the measurement behind
// Sources/TSDB/Support/HugePages.swift and Store.aggregateColumns(...into:)):
//
//     cc -O2 Benchmarks/compare/page_faults.c -o /tmp/page_faults
//     /tmp/page_faults 1400000 0   # 1.4 MB (a year of 15-minute buckets' columns), 4 KB pages
//     /tmp/page_faults 4194304 1   # 4 MB with MADV_HUGEPAGE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double microseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: page_faults BYTES HUGE(0|1)\n");
        return 2;
    }
    size_t bytes = strtoull(argv[1], NULL, 10);
    int huge = atoi(argv[2]);
    const int rounds = 200;
    double total = 0;
    for (int r = 0; r < rounds; r++) {
        double start = microseconds();
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return perror("mmap"), 1;
        if (huge) madvise(p, bytes, MADV_HUGEPAGE);
        memset(p, 1, bytes);
        munmap(p, bytes);
        total += microseconds() - start;
    }
    double pages = (double)(bytes + 4095) / 4096;
    printf("%zu bytes, %s: %.1f µs a round, %.2f µs per 4 KB\n", bytes, huge ? "huge pages" : "4 KB pages",
           total / rounds, total / rounds / pages);
    return 0;
}
