// How long a new thread waits before it runs while its parent stays busy, started anywhere or on
// another core (the measurement behind Sources/CTSDBThreads). Ten starts each:
//
//     cc -O2 Benchmarks/compare/thread_start.c -o /tmp/thread_start -lpthread
//     /tmp/thread_start 0   # where Linux puts it
//     /tmp/thread_start 1   # on a core other than the parent's
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static volatile long long ran;

static void *body(void *unused) {
    (void)unused;
    ran = now();
    return NULL;
}

int main(int argc, char **argv) {
    int elsewhere = argc > 1 && atoi(argv[1]) != 0;
    for (int k = 0; k < 10; k++) {
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        if (elsewhere) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(sched_getcpu() == 0 ? 1 : 0, &set);
            pthread_attr_setaffinity_np(&attributes, sizeof set, &set);
        }
        pthread_t thread;
        ran = 0;
        long long started = now();
        pthread_create(&thread, &attributes, body, NULL);
        while (now() < started + 8000000) {}  // the parent stays busy for 8 ms, as a query would
        pthread_join(thread, NULL);
        printf("%lld us\n", (ran - started) / 1000);
        struct timespec pause = {0, 20000000};
        nanosleep(&pause, NULL);
    }
    return 0;
}
