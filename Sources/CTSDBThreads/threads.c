#define _GNU_SOURCE
#include "ctsdb_threads.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#if defined(__linux__)

/// What the new thread needs before it runs the body: the cores it may use from then on.
struct start {
    void *(*body)(void *);
    void *argument;
    cpu_set_t everywhere;
};

static void *begin(void *raw) {
    struct start start = *(struct start *)raw;
    free(raw);
    pthread_setaffinity_np(pthread_self(), sizeof start.everywhere, &start.everywhere);
    return start.body(start.argument);
}

int ctsdb_thread_start_elsewhere(void *(*body)(void *), void *argument) {
    struct start *start = malloc(sizeof *start);
    if (start == NULL) return 12;  // ENOMEM
    start->body = body;
    start->argument = argument;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    void *(*entry)(void *) = body;
    void *entry_argument = argument;
    if (sched_getaffinity(0, sizeof start->everywhere, &start->everywhere) == 0) {
        cpu_set_t elsewhere = start->everywhere;
        int here = sched_getcpu();
        if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &elsewhere);
        if (CPU_COUNT(&elsewhere) > 0) {
            pthread_attr_setaffinity_np(&attributes, sizeof elsewhere, &elsewhere);
            entry = begin;
            entry_argument = start;
        }
    }
    pthread_t thread;
    int made = pthread_create(&thread, &attributes, entry, entry_argument);
    pthread_attr_destroy(&attributes);
    if (made != 0 || entry != begin) free(start);
    return made;
}

#else

int ctsdb_thread_start_elsewhere(void *(*body)(void *), void *argument) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int made = pthread_create(&thread, &attributes, body, argument);
    pthread_attr_destroy(&attributes);
    return made;
}

#endif
