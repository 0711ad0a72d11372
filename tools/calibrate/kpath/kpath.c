/*
 * kpath: the kernel's own CPU time per wakeup, context switch and idle
 * cycle, measured from user space on one CPU (no tracing needed).
 *
 *   clock      a chain of dependent adds (one cycle each): the core clock
 *   yield1     sched_yield() alone on the CPU: syscall + __schedule(), no switch
 *   yield2     two processes yielding to each other on one CPU: + one switch
 *   futex0     FUTEX_WAKE with no waiter + FUTEX_WAIT on a changed word: the
 *              two syscalls of a hand-off, with nothing blocking or woken
 *   futex2     two threads on one CPU handing a futex back and forth: each
 *              hand-off = futex0 + a wakeup (try_to_wake_up) + a switch
 *   pipe0      write()+read() of 1 byte on a pipe, nothing blocking
 *   pipe2      two processes on one CPU, pipe ping-pong: each direction =
 *              pipe0 + a wakeup + a switch (as perf bench sched pipe)
 *   pipex      pipe2 with the child on the other CPU: each direction =
 *              pipe0 + a wakeup of an idle CPU + its idle exit and switch
 *              (the entry into idle runs off this critical path)
 *   getppid    a null system call: the kernel's entry and exit alone (the
 *              figure of Garloff's 2018 KPTI measurements, ../syscall/)
 *   sleep0     clock_nanosleep() of 1 ns with timer slack 1 ns: hrtimer
 *              set-up, a switch to idle, an idle cycle, the timer interrupt,
 *              the wakeup and a switch back (an upper bound: it includes the
 *              hypervisor's timer and HLT exits, see README.md)
 *
 * Each figure is the fastest mean of BATCHES short batches (N operations,
 * well under a millisecond: the batches no other task on the shared host
 * interrupted), with the median beside it. Build and run:
 *   cc -O2 -pthread kpath.c -o /tmp/kpath && /tmp/kpath > kpath.out
 * `/tmp/kpath CPU clock` prints the clock figure alone (fastest and median
 * batch), for bracketing other measurements (tools/calibrate/cycleclock);
 * `/tmp/kpath CPU getppid` the null system call alone, in cycles of that
 * clock, with the clock again after it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 3000
#define N 100

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static double median;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the fastest batch; the median kept in `median` */
static double best(double *v)
{
	qsort(v, BATCHES, sizeof(*v), cmp);
	median = v[BATCHES / 2];
	return v[0];
}

/* ns per dependent add, 1M adds a batch */
static double clock_ghz(void)
{
	double v[BATCHES];

	for (int b = 0; b < BATCHES; b++) {
		unsigned long x = 0, n = 100000;
		double t0 = now_ns();

		for (unsigned long i = 0; i < n; i++)
			asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				     "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				     "add $1, %0\n\tadd $1, %0" : "+r"(x));
		v[b] = (now_ns() - t0) / (n * 10.0);
	}
	return 1.0 / best(v);
}

static double getppid0(void)
{
	double v[BATCHES];

	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++)
			syscall(SYS_getppid);
		v[b] = (now_ns() - t0) / N;
	}
	return best(v);
}

static double yield1(void)
{
	double v[BATCHES];

	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++)
			sched_yield();
		v[b] = (now_ns() - t0) / N;
	}
	return best(v);
}

/* two processes on one CPU; ns per yield (one switch each) */
static double yield2(void)
{
	int p[2];
	double v[BATCHES];

	if (pipe(p))
		exit(1);
	pid_t c = fork();
	if (c == 0) {
		char x;

		read(p[0], &x, 1);
		for (int i = 0; i < BATCHES * N + 1000; i++)
			sched_yield();
		_exit(0);
	}
	write(p[1], "x", 1);
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++)
			sched_yield();
		/* N of ours and N of the child's */
		v[b] = (now_ns() - t0) / (2.0 * N);
	}
	kill(c, 9);
	waitpid(c, NULL, 0);
	return best(v);
}

static long futex(atomic_int *u, int op, int val)
{
	return syscall(SYS_futex, u, op, val, NULL, NULL, 0);
}

static double futex0(void)
{
	atomic_int w = 0;
	double v[BATCHES];

	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++) {
			futex(&w, FUTEX_WAKE_PRIVATE, 1);
			futex(&w, FUTEX_WAIT_PRIVATE, 1); /* w is 0: EAGAIN */
		}
		v[b] = (now_ns() - t0) / N;
	}
	return best(v);
}

static atomic_int turn;

static void *futex_peer(void *arg)
{
	(void)arg;
	for (;;) {
		while (atomic_load(&turn) != 1)
			futex(&turn, FUTEX_WAIT_PRIVATE, 0);
		atomic_store(&turn, 0);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

/* ns per hand-off (two per round trip) */
static double futex2(void)
{
	pthread_t th;
	double v[BATCHES];

	atomic_store(&turn, 0);
	pthread_create(&th, NULL, futex_peer, NULL);
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++) {
			atomic_store(&turn, 1);
			futex(&turn, FUTEX_WAKE_PRIVATE, 1);
			while (atomic_load(&turn) != 0)
				futex(&turn, FUTEX_WAIT_PRIVATE, 1);
		}
		v[b] = (now_ns() - t0) / (2.0 * N);
	}
	pthread_cancel(th);
	return best(v);
}

static double pipe0(void)
{
	int p[2];
	char x = 0;
	double v[BATCHES];

	if (pipe(p))
		exit(1);
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++) {
			write(p[1], &x, 1);
			read(p[0], &x, 1);
		}
		v[b] = (now_ns() - t0) / N;
	}
	close(p[0]);
	close(p[1]);
	return best(v);
}

/* ns per direction (two per round trip); the child on CPU `other` if >= 0 */
static double pipe_pair_on(int other)
{
	int a[2], r[2];
	char x = 0;
	double v[BATCHES];

	if (pipe(a) || pipe(r))
		exit(1);
	pid_t c = fork();
	if (c == 0) {
		close(a[1]);
		close(r[0]);
		if (other >= 0)
			pin(other);
		for (;;) {
			if (read(a[0], &x, 1) != 1)
				_exit(0);
			write(r[1], &x, 1);
		}
	}
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++) {
			write(a[1], &x, 1);
			read(r[0], &x, 1);
		}
		v[b] = (now_ns() - t0) / (2.0 * N);
	}
	close(a[1]);
	waitpid(c, NULL, 0);
	return best(v);
}

static double pipe_pair(void)
{
	return pipe_pair_on(-1);
}

static int other_cpu;

static double pipe_cross(void)
{
	return pipe_pair_on(other_cpu);
}

static double sleep0(void)
{
	struct timespec d = { 0, 1 };
	double v[BATCHES];

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N / 10; i++)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
		v[b] = (now_ns() - t0) / (N / 10);
	}
	return best(v);
}

int main(int argc, char **argv)
{
	int cpu = argc > 1 ? atoi(argv[1]) : 0;

	other_cpu = !cpu;

	pin(cpu);
	double ghz = clock_ghz();
	if (argc > 2 && !strcmp(argv[2], "clock")) {
		printf("cpu %d clock_ghz %.3f median %.3f\n", cpu, ghz, 1.0 / median);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "getppid")) {
		double ns = getppid0(), med = median;

		printf("cpu %d clock_ghz %.3f after %.3f\n", cpu, ghz, clock_ghz());
		printf("getppid ns %.1f (median %.1f) cycles %.0f (median %.0f)\n", ns, med, ns * ghz, med * ghz);
		return 0;
	}
	printf("cpu %d clock_ghz %.3f\n", cpu, ghz);
	setvbuf(stdout, NULL, _IONBF, 0);
	{ double x = yield1(); printf("yield1_ns %.1f median %.1f\n", x, median); }
	{ double x = yield2(); printf("yield2_ns %.1f median %.1f\n", x, median); }
	{ double x = futex0(); printf("futex0_ns %.1f median %.1f\n", x, median); }
	{ double x = futex2(); printf("futex2_ns %.1f median %.1f\n", x, median); }
	{ double x = pipe0(); printf("pipe0_ns %.1f median %.1f\n", x, median); }
	{ double x = pipe_pair(); printf("pipe2_ns %.1f median %.1f\n", x, median); }
	{ double x = pipe_cross(); printf("pipex_ns %.1f median %.1f\n", x, median); }
	{ double x = sleep0(); printf("sleep0_ns %.1f median %.1f\n", x, median); }
	printf("clock_ghz_after %.3f\n", clock_ghz());
	return 0;
}
