// How long a thread takes to start work while its parent stays busy (the measurements behind
// Sources/CTSDBThreads). Ten starts each; for each, the parent's own cost (the call that hands the
// work over) and the wait until the work runs:
//
//     cc -O2 Benchmarks/compare/thread_start.c -o /tmp/thread_start -lpthread
//     /tmp/thread_start 0   # a new thread, where Linux puts it
//     /tmp/thread_start 1   # a new thread on a core other than the parent's
//     /tmp/thread_start 2   # a waiting thread, moved to a core other than the parent's and woken
//     /tmp/thread_start 3   # a waiting thread woken where it is allowed anywhere
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static volatile long long ran;
static sem_t wake, finished;
static cpu_set_t everywhere;

static void *body(void *unused) {
    (void)unused;
    ran = now();
    return NULL;
}

/// A thread that runs the work each time it is woken, then waits again.
static void *waiting(void *unused) {
    (void)unused;
    for (;;) {
        sem_wait(&wake);
        ran = now();
        pthread_setaffinity_np(pthread_self(), sizeof everywhere, &everywhere);
        sem_post(&finished);
    }
    return NULL;
}

static cpu_set_t other_core(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu() == 0 ? 1 : 0, &set);
    return set;
}

int main(int argc, char **argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    sched_getaffinity(0, sizeof everywhere, &everywhere);
    pthread_t waiter;
    if (mode >= 2) {
        sem_init(&wake, 0, 0);
        sem_init(&finished, 0, 0);
        pthread_create(&waiter, NULL, waiting, NULL);
    }
    for (int k = 0; k < 10; k++) {
        struct timespec pause = {0, 20000000};
        nanosleep(&pause, NULL);
        pthread_t thread;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        if (mode == 1) {
            cpu_set_t set = other_core();
            pthread_attr_setaffinity_np(&attributes, sizeof set, &set);
        }
        ran = 0;
        long long started = now();
        if (mode <= 1) {
            pthread_create(&thread, &attributes, body, NULL);
        } else {
            if (mode == 2) {
                cpu_set_t set = other_core();
                pthread_setaffinity_np(waiter, sizeof set, &set);
            }
            sem_post(&wake);
        }
        long long handed = now();
        while (now() < started + 8000000) {}  // the parent stays busy for 8 ms, as a query would
        if (mode <= 1) {
            pthread_join(thread, NULL);
        } else {
            sem_wait(&finished);
        }
        printf("parent %lld us, work began after %lld us\n", (handed - started) / 1000, (ran - started) / 1000);
        pthread_attr_destroy(&attributes);
    }
    return 0;
}
