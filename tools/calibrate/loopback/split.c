/* Where a loopback TCP send wakes its receiver (issue 35, session 23).
 *
 * A loopback send() runs the whole path in the sender's context: tcp_sendmsg
 * copies the data, tcp_write_xmit hands the segment to the loopback device,
 * whose receive runs in NET_RX softirq on the same CPU (at local_bh_enable),
 * tcp_v4_rcv queues it on the receiving socket and sk_data_ready wakes the
 * reader; then the softirq, tcp_sendmsg and the syscall finish. This times
 * the part before the data is there for the reader and the part after.
 *
 * Two processes on two CPUs, one TCP connection over 127.0.0.1 with
 * TCP_NODELAY. The reader never sleeps: it polls recv(MSG_DONTWAIT) and
 * stamps the start of each call, so the data arrived between the start of
 * the last call that found nothing and the start of the one that found it
 * (the midpoint is taken; the poll period is printed). The writer stamps
 * send()'s entry and return. Per round (the writer waits for the reader's
 * acknowledgement through shared memory, so the socket is empty each time):
 *   pre  = arrival - send entry      (the path up to sk_data_ready)
 * and the duration of the reader's recv() that found the data (its copy
 * out; a recv() that finds nothing is the poll period, less two clock reads).
 *   post = send return - arrival     (what the sender still runs after it)
 * The rounds among the fastest 10 % by send() duration whose reader polled
 * faster than POLL_MAX_NS are kept and their medians printed.
 *
 *   cc -O2 split.c -o /tmp/split && /tmp/split [rounds [poll_max_ns]] > split.out
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
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

struct shared {
	volatile int round;      /* the writer's round, set before send() */
	volatile int got;        /* the reader's last complete round */
	volatile double arrival; /* midpoint estimate of the data's arrival */
	volatile double poll;    /* that round's poll period */
	volatile double rdur;    /* the recv() that found the data */
};

/* Rounds whose reader took longer than this per empty recv() are left out:
 * a reader that holds its socket lock when the segment comes makes the
 * softirq queue it on the backlog, which the reader then processes itself
 * (release_sock), so the sender's share shrinks; a blocked tbench reader
 * waits in sk_wait_data() without the lock. */
static double POLL_MAX_NS = 1000.0; /* argv[2] overrides */

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20000;
	if (argc > 2)
		POLL_MAX_NS = atof(argv[2]);
	int sizes[] = { 100, 4096, 65536 };
	struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static char buf[1 << 17];

	for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		int size = sizes[si], one = 1;
		int ls = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t al = sizeof(a);
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		bind(ls, (struct sockaddr *)&a, sizeof(a));
		listen(ls, 1);
		getsockname(ls, (struct sockaddr *)&a, &al);
		sh->round = -1;
		sh->got = -1;
		pid_t pid = fork();
		if (pid == 0) {
			pin(0);
			int fd = accept(ls, NULL, NULL);
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			for (int r = 0; r < rounds; r++) {
				while (sh->round != r)
					;
				int have = 0;
				double prev = now_ns(), start = prev;
				while (have < size) {
					start = now_ns();
					ssize_t n = recv(fd, buf, size - have, MSG_DONTWAIT);
					if (n > 0) {
						if (have == 0) {
							sh->rdur = now_ns() - start;
							sh->arrival = (prev + start) / 2;
							sh->poll = start - prev;
						}
						have += n;
					}
					prev = start;
				}
				sh->got = r;
			}
			_exit(0);
		}
		pin(1);
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		connect(fd, (struct sockaddr *)&a, sizeof(a));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		double *dur = malloc(rounds * sizeof(double)), *pre = malloc(rounds * sizeof(double)),
		       *post = malloc(rounds * sizeof(double)), *poll = malloc(rounds * sizeof(double)),
		       *rd = malloc(rounds * sizeof(double));
		for (int r = 0; r < rounds; r++) {
			sh->round = r;
			double t0 = now_ns();
			send(fd, buf, size, 0);
			double t1 = now_ns();
			while (sh->got != r)
				;
			dur[r] = t1 - t0;
			pre[r] = sh->arrival - t0;
			post[r] = t1 - sh->arrival;
			poll[r] = sh->poll;
			rd[r] = sh->rdur;
		}
		waitpid(pid, NULL, 0);
		close(fd);
		close(ls);
		/* keep the fastest 10 % of rounds by send() duration */
		double *d2 = malloc(rounds * sizeof(double));
		memcpy(d2, dur, rounds * sizeof(double));
		qsort(d2, rounds, sizeof(double), cmp);
		double cut = d2[rounds / 10];
		int k = 0;
		double *p1 = malloc(rounds * sizeof(double)), *p2 = malloc(rounds * sizeof(double)), *p3 = malloc(rounds * sizeof(double)),
		       *p4 = malloc(rounds * sizeof(double));
		for (int r = 1; r < rounds; r++)
			if (dur[r] <= cut && poll[r] < POLL_MAX_NS) {
				p1[k] = pre[r];
				p2[k] = post[r];
				p3[k] = poll[r];
				p4[k] = rd[r];
				k++;
			}
		qsort(p1, k, sizeof(double), cmp);
		qsort(p2, k, sizeof(double), cmp);
		qsort(p3, k, sizeof(double), cmp);
		qsort(p4, k, sizeof(double), cmp);
		printf("size %6d B: send %7.0f ns (fastest-10%% cut; median of all %7.0f), pre %7.0f ns, post %7.0f ns, poll period %5.0f ns, first recv %6.0f ns (medians of %d rounds)\n",
		       size, cut, d2[rounds / 2], p1[k / 2], p2[k / 2], p3[k / 2], p4[k / 2], k);
	}
	return 0;
}
