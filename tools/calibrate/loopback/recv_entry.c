/* The first pass of a blocking receive, on an empty socket (issue 35, session 39).
 *
 * A reader that blocks in recv() first runs the receive path, finds the queue
 * empty, and only then sleeps (tcp_recvmsg -> sk_wait_data; udp_recvmsg and
 * unix_stream_read_generic likewise); woken, it runs the path again and copies.
 * loopback.c times a recv() that finds data at once, so this first pass is not
 * in its figure. A recv(MSG_DONTWAIT) on an empty socket runs the same first
 * pass and returns EAGAIN instead of sleeping: its time is the first pass less
 * the preparation to sleep. Per socket kind: N calls in batches of 1000, the
 * fastest batch and the median batch, ns per call.
 *
 *   cc -O2 recv_entry.c -o /tmp/recv_entry && /tmp/recv_entry > recv_entry.out
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BATCH 1000
#define BATCHES 2000

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void time_empty_recv(const char *what, int fd)
{
	static double per[BATCHES];
	char buf[4096];
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0 || errno != EAGAIN) {
				perror(what);
				exit(1);
			}
		per[b] = (now_ns() - t0) / BATCH;
	}
	qsort(per, BATCHES, sizeof(double), cmp);
	printf("%-22s empty recv(MSG_DONTWAIT): fastest batch %6.0f ns, median batch %6.0f ns (%d x %d calls)\n",
	       what, per[0], per[BATCHES / 2], BATCHES, BATCH);
}

int main(void)
{
	int one = 1;
	/* TCP over 127.0.0.1, TCP_NODELAY, as tbench's and netperf's */
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	bind(ls, (struct sockaddr *)&a, sizeof(a));
	listen(ls, 1);
	getsockname(ls, (struct sockaddr *)&a, &al);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&a, sizeof(a));
	int s = accept(ls, NULL, NULL);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	time_empty_recv("TCP loopback", s);

	/* UDP over 127.0.0.1 */
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in ua = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bind(u, (struct sockaddr *)&ua, sizeof(ua));
	time_empty_recv("UDP loopback", u);

	/* A Unix stream socket pair, as pgbench's connection to its backend */
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	time_empty_recv("Unix stream", sv[0]);
	return 0;
}
