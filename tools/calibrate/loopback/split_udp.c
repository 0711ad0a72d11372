/* Where a loopback UDP send wakes its receiver (issue 35, session 40).
 *
 * split.c's question for a datagram: a loopback sendto() runs the whole path
 * in the sender's context, udp_sendmsg() -> ip_make_skb()/udp_send_skb() ->
 * ip_output -> dev_queue_xmit -> loopback_xmit -> netif_rx, and the NET_RX
 * softirq at the transmit's local_bh_enable: ip_rcv -> udp_rcv ->
 * __udp_enqueue_schedule_skb, which queues the datagram on the receiving
 * socket and calls sk_data_ready (sock_def_readable), waking a sleeping
 * reader; then the softirq, udp_sendmsg and the syscall finish. This times
 * the part before the datagram is there for the reader and the part after.
 *
 * The same method as split.c: two processes on two CPUs, one UDP socket each
 * on 127.0.0.1; the reader never sleeps, polls recv(MSG_DONTWAIT) and stamps
 * the start of each call, the datagram's arrival taken at the midpoint
 * between the call that found nothing and the one that found it; the writer
 * stamps sendto()'s entry and return and waits for the reader's
 * acknowledgement through shared memory, so the queue is empty each round.
 *   pre  = arrival - send entry    (the path up to __udp_enqueue_schedule_skb)
 *   post = send return - arrival   (what the sender still runs after it)
 * The rounds among the fastest 10 % by sendto() duration whose reader polled
 * faster than the poll limit are kept and their medians printed. UDP's
 * receive path takes no socket lock the reader holds (the queue's spinlock
 * only), so no round is lost to a backlog as in split.c's TCP.
 *
 *   cc -O2 split_udp.c -o /tmp/split_udp && /tmp/split_udp [rounds [poll_max_ns]] > split_udp.out
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
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
	volatile int round;
	volatile int got;
	volatile double arrival;
	volatile double poll;
	volatile double rdur;
};

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp);
	return n ? v[n / 2] : 0.0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20000;
	double poll_max = argc > 2 ? atof(argv[2]) : 1000.0;
	int sizes[] = { 64, 1024, 16384 };
	struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static char buf[1 << 17];

	for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		int size = sizes[si];
		int rs = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t al = sizeof(a);
		bind(rs, (struct sockaddr *)&a, sizeof(a));
		getsockname(rs, (struct sockaddr *)&a, &al);
		sh->round = -1;
		sh->got = -1;
		pid_t pid = fork();
		if (pid == 0) {
			pin(0);
			for (int r = 0; r < rounds; r++) {
				while (sh->round != r)
					;
				double prev = now_ns(), start = prev;
				for (;;) {
					start = now_ns();
					ssize_t n = recv(rs, buf, sizeof(buf), MSG_DONTWAIT);
					if (n > 0) {
						sh->rdur = now_ns() - start;
						sh->arrival = (prev + start) / 2;
						sh->poll = start - prev;
						break;
					}
					prev = start;
				}
				sh->got = r;
			}
			_exit(0);
		}
		pin(1);
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		connect(fd, (struct sockaddr *)&a, sizeof(a));
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
		close(rs);
		double *d2 = malloc(rounds * sizeof(double));
		memcpy(d2, dur, rounds * sizeof(double));
		qsort(d2, rounds, sizeof(double), cmp);
		double cut = d2[rounds / 10];
		int k = 0;
		double *p1 = malloc(rounds * sizeof(double)), *p2 = malloc(rounds * sizeof(double)), *p3 = malloc(rounds * sizeof(double)),
		       *p4 = malloc(rounds * sizeof(double));
		for (int r = 1; r < rounds; r++)
			if (dur[r] <= cut && poll[r] < poll_max) {
				p1[k] = pre[r];
				p2[k] = post[r];
				p3[k] = poll[r];
				p4[k] = rd[r];
				k++;
			}
		double mpre = median(p1, k), mpost = median(p2, k);
		printf("size %6d B: send %7.0f ns (fastest-10%% cut; median of all %7.0f), pre %7.0f ns, post %7.0f ns, poll period %5.0f ns, first recv %6.0f ns (medians of %d rounds), post share %.3f\n",
		       size, cut, d2[rounds / 2], mpre, mpost, median(p3, k), median(p4, k), k,
		       mpre + mpost > 0 ? mpost / (mpre + mpost) : 0.0);
	}
	return 0;
}
