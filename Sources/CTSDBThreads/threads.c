#define _GNU_SOURCE
#include "ctsdb_threads.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>

#if defined(__linux__)

/// A thread that runs one body after another: when a body returns it parks, waiting for the next,
/// instead of exiting. A starter sets `body` and `argument` before it posts `wake`, and the worker
/// reads them after. A woken worker is not moved away from the starter's core first: Linux wakes a
/// thread on an idle core when there is one, and moving it (`Benchmarks/compare/thread_start.c`,
/// mode 2 against 3) made its work begin 100-110 us later instead of 14-16, and one new day into a
/// year 6.32 instead of 6.04 ms (medians of 31, ab.py).
struct worker {
    sem_t wake;
    void *(*body)(void *);
    void *argument;
    cpu_set_t everywhere;
    int pinned;
    struct worker *next;
};

static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct worker *parked;

static void *serve(void *raw) {
    struct worker *worker = raw;
    // Started away from the starter's core; from here on it may move anywhere.
    if (worker->pinned) sched_setaffinity(0, sizeof worker->everywhere, &worker->everywhere);
    for (;;) {
        worker->body(worker->argument);
        pthread_mutex_lock(&parked_lock);
        worker->next = parked;
        parked = worker;
        pthread_mutex_unlock(&parked_lock);
        while (sem_wait(&worker->wake) != 0) {
            if (errno != EINTR) abort();  // only a broken semaphore; handed work would never run
        }
    }
    return NULL;
}

/// The cores the process may use, and those of them other than the caller's; false when there is
/// no other (or the process's cores cannot be read).
static int cores(cpu_set_t *everywhere, cpu_set_t *elsewhere) {
    if (sched_getaffinity(0, sizeof *everywhere, everywhere) != 0) return 0;
    *elsewhere = *everywhere;
    int here = sched_getcpu();
    if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, elsewhere);
    return CPU_COUNT(elsewhere) > 0;
}

int ctsdb_thread_start_elsewhere(void *(*body)(void *), void *argument) {
    pthread_mutex_lock(&parked_lock);
    struct worker *worker = parked;
    if (worker != NULL) parked = worker->next;
    pthread_mutex_unlock(&parked_lock);
    if (worker != NULL) {
        worker->body = body;
        worker->argument = argument;
        sem_post(&worker->wake);
        return 0;
    }
    cpu_set_t everywhere, elsewhere;
    int pin = cores(&everywhere, &elsewhere);
    worker = calloc(1, sizeof *worker);
    if (worker == NULL) return ENOMEM;
    if (sem_init(&worker->wake, 0, 0) != 0) {
        free(worker);
        return errno;
    }
    worker->body = body;
    worker->argument = argument;
    worker->everywhere = everywhere;
    worker->pinned = pin;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    if (pin) pthread_attr_setaffinity_np(&attributes, sizeof elsewhere, &elsewhere);
    pthread_t thread;
    int made = pthread_create(&thread, &attributes, serve, worker);
    pthread_attr_destroy(&attributes);
    if (made != 0) {
        sem_destroy(&worker->wake);
        free(worker);
    }
    return made;
}

int ctsdb_threads_parked(void) {
    pthread_mutex_lock(&parked_lock);
    int count = 0;
    for (struct worker *w = parked; w != NULL; w = w->next) count += 1;
    pthread_mutex_unlock(&parked_lock);
    return count;
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

int ctsdb_threads_parked(void) { return 0; }

#endif
