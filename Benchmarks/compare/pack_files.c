// The file-system work of writing a compaction's segments as FILES files (run it with as many as
// there are segments, and with fewer): delete the files of the round before (the generation before),
// create FILES files of TOTAL_BYTES split evenly, fsync them from 8 threads, write, fsync and rename
// a 30 KB manifest, fsync the folder; the median of ROUNDS rounds, 0.3 s apart. The measurement
// behind manifest-v4's file table (Formats/manifest-v4.md), which lets one file hold many segments:
// one new day into the year writes 18 segments of ~104 KB in all, the year 220 of ~1.24 MB.
//
//     cc -O2 Benchmarks/compare/pack_files.c -o /tmp/pack_files -lpthread && mkdir -p /tmp/pack-dir
//     for n in 18 2; do /tmp/pack_files /tmp/pack-dir $n 104000 15; done
//     for n in 220 25; do /tmp/pack_files /tmp/pack-dir $n 1240000 9; done
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { maxFiles = 256, maxRounds = 64, syncThreads = 8 };
static int fds[maxFiles];
static int files, taken;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double milliseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *syncer(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&lock);
        int i = taken++;
        pthread_mutex_unlock(&lock);
        if (i >= files) return NULL;
        if (fsync(fds[i]) != 0) perror("fsync");
    }
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s DIR FILES TOTAL_BYTES ROUNDS\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    files = atoi(argv[2]);
    int total = atoi(argv[3]), rounds = atoi(argv[4]);
    if (files < 1 || files > maxFiles || rounds < 1 || rounds > maxRounds || total < files) return 2;
    static char bytes[1 << 20];
    memset(bytes, 7, sizeof bytes);
    char path[512], final[512];
    double took[maxRounds];
    // Round 0 only makes the files the first timed round deletes.
    for (int r = 0; r <= rounds; r++) {
        double start = milliseconds();
        for (int i = 0; i < files; i++) {
            snprintf(path, sizeof path, "%s/f%d.g%d", dir, i, r);
            unlink(path);
        }
        for (int i = 0; i < files; i++) {
            snprintf(path, sizeof path, "%s/f%d.g%d", dir, i, r + 1);
            fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fds[i] < 0 || write(fds[i], bytes, total / files) != total / files) perror(path);
        }
        taken = 0;
        pthread_t threads[syncThreads];
        for (int k = 0; k < syncThreads; k++) pthread_create(&threads[k], NULL, syncer, NULL);
        for (int k = 0; k < syncThreads; k++) pthread_join(threads[k], NULL);
        for (int i = 0; i < files; i++) close(fds[i]);
        snprintf(path, sizeof path, "%s/MANIFEST.tmp", dir);
        snprintf(final, sizeof final, "%s/MANIFEST", dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, bytes, 30000) != 30000 || fsync(fd) != 0) perror(path);
        close(fd);
        if (rename(path, final) != 0) perror(final);
        int folder = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (folder < 0 || fsync(folder) != 0) perror(dir);
        close(folder);
        if (r > 0) took[r - 1] = milliseconds() - start;
        usleep(300000);
    }
    qsort(took, rounds, sizeof took[0], ascending);
    printf("%d files, %d bytes: median %.2f ms (min %.2f max %.2f)\n", files, total, took[rounds / 2], took[0],
           took[rounds - 1]);
    return 0;
}
