// What publishing a manifest costs on this file system, each figure the mean of ROUNDS rounds, each
// after a `sync` and a 0.3 s pause: renaming a new, synced BYTES-byte file over the old one (the old
// file's last name, so its blocks are freed: ext4 mounted with `discard` trims them there and then);
// the same rename after a hard link has given the old file a second name; and the later removal of
// that name, in wall and CPU time. The measurement behind `MANIFEST.old` (Formats/manifest-v4.md §1).
//
//     cc -O2 Benchmarks/compare/replace_file.c -o /tmp/replace_file && mkdir -p DIR
//     /tmp/replace_file DIR 44082 20      # DIR on the file system that holds the store
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double milliseconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// A file of `bytes` bytes at `path`, written and synced.
static void put(const char *path, int bytes) {
    char *buffer = malloc(bytes);
    memset(buffer, 7, bytes);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buffer, bytes) != bytes || fsync(fd) != 0) {
        perror(path);
        exit(1);
    }
    close(fd);
    free(buffer);
}

// Syncs the folder and everything else, then leaves the device idle for a while.
static void settle(int folder) {
    fsync(folder);
    sync();
    usleep(300000);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s DIR BYTES ROUNDS\n", argv[0]);
        return 64;
    }
    int bytes = atoi(argv[2]), rounds = atoi(argv[3]);
    char current[4096], staged[4096], second[4096];
    snprintf(current, sizeof current, "%s/MANIFEST", argv[1]);
    snprintf(staged, sizeof staged, "%s/MANIFEST.tmp", argv[1]);
    snprintf(second, sizeof second, "%s/MANIFEST.old", argv[1]);
    int folder = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (folder < 0) {
        perror(argv[1]);
        return 1;
    }
    unlink(second);
    put(current, bytes);
    double overLast = 0, link_ = 0, overLinked = 0, removal = 0, removalCPU = 0;
    for (int round = 0; round < rounds; round++) {
        put(staged, bytes);
        settle(folder);
        double start = milliseconds(CLOCK_MONOTONIC);
        rename(staged, current);
        overLast += milliseconds(CLOCK_MONOTONIC) - start;

        put(staged, bytes);
        settle(folder);
        start = milliseconds(CLOCK_MONOTONIC);
        link(current, second);
        double linked = milliseconds(CLOCK_MONOTONIC);
        rename(staged, current);
        link_ += linked - start;
        overLinked += milliseconds(CLOCK_MONOTONIC) - linked;

        settle(folder);
        double cpu = milliseconds(CLOCK_THREAD_CPUTIME_ID);
        start = milliseconds(CLOCK_MONOTONIC);
        unlink(second);
        removal += milliseconds(CLOCK_MONOTONIC) - start;
        removalCPU += milliseconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
    }
    printf("rename over the last name %.3f ms; link %.3f ms + rename over a linked file %.3f ms; "
           "removing the second name later %.3f ms (CPU %.3f ms); %d rounds of %d bytes\n",
           overLast / rounds, link_ / rounds, overLinked / rounds, removal / rounds, removalCPU / rounds, rounds,
           bytes);
    close(folder);
    return 0;
}
