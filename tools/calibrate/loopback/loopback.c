/*
 * loopback: round trip of a small request and reply between two processes
 * over TCP on 127.0.0.1 (as tbench's client and server talk), blocking
 * sockets with TCP_NODELAY. Reports the mean round trip (both processes
 * block and wake each other once per direction) and, with both ends in one
 * process and no blocking, the CPU cost of one send()+recv() of SIZE bytes.
 *
 * Build and run: cc -O2 loopback.c -o /tmp/loopback && /tmp/loopback
 * Source of workload/tbench.rs's per-message constants.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
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

static int xfer(int fd, char *buf, int n, int rd)
{
	int done = 0;
	while (done < n) {
		int r = rd ? recv(fd, buf + done, n - done, 0) : send(fd, buf + done, n - done, 0);
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static void rtt(int size, int rounds)
{
	static char buf[65536];
	int c, s;

	pair(&c, &s);
	if (fork() == 0) {
		for (int i = 0; i < rounds; i++) {
			if (xfer(s, buf, size, 1) || xfer(s, buf, size, 0))
				break;
		}
		_exit(0);
	}
	double t0 = now_ns();
	for (int i = 0; i < rounds; i++) {
		xfer(c, buf, size, 0);
		xfer(c, buf, size, 1);
	}
	double d = now_ns() - t0;
	wait(NULL);
	printf("rtt %6d B: %8.0f ns per round trip (%d rounds, two processes)\n", size, d / rounds, rounds);
	close(c);
	close(s);
}

static void cost(int size)
{
	static char buf[65536];
	int c, s;
	double best = 1e18;

	pair(&c, &s);
	for (int k = 0; k < 2000; k++) {
		double t0 = now_ns();
		for (int i = 0; i < 20; i++) {
			xfer(c, buf, size, 0);
			xfer(s, buf, size, 1);
		}
		double d = (now_ns() - t0) / 20;
		best = d < best ? d : best;
	}
	printf("cost %5d B: %8.0f ns per send+recv (one process, nothing blocks)\n", size, best);
	close(c);
	close(s);
}

int main(void)
{
	cost(100);
	cost(4096);
	rtt(100, 20000);
	rtt(4096, 20000);
	return 0;
}
