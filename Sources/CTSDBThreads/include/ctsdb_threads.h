#ifndef CTSDB_THREADS_H
#define CTSDB_THREADS_H

/// Runs `body(argument)` on a thread of its own, on a core other than the caller's when the process
/// may use another; once running it may be moved to any of the process's cores. The thread is one
/// whose earlier body has returned, when there is such a thread, else a new detached one: a thread
/// whose body returns waits for the next rather than exiting.
///
/// Linux puts a new thread on its parent's core, and a busy parent's thread waited there for up
/// to a scheduler tick (4 ms here) before an idle core took it; placed on the idle core, it ran
/// within 0.1 ms. Swift cannot reach the calls that say where (they are GNU extensions).
/// Handing a body to a waiting thread took the caller 36-38 us here and the body began after 14-16
/// us; a new thread on the other core took the caller 104-119 us and began after 144-167 us
/// (means of ten, `Benchmarks/compare/thread_start.c` modes 3 and 1).
/// Returns 0, or the error number of pthread_create.
int ctsdb_thread_start_elsewhere(void *(*body)(void *), void *argument);

/// How many threads are waiting for a body.
int ctsdb_threads_parked(void);

#endif
