/*
 * syscall_cost: CPU time of one 100-byte write() and read() on a pipe and on
 * an AF_UNIX SOCK_STREAM socketpair, as hackbench's messages use them
 * (hackbench.c: datasize = 100). Writes a batch of 200 messages, then reads
 * them back, in one thread, so nothing blocks and no context switch or
 * wakeup is counted: what remains is the syscalls' own work. Each figure is
 * the fastest of 2000 batches, so that other load on the machine (a shared
 * VM) does not inflate it. 200 messages
 * fit both buffers (a pipe holds 64 KiB; a socket ~277 such skbs in the
 * default 208 KiB sndbuf).
 *
 * Build and run:  cc -O2 tools/syscall_cost.c -o /tmp/syscall_cost && /tmp/syscall_cost
 *
 * Source of workload/hackbench.rs's PIPE_* and SOCKET_* constants (run in session 25's sitting,
 * tools/calibrate/kcycles/run{1,2}/syscall_cost.out, beside the core clock).
 */
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void bench(const char *name, int wfd, int rfd)
{
	enum { ROUNDS = 2000, BATCH = 200, SIZE = 100 };
	char buf[SIZE] = { 0 };
	double write_ns = 1e18, read_ns = 1e18;

	for (int k = 0; k < ROUNDS; k++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			if (write(wfd, buf, SIZE) != SIZE)
				return;
		double t1 = now_ns();
		for (int i = 0; i < BATCH; i++)
			if (read(rfd, buf, SIZE) != SIZE)
				return;
		double t2 = now_ns();
		write_ns = t1 - t0 < write_ns ? t1 - t0 : write_ns;
		read_ns = t2 - t1 < read_ns ? t2 - t1 : read_ns;
	}
	printf("%s: write %.0f ns, read %.0f ns per %d-byte message\n", name,
	       write_ns / BATCH, read_ns / BATCH, SIZE);
}

int main(void)
{
	int p[2], s[2];
	double t0;

	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		return 1;
	bench("pipe", p[1], p[0]);
	bench("unix stream socket", s[0], s[1]);
	double null_ns = 1e18;
	for (int k = 0; k < 2000; k++) {
		t0 = now_ns();
		for (int i = 0; i < 200; i++)
			getppid();
		null_ns = now_ns() - t0 < null_ns ? now_ns() - t0 : null_ns;
	}
	printf("getppid (null syscall): %.0f ns\n", null_ns / 200);
	return 0;
}
