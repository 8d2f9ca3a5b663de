/* Life-cycle scenarios, chosen by argv[1]; each makes a known number of HIP
 * calls (hipGetDeviceCount: cheap, and it works without a GPU) and prints
 * how many it made, so the test can compare with the trace.
 *
 *   worker-exit N   a worker thread makes N calls then exit(5)s while main waits
 *   sigterm N       N calls, prints "ready", then sleeps until killed
 *   fork A B C      A calls, fork; the child makes B calls and exits 0;
 *                   the parent waits, makes C more and exits 0
 *   threads T N     T threads make N calls each; prints each thread's tid
 *   signals N       prints who handles SIGSEGV/SIGBUS/SIGILL/SIGFPE, makes N
 *                   calls, then installs its own SIGSEGV handler, faults on
 *                   purpose and prints "caught own SIGSEGV" from the handler
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void calls(int n) {
    for (int i = 0; i < n; i++) {
        int c;
        hipGetDeviceCount(&c);
    }
}

static int per_thread;

static void* exit_worker(void* arg) {
    calls(per_thread);
    printf("worker made %d calls\n", per_thread);
    fflush(stdout);
    exit(5);
    return arg;
}

static void* call_worker(void* arg) {
    calls(per_thread);
    printf("tid %ld made %d calls\n", (long)syscall(SYS_gettid), per_thread);
    return arg;
}

static sigjmp_buf fault_return;

static void on_segv(int sig) {
    (void)sig;
    siglongjmp(fault_return, 1);
}

static void report_handlers(void) {
    const struct {
        int sig;
        const char* name;
    } sigs[] = {{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGILL, "SIGILL"}, {SIGFPE, "SIGFPE"}};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        sigaction(sigs[i].sig, 0, &old);
        printf("%s %s\n", sigs[i].name, old.sa_handler == SIG_DFL ? "default" : "handled");
    }
}

int main(int argc, char** argv) {
    if (argc >= 3 && strcmp(argv[1], "signals") == 0) {
        report_handlers();
        calls(atoi(argv[2]));
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_segv;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, 0);
        if (sigsetjmp(fault_return, 1) == 0) {
            volatile int* nowhere = (volatile int*)16;
            *nowhere = 1;
            printf("no fault?\n");
        } else {
            printf("caught own SIGSEGV\n");
        }
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "worker-exit") == 0) {
        per_thread = atoi(argv[2]);
        pthread_t t;
        pthread_create(&t, 0, exit_worker, 0);
        for (;;) pause();
    }
    if (argc >= 3 && strcmp(argv[1], "sigterm") == 0) {
        calls(atoi(argv[2]));
        printf("ready\n");
        fflush(stdout);
        for (;;) pause();
    }
    if (argc >= 5 && strcmp(argv[1], "fork") == 0) {
        calls(atoi(argv[2]));
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            calls(atoi(argv[3]));
            printf("child %d\n", (int)getpid());
            fflush(stdout);
            exit(0);
        }
        int status;
        waitpid(child, &status, 0);
        calls(atoi(argv[4]));
        printf("parent %d child-status %d\n", (int)getpid(), status);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "threads") == 0) {
        int n = atoi(argv[2]);
        per_thread = atoi(argv[3]);
        pthread_t ts[64];
        for (int i = 0; i < n && i < 64; i++) pthread_create(&ts[i], 0, call_worker, 0);
        for (int i = 0; i < n && i < 64; i++) pthread_join(ts[i], 0);
        return 0;
    }
    fprintf(stderr,
            "usage: exit_paths worker-exit N | sigterm N | fork A B C | threads T N | signals N\n");
    return 2;
}
