/* Segments per message on loopback TCP: a one-way stream of small messages
 * against a ping-pong of them (issue 35, session 40).
 *
 * loopback.c's `cost` rows (the figure tbench.rs took until session 40) send
 * SIZE bytes one way and read them on the other socket, nothing sent back;
 * tcp.c's `rr` row alternates a request and a reply as tbench's client and
 * server do. The kernel ACKs the two differently (v5.2 net/ipv4/tcp.c
 * tcp_cleanup_rbuf(): a read of a small pushed segment sends an ACK at once
 * unless the socket is in pingpong mode, which tcp_event_data_sent() enters
 * when a socket sends within the delayed-ACK timeout of its last receive; a
 * pingpong socket's ACK waits and rides on its reply). This counts the
 * segments each pattern puts out per message (Tcp OutSegs in /proc/net/snmp,
 * the whole machine's, on an otherwise idle host) and times one message's
 * send() + recv() in each, both ends in one process, nothing blocking.
 *
 *   cc -O2 acks.c -o /tmp/acks && /tmp/acks > acks.out
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MESSAGES 200000

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Tcp OutSegs from /proc/net/snmp: a line of field names, then one of values. */
static long out_segs(void)
{
	char names[1024], values[1024];
	long v = -1;
	FILE *f = fopen("/proc/net/snmp", "r");
	while (f && fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Tcp:", 4) || !fgets(values, sizeof(values), f))
			continue;
		char *sn, *sv;
		char *n = strtok_r(names, " ", &sn), *val = strtok_r(values, " ", &sv);
		for (; n && val; n = strtok_r(NULL, " ", &sn), val = strtok_r(NULL, " ", &sv))
			if (!strcmp(n, "OutSegs")) {
				v = atol(val);
				break;
			}
		break;
	}
	if (f)
		fclose(f);
	return v;
}

static void pair(int *c, int *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
	bind(l, (struct sockaddr *)&a, sizeof(a));
	listen(l, 1);
	getsockname(l, (struct sockaddr *)&a, &len);
	*c = socket(AF_INET, SOCK_STREAM, 0);
	connect(*c, (struct sockaddr *)&a, sizeof(a));
	*s = accept(l, NULL, NULL);
	setsockopt(*c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	close(l);
}

static void xfer(int fd, char *buf, int n, int rd)
{
	int done = 0;
	while (done < n) {
		int r = rd ? recv(fd, buf + done, n - done, 0) : send(fd, buf + done, n - done, 0);
		if (r <= 0)
			exit(1);
		done += r;
	}
}

static void run(int size, int pingpong)
{
	static char buf[65536];
	int c, s;
	pair(&c, &s);
	for (int i = 0; i < 1000; i++) { /* settle the connection's modes */
		xfer(c, buf, size, 0);
		xfer(s, buf, size, 1);
		if (pingpong) {
			xfer(s, buf, size, 0);
			xfer(c, buf, size, 1);
		}
	}
	long seg0 = out_segs();
	double t0 = now_ns();
	for (int i = 0; i < MESSAGES; i += pingpong ? 2 : 1) {
		xfer(c, buf, size, 0);
		xfer(s, buf, size, 1);
		if (pingpong) {
			xfer(s, buf, size, 0);
			xfer(c, buf, size, 1);
		}
	}
	double ns = (now_ns() - t0) / MESSAGES;
	long segs = out_segs() - seg0;
	printf("%-9s %5d B: %.3f segments per message, %6.0f ns per send()+recv() (mean of %d messages)\n",
	       pingpong ? "pingpong" : "one-way", size, (double)segs / MESSAGES, ns, MESSAGES);
	close(c);
	close(s);
}

int main(void)
{
	int sizes[] = { 100, 4096 };
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 2; i++) {
			run(sizes[i], 0);
			run(sizes[i], 1);
		}
	return 0;
}
