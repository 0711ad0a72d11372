/*
 * nullsys: CPU cycles of one null system call (getppid), the figure Kurt
 * Garloff's KPTI/IBRS/retpoline microbenchmarks give per machine, so this
 * host's kernel entry and exit can be set beside a 2016-2018 Xeon's.
 *
 *     cc -O2 nullsys.c -o /tmp/nullsys && /tmp/nullsys [CPU]
 *
 * The fastest of 3000 batches of 1000 calls on one CPU (a batch no other
 * task interrupted), and the median; the core clock from a chain of
 * dependent adds (one cycle each), before and after.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 3000
#define N 1000

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median;

static double best(double *v)
{
	qsort(v, BATCHES, sizeof(*v), cmp);
	median = v[BATCHES / 2];
	return v[0];
}

static double clock_ghz(void)
{
	static double v[BATCHES];

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

int main(int argc, char **argv)
{
	static double v[BATCHES];
	int cpu = argc > 1 ? atoi(argv[1]) : 1;
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s)) {
		perror("sched_setaffinity");
		return 1;
	}
	double ghz = clock_ghz();
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int i = 0; i < N; i++)
			syscall(SYS_getppid);
		v[b] = (now_ns() - t0) / N;
	}
	double ns = best(v), med = median;
	double ghz2 = clock_ghz();
	printf("cpu %d clock_ghz %.3f after %.3f\n", cpu, ghz, ghz2);
	printf("getppid ns %.1f (median %.1f) cycles %.0f (median %.0f)\n", ns, med, ns * ghz, med * ghz);
	return 0;
}
