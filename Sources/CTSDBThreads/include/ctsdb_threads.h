#ifndef CTSDB_THREADS_H
#define CTSDB_THREADS_H

/// Starts a detached thread running `body(argument)` on a core other than the caller's, when the
/// process may use another; once running it may be moved to any of the process's cores.
///
/// Linux puts a new thread on its parent's core, and a busy parent's thread waited there for up
/// to a scheduler tick (4 ms here) before an idle core took it; placed on the idle core, it ran
/// within 0.1 ms. Swift cannot reach the calls that say where (they are GNU extensions).
/// Returns 0, or the error number of pthread_create.
int ctsdb_thread_start_elsewhere(void *(*body)(void *), void *argument);

#endif
