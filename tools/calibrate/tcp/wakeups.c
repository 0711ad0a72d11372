/*
 * wakeups: how often netperf TCP_STREAM's receiver sleeps and is woken, per
 * message, over 127.0.0.1 with sender and receiver as two processes
 * (session 27, branch `netseg`).
 *
 * As MMTests runs netperf on loopback (netperf-bench: `-t TCP_STREAM --
 * -m SIZE -M SIZE`, no -s/-S, no -D): default buffers with autotuning,
 * Nagle on. The receiver (netserver) blocks in recv(SIZE) (no MSG_WAITALL,
 * as nettest_bsd.c recv_tcp_stream calls it); the sender (netperf) does
 * blocking send(SIZE) until its timer, then shutdown(SHUT_WR).
 *
 * Per size and placement it prints: messages sent; the receiver's recv()
 * calls and mean bytes per call, and the share of calls that got less
 * than SIZE; both processes' voluntary context switches (getrusage
 * ru_nvcsw: a block in recv or send, each followed by a wakeup) and
 * involuntary ones; the segments: the sender's TCP_INFO tcpi_data_segs_out
 * (data segments) and tcpi_segs_out, the receiver's tcpi_segs_out (its
 * ACKs and window updates); the byte rate.
 *
 * Placement: "free" (the scheduler's choice, as MMTests leaves netperf),
 * "split" (sender on CPU 0, receiver on CPU 1), "same" (both on CPU 0);
 * with a second argument `rt`, only "split-rt": split, both SCHED_FIFO,
 * so that other work on a shared machine cannot delay either end (a
 * receiver kept waiting by other tasks never drains its queue).
 *
 * cc -O2 -Wall wakeups.c -o /tmp/wakeups && /tmp/wakeups [SECONDS [rt]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];
static volatile sig_atomic_t times_up;

static void on_alarm(int sig)
{
	(void)sig;
	times_up = 1;
}

static int rt;

/* Pin to a CPU; with `rt`, also SCHED_FIFO, so that the host's other work
 * (this machine is shared) cannot delay either end. */
static void pin(int cpu)
{
	cpu_set_t s;
	struct sched_param p = { .sched_priority = 10 };

	if (rt && sched_setscheduler(0, SCHED_FIFO, &p))
		perror("sched_setscheduler");
	if (cpu < 0)
		return;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

struct rx {
	long calls, bytes, short_calls, nvcsw, nivcsw, segs_out, cpu_us, rcv_mss;
};

static long cpu_us(const struct rusage *r)
{
	return (r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1000000L + r->ru_utime.tv_usec + r->ru_stime.tv_usec;
}

static void one(int size, double secs, const char *place, int scpu, int rcpu)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), p[2];
	struct rx rx;
	pid_t child;

	bind(l, (struct sockaddr *)&a, sizeof(a));
	listen(l, 1);
	getsockname(l, (struct sockaddr *)&a, &len);
	if (pipe(p))
		exit(1);
	child = fork();
	if (child == 0) {
		/* netserver */
		struct rusage ru;
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);
		int s;
		long n;

		pin(rcpu);
		s = accept(l, NULL, NULL);
		memset(&rx, 0, sizeof(rx));
		getrusage(RUSAGE_SELF, &ru);
		rx.nvcsw = -ru.ru_nvcsw;
		rx.nivcsw = -ru.ru_nivcsw;
		rx.cpu_us = -cpu_us(&ru);
		while ((n = recv(s, buf, size, 0)) > 0) {
			rx.calls++;
			rx.bytes += n;
			rx.short_calls += n < size;
		}
		getrusage(RUSAGE_SELF, &ru);
		rx.nvcsw += ru.ru_nvcsw;
		rx.nivcsw += ru.ru_nivcsw;
		rx.cpu_us += cpu_us(&ru);
		getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &tl);
		rx.segs_out = ti.tcpi_segs_out;
		rx.rcv_mss = ti.tcpi_rcv_mss;
		if (write(p[1], &rx, sizeof(rx)) != sizeof(rx))
			exit(1);
		exit(0);
	}
	{
		/* netperf */
		struct itimerval it = { .it_value = { .tv_sec = (long)secs, .tv_usec = (long)((secs - (long)secs) * 1e6) } };
		struct rusage r0, r1;
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);
		struct timespec t0, t1;
		long msgs = 0;
		double el;
		int c = socket(AF_INET, SOCK_STREAM, 0);

		pin(scpu);
		if (connect(c, (struct sockaddr *)&a, sizeof(a))) {
			perror("connect");
			exit(1);
		}
		times_up = 0;
		getrusage(RUSAGE_SELF, &r0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		setitimer(ITIMER_REAL, &it, NULL);
		while (!times_up) {
			if (send(c, buf, size, 0) == size)
				msgs++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		getrusage(RUSAGE_SELF, &r1);
		getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &tl);
		shutdown(c, SHUT_WR);
		if (read(p[0], &rx, sizeof(rx)) != sizeof(rx))
			exit(1);
		waitpid(child, NULL, 0);
		close(c);
		close(l);
		close(p[0]);
		close(p[1]);
		el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
		printf("%-5s %5d B: msgs %ld (%.0f Mb/s); recv calls %ld, %.1f B/call, %.3f calls/msg, short %.3f; "
		       "rx nvcsw %ld (%.5f /msg, %.1f msgs/wake) nivcsw %ld; tx nvcsw %ld (%.5f /msg) nivcsw %ld; "
		       "data segs %u (%.1f B/seg, %.4f /msg) tx segs %u rx segs %ld (%.4f /msg); "
		       "tx cpu %.0f ns/msg, rx cpu %.0f ns/msg (after the send loop too); snd_mss %u rcv_mss %ld\n",
		       place, size, msgs, msgs * (double)size * 8 / el / 1e6, rx.calls, (double)rx.bytes / rx.calls,
		       (double)rx.calls / msgs, (double)rx.short_calls / rx.calls, rx.nvcsw, (double)rx.nvcsw / msgs,
		       rx.nvcsw ? (double)msgs / rx.nvcsw : 0.0, rx.nivcsw, r1.ru_nvcsw - r0.ru_nvcsw,
		       (double)(r1.ru_nvcsw - r0.ru_nvcsw) / msgs, r1.ru_nivcsw - r0.ru_nivcsw, ti.tcpi_data_segs_out,
		       (double)msgs * size / ti.tcpi_data_segs_out, (double)ti.tcpi_data_segs_out / msgs, ti.tcpi_segs_out,
		       rx.segs_out, (double)rx.segs_out / msgs, (cpu_us(&r1) - cpu_us(&r0)) * 1e3 / msgs,
		       rx.cpu_us * 1e3 / msgs, ti.tcpi_snd_mss, rx.rcv_mss);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 64, 128, 256, 1024, 2048, 3312, 4096, 8192, 16384 };
	static const struct {
		const char *name;
		int s, r;
	} places[] = { { "free", -1, -1 }, { "split", 0, 1 }, { "same", 0, 0 } };
	double secs = argc > 1 ? atof(argv[1]) : 1.5;

	signal(SIGALRM, on_alarm);
	if (argc > 2 && !strcmp(argv[2], "rt")) {
		/* Split placement only: two SCHED_FIFO tasks of one priority on
		 * one CPU would not preempt each other. */
		rt = 1;
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			one(sizes[i], secs, "split-rt", 0, 1);
		return 0;
	}
	for (unsigned p = 0; p < sizeof(places) / sizeof(places[0]); p++)
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			one(sizes[i], secs, places[p].name, places[p].s, places[p].r);
	return 0;
}
