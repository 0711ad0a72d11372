/*
 * tcp: the CPU cost of netperf TCP_STREAM's and TCP_RR's halves over
 * 127.0.0.1, with both ends of one connection in one process and nothing
 * blocking (so no wakeup is included: the engine charges wakeups itself,
 * crates/govlab-core/src/machine/kpath.rs).
 *
 * The sockets are netperf's defaults as MMTests runs it on loopback
 * (shellpack_src/src/netperf/netperf-bench: `-t TCP_STREAM -i 3,3 -I 95,5
 * -H 127.0.0.1 -- -m SIZE -M SIZE`): no -s/-S (the kernel's tcp_wmem and
 * tcp_rmem defaults, autotuning on), no -D (Nagle on, TCP_NODELAY unset).
 * A second set of rows repeats the stream measurement with TCP_NODELAY.
 *
 * - stream send: send() of BATCH messages of SIZE bytes into a connection
 *   with room (MSG_DONTWAIT; a short send is reported). On loopback the
 *   segment's transmission runs the receiver's TCP input in the sender's
 *   context (tcp_sendmsg -> tcp_push -> tcp_write_xmit -> ip_queue_xmit ->
 *   loopback_xmit -> netif_rx; the NET_RX softirq at the end of
 *   dev_queue_xmit: process_backlog -> ip_rcv -> tcp_v4_rcv ->
 *   tcp_rcv_established), and Nagle may hold small messages until an ACK.
 * - stream recv: recv() of those bytes, SIZE at a time (netserver's -M),
 *   which includes the ACKs the reads send (tcp_cleanup_rbuf,
 *   tcp_rcv_space_adjust) and what they set off at the sender on loopback
 *   (the ACK's input at the sender's socket, tcp_data_snd_check pushing
 *   what Nagle held, its delivery back to the receiving socket's backlog).
 *   A recv() that finds nothing (EAGAIN: data still held by Nagle or a
 *   delayed ACK) is timed apart and left out; how many there were is
 *   printed.
 * - rr: TCP_RR's 1-byte request and response; per transaction the client's
 *   send + recv and the server's recv + send.
 *
 * Each figure is the fastest of ROUNDS batches (the least disturbed by
 * other work on the machine), in ns per message or per transaction side;
 * the stream rows also print the medians and the split of the round whose
 * send + recv was fastest (Nagle and ACK timing move work between the
 * sides from one round to the next).
 *
 * Build and run: cc -O2 -Wall tcp.c -o /tmp/tcp && /tmp/tcp > tcp.out
 * Source of workload/netperf.rs's TCP constants.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 1000
#define WARMUP 100

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static char buf[1 << 20];

static void pair(int *c, int *s, int nodelay)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	bind(l, (struct sockaddr *)&a, sizeof(a));
	listen(l, 1);
	getsockname(l, (struct sockaddr *)&a, &len);
	*c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*c, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		exit(1);
	}
	*s = accept(l, NULL, NULL);
	if (nodelay) {
		setsockopt(*c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(*s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	close(l);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return v[n / 2];
}

static int sockopt(int fd, int opt)
{
	int v = 0;
	socklen_t len = sizeof(v);

	getsockopt(fd, SOL_SOCKET, opt, &v, &len);
	return v;
}

static void stream(int size, int batch, int nodelay)
{
	static double sends[ROUNDS], recvs[ROUNDS];
	int c, s, n = 0;
	long short_sends = 0, empty = 0, recv_calls = 0;
	double best_send = 1e18, best_recv = 1e18, best_sum = 1e18, sum_send = 0, sum_recv = 0;

	pair(&c, &s, nodelay);
	for (int i = 0; i < WARMUP + ROUNDS; i++) {
		double t0 = now_ns();
		long sent = 0;
		for (int k = 0; k < batch; k++) {
			ssize_t r = send(c, buf, size, MSG_DONTWAIT);
			if (r != size)
				short_sends++;
			if (r > 0)
				sent += r;
		}
		double t1 = now_ns(), idle = 0;
		long got = 0;
		int spins = 0;
		while (got < sent) {
			double u = now_ns();
			ssize_t r = recv(s, buf, size, MSG_DONTWAIT);
			if (r > 0) {
				got += r;
				recv_calls++;
				continue;
			}
			if (r < 0 && errno != EAGAIN) {
				perror("recv");
				exit(1);
			}
			idle += now_ns() - u;
			if (++spins == 1)
				empty++;
		}
		double t2 = now_ns();
		if (i < WARMUP)
			continue;
		double ts = (t1 - t0) / batch, tr = (t2 - t1 - idle) / batch;
		sends[n] = ts;
		recvs[n++] = tr;
		best_send = ts < best_send ? ts : best_send;
		best_recv = tr < best_recv ? tr : best_recv;
		if (ts + tr < best_sum) {
			best_sum = ts + tr;
			sum_send = ts;
			sum_recv = tr;
		}
	}
	printf("stream%s %5d B: send %6.0f ns, recv %6.0f ns per message; fastest round %6.0f = %6.0f + %6.0f; median send %6.0f, recv %6.0f"
	       " (batch %d, fastest of %d; rounds with an empty recv %ld, short sends %ld, recv calls per message %.2f; sndbuf %d rcvbuf %d at the end)\n",
	       nodelay ? "-nodelay" : "", size, best_send, best_recv, best_sum, sum_send, sum_recv, median(sends, n), median(recvs, n),
	       batch, n, empty, short_sends, (double)recv_calls / ((double)(WARMUP + ROUNDS) * batch), sockopt(c, SO_SNDBUF), sockopt(s, SO_RCVBUF));
	close(c);
	close(s);
}

static void one(int fd, int rd)
{
	for (;;) {
		ssize_t r = rd ? recv(fd, buf, 1, MSG_DONTWAIT) : send(fd, buf, 1, MSG_DONTWAIT);
		if (r == 1)
			return;
		if (r < 0 && errno != EAGAIN) {
			perror("rr");
			exit(1);
		}
	}
}

static void rr(int batch)
{
	int c, s, n = 0;
	/* the client's send and recv, the server's recv and send */
	double best[4] = { 1e18, 1e18, 1e18, 1e18 }, best_client = 1e18, best_server = 1e18;
	static double clients[ROUNDS], servers[ROUNDS];

	pair(&c, &s, 0);
	for (int i = 0; i < WARMUP + ROUNDS; i++) {
		double part[4] = { 0 };
		for (int k = 0; k < batch; k++) {
			double t0 = now_ns();
			one(c, 0);
			double t1 = now_ns();
			one(s, 1);
			double t2 = now_ns();
			one(s, 0);
			double t3 = now_ns();
			one(c, 1);
			double t4 = now_ns();
			part[0] += t1 - t0;
			part[1] += t4 - t3;
			part[2] += t2 - t1;
			part[3] += t3 - t2;
		}
		if (i < WARMUP)
			continue;
		for (int j = 0; j < 4; j++)
			best[j] = part[j] / batch < best[j] ? part[j] / batch : best[j];
		clients[n] = (part[0] + part[1]) / batch;
		servers[n] = (part[2] + part[3]) / batch;
		best_client = clients[n] < best_client ? clients[n] : best_client;
		best_server = servers[n] < best_server ? servers[n] : best_server;
		n++;
	}
	printf("rr 1 B: client %6.0f ns, server %6.0f ns per transaction (send + recv each); client send %6.0f recv %6.0f, server recv %6.0f send %6.0f;"
	       " median client %6.0f, server %6.0f (batch %d, fastest of %d)\n",
	       best_client, best_server, best[0], best[1], best[2], best[3], median(clients, n), median(servers, n), batch, n);
	close(c);
	close(s);
}

int main(void)
{
	static const int sizes[] = { 64, 128, 256, 1024, 2048, 3312, 4096, 8192, 16384 };
	double t0 = now_ns();

	for (int i = 0; i < 1000; i++)
		now_ns();
	printf("clock_gettime %.0f ns\n", (now_ns() - t0) / 1000);
	memset(buf, 'x', sizeof(buf));
	for (int nodelay = 0; nodelay < 2; nodelay++)
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			/*
			 * 128 KiB a batch: two loopback MSS (MTU 65536), so
			 * that Nagle's full segments form as in netperf's
			 * steady stream.
			 */
			int batch = 131072 / sizes[i];
			stream(sizes[i], batch, nodelay);
		}
	rr(20);
	return 0;
}
