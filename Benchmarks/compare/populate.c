// Whether asking the kernel to fault pages in at once is cheaper than faulting them in one by
// one (the measurement behind Benchmarks/results/NOTES.md, "A whole tsdb query"):
//
//     cc -O2 Benchmarks/compare/populate.c -o /tmp/populate
//     /tmp/populate write 128          # 128 fresh pages: written one by one, then MADV_POPULATE_WRITE first
//     /tmp/populate read FILE OFFSET LENGTH   # a file's pages (code): one read per 64 KB (the
//                                             # kernel maps 16 pages around a fault), one per page,
//                                             # then MADV_POPULATE_READ
//
// Each way is timed over 300 rounds of map, fault in, unmap; the figure is a round's mean.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { rounds = 300 };

static double microseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

// Fresh anonymous pages written one by one, with or without MADV_POPULATE_WRITE first.
static int fresh(size_t pages) {
    size_t bytes = pages * 4096;
    for (int populate = 0; populate <= 1; populate++) {
        double total = 0;
        for (int r = 0; r < rounds; r++) {
            double start = microseconds();
            char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) return perror("mmap"), 1;
            if (populate && madvise(p, bytes, MADV_POPULATE_WRITE) != 0) return perror("madvise"), 1;
            for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
            munmap(p, bytes);
            total += microseconds() - start;
        }
        printf("%zu fresh pages, %s: %.1f us a round, %.2f us a page\n", pages,
               populate ? "MADV_POPULATE_WRITE first" : "written one by one", total / rounds,
               total / rounds / pages);
    }
    return 0;
}

// A file's pages already in the page cache, mapped as code is, read in three ways.
static int file(const char *path, size_t offset, size_t length) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return perror(path), 1;
    static const char *ways[] = {"one read per 64 KB", "one read per page", "MADV_POPULATE_READ"};
    volatile char sink = 0;
    for (int way = 0; way < 3; way++) {
        double total = 0;
        for (int r = 0; r < rounds; r++) {
            char *p = mmap(NULL, length, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)offset);
            if (p == MAP_FAILED) return perror("mmap"), 1;
            double start = microseconds();
            if (way == 2) {
                if (madvise(p, length, MADV_POPULATE_READ) != 0) return perror("madvise"), 1;
            } else {
                for (size_t i = 0; i < length; i += way == 0 ? 65536 : 4096) sink += p[i];
            }
            total += microseconds() - start;
            munmap(p, length);
        }
        printf("%zu bytes of %s, %s: %.1f us a round\n", length, path, ways[way], total / rounds);
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "write") == 0) return fresh(strtoull(argv[2], NULL, 10));
    if (argc == 5 && strcmp(argv[1], "read") == 0)
        return file(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
    fprintf(stderr, "usage: populate write PAGES | populate read FILE OFFSET LENGTH\n");
    return 2;
}
