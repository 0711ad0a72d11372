/*
 * udp: the CPU cost of netperf UDP_STREAM's two halves over 127.0.0.1, per
 * datagram of SIZE bytes, with nothing blocking (one process, one CPU).
 *
 * - send: sendto() of BATCH datagrams into a receive buffer with room for
 *   them all. On loopback the sender's sendto() also runs the receive side
 *   up to the socket (loopback_xmit -> netif_rx -> NET_RX softirq at the
 *   end of the send, ip_rcv -> udp_rcv -> __udp_enqueue_schedule_skb), so
 *   this is netperf's whole cost per delivered datagram, less the wakeup
 *   (nobody sleeps on the socket here).
 * - recv: recvfrom() of those BATCH datagrams (netserver's cost: the
 *   syscall, the dequeue, the copy out, the skb's free).
 * - drop: sendto() into a receive buffer that is full (the datagram is
 *   processed up to __udp_enqueue_schedule_skb and freed there).
 *
 * Each figure is the fastest of ROUNDS batches (the least disturbed by
 * other work on the machine), in ns per datagram.
 *
 * Build and run: cc -O2 udp.c -o /tmp/udp && /tmp/udp > udp.out
 * Source of workload/netperf.rs's UDP_SEND_NS, UDP_RECV_NS and
 * UDP_COPY_NS_PER_BYTE.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5000

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static char buf[65536];

static void measure(int size, int batch)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
	double best_send = 1e18, best_recv = 1e18, best_drop = 1e18;
	int rcvbuf = 0;

	bind(r, (struct sockaddr *)&a, sizeof(a));
	getsockname(r, (struct sockaddr *)&a, &len);
	connect(s, (struct sockaddr *)&a, sizeof(a));
	len = sizeof(rcvbuf);
	getsockopt(r, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
	for (int i = 0; i < ROUNDS; i++) {
		double t0 = now_ns();
		for (int k = 0; k < batch; k++)
			send(s, buf, size, 0);
		double t1 = now_ns();
		int got = 0;
		for (int k = 0; k < batch; k++)
			if (recv(r, buf, sizeof(buf), MSG_DONTWAIT) == size)
				got++;
		double t2 = now_ns();
		if (got != batch) {
			fprintf(stderr, "size %d: %d of %d received\n", size, got, batch);
			continue;
		}
		if (t1 - t0 < best_send)
			best_send = t1 - t0;
		if (t2 - t1 < best_recv)
			best_recv = t2 - t1;
	}
	/*
	 * Drops: a second receiver with the smallest buffer the kernel allows
	 * (SOCK_MIN_RCVBUF) takes one datagram and drops every later one.
	 */
	int d = socket(AF_INET, SOCK_DGRAM, 0), one = 1;
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	len = sizeof(b);
	setsockopt(d, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
	bind(d, (struct sockaddr *)&b, sizeof(b));
	getsockname(d, (struct sockaddr *)&b, &len);
	connect(s, (struct sockaddr *)&b, sizeof(b));
	send(s, buf, size, 0);
	for (int i = 0; i < ROUNDS; i++) {
		double t0 = now_ns();
		for (int k = 0; k < batch; k++)
			send(s, buf, size, 0);
		double t1 = now_ns();
		if (t1 - t0 < best_drop)
			best_drop = t1 - t0;
	}
	printf("size %5d B: send %6.0f ns, recv %6.0f ns, send dropped %6.0f ns per datagram (batch %d, rcvbuf %d, fastest of %d)\n",
	       size, best_send / batch, best_recv / batch, best_drop / batch, batch, rcvbuf, ROUNDS);
	close(r);
	close(s);
	close(d);
}

int main(void)
{
	static const int sizes[] = { 64, 128, 256, 1024, 2048, 3312, 4096, 8192, 16384 };

	memset(buf, 'x', sizeof(buf));
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* as many as the default receive buffer surely takes */
		int batch = sizes[i] <= 1024 ? 32 : sizes[i] <= 4096 ? 16 : 4;
		measure(sizes[i], batch);
	}
	return 0;
}
