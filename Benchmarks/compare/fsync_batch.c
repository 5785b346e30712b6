// How long fsyncing a compaction's new files takes with k of them in flight at once (the measurement
// behind BackgroundSyncer in Sources/TSDB/Store/CompactionPipeline.swift): FILES new files of 12 KB in
// DIR, fsynced by THREADS threads, then DIR fsynced; the median of 15 rounds. THREADS 0 calls syncfs
// once instead (every dirty file of the file system, not only these).
//
//     cc -O2 Benchmarks/compare/fsync_batch.c -o /tmp/fsync_batch -lpthread
//     mkdir -p /tmp/fsync-dir && for k in 1 2 4 8; do /tmp/fsync_batch /tmp/fsync-dir 20 $k; done
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { maxFiles = 256, rounds = 15 };
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
    if (argc != 4) return fprintf(stderr, "usage: fsync_batch DIR FILES THREADS\n"), 2;
    const char *dir = argv[1];
    files = atoi(argv[2]);
    int threads = atoi(argv[3]);
    if (files < 1 || files > maxFiles || threads < 0 || threads > 64) return fprintf(stderr, "bad numbers\n"), 2;
    static char data[12 * 1024];
    memset(data, 7, sizeof data);
    double took[rounds];
    char path[4096];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < files; i++) {
            snprintf(path, sizeof path, "%s/fsync-batch-%d", dir, i);
            fds[i] = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
            if (fds[i] < 0 || write(fds[i], data, sizeof data) != (ssize_t)sizeof data) return perror(path), 1;
        }
        double start = milliseconds();
        taken = 0;
        pthread_t started[64];
        if (threads == 0) syncfs(fds[0]);
        for (int k = 0; k < threads; k++) pthread_create(&started[k], NULL, syncer, NULL);
        for (int k = 0; k < threads; k++) pthread_join(started[k], NULL);
        int d = open(dir, O_RDONLY);
        fsync(d);
        close(d);
        took[r] = milliseconds() - start;
        for (int i = 0; i < files; i++) {
            close(fds[i]);
            snprintf(path, sizeof path, "%s/fsync-batch-%d", dir, i);
            unlink(path);
        }
    }
    qsort(took, rounds, sizeof took[0], ascending);
    printf("%d files, %d threads: median %.2f ms (of %d rounds)\n", files, threads, took[rounds / 2], rounds);
    return 0;
}
