/* The waker's part of a wakeup, apart from the wakee's block (issue 35, session 40).
 *
 * kpath.c's wakeup (a pipe ping-pong on one CPU, less a write()+read() that
 * blocks nobody and a switch: 847 ns, 3,130 cycles) holds both halves of a
 * wakeup: the reader's block before it sleeps (pipe_read()'s wait,
 * dequeue_task() in its __schedule()) and the writer's try_to_wake_up()
 * (select_task_rq(), ttwu_do_activate()'s enqueue, the preemption check).
 * This times the writer's half alone, on one CPU as kpath.c (this guest's
 * cross-CPU wakeups are IPIs that exit to the hypervisor): the duration of
 * a 1-byte write() into an empty pipe
 *   A: whose reader sleeps in read() (it ran first and blocked, which is
 *      why the writer runs), against
 *   B: that nobody waits on (the writer reads the byte back afterwards).
 * The reader is SCHED_BATCH, so the wakeup does not preempt the writer
 * (check_preempt_wakeup() leaves a running task alone for a woken batch
 * task) and write() returns before the reader runs. A - B is
 * try_to_wake_up() in the waker's context, the wait queue's walk included.
 * Per case ROUNDS rounds; the median and the fastest decile.
 *
 *   cc -O2 wake_split.c -o /tmp/wake_split && /tmp/wake_split [rounds] > wake_split.out
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, double *d, int rounds)
{
	qsort(d, rounds, sizeof(double), cmp);
	printf("%-40s write(): median %6.0f ns, fastest decile %6.0f ns (%d rounds)\n", what, d[rounds / 2], d[rounds / 10], rounds);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20000;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	int to_reader[2], to_writer[2], alone[2];
	char c = 0;
	double *d = malloc(rounds * sizeof(double));
	if (pipe(to_reader) || pipe(to_writer) || pipe(alone))
		return 1;
	pin(cpu);

	/* B: a write nobody waits on, read back untimed. */
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		if (write(alone[1], &c, 1) != 1)
			return 1;
		d[r] = now_ns() - t0;
		if (read(alone[0], &c, 1) != 1)
			return 1;
	}
	double *b = malloc(rounds * sizeof(double));
	for (int r = 0; r < rounds; r++)
		b[r] = d[r];

	/* A: the reader blocks first, then the writer wakes it. */
	pid_t pid = fork();
	if (pid == 0) {
		struct sched_param sp = { 0 };
		if (sched_setscheduler(0, SCHED_BATCH, &sp))
			_exit(2);
		for (int r = 0; r < rounds; r++) {
			if (read(to_reader[0], &c, 1) != 1)
				_exit(1);
			if (write(to_writer[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (int r = 0; r < rounds; r++) {
		/* let the reader run into its read() and block */
		usleep(0);
		sched_yield();
		double t0 = now_ns();
		if (write(to_reader[1], &c, 1) != 1)
			return 1;
		d[r] = now_ns() - t0;
		if (read(to_writer[0], &c, 1) != 1)
			return 1;
	}
	waitpid(pid, NULL, 0);
	report("A: its reader asleep in read()", d, rounds);
	report("B: nobody waiting", b, rounds);
	return 0;
}
