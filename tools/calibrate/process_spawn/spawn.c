/*
 * spawn: wall time of process creation on this machine, as the parent sees
 * it (the child's run included), the fastest of many rounds so that other
 * load on the shared VM does not inflate it:
 *
 *   fork_exit   fork(); the child _exit(0)s at once; the parent waitpid()s.
 *               The fork, the exit and the reap of a small address space.
 *   fork_exec   fork(); the child execve()s /bin/true (dynamically linked,
 *               so ld.so maps libc and the first faults of a fresh address
 *               space are paid); the parent waitpid()s.
 *   spawn_sh    fork+exec of `/bin/sh -c :` (dash): one shell start, as a
 *               test script's command substitution or subshell costs.
 *   spawn_git   fork+exec of `git --version`: the git driver's start-up.
 *
 * Build and run: cc -O2 spawn.c -o /tmp/spawn && /tmp/spawn
 * Source of machine/fork.rs's cost constants and of workload/gitsource.rs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void run(const char *name, char *const argv[], int rounds)
{
	double best = 1e18, sum = 0;

	for (int k = 0; k < rounds; k++) {
		double t0 = now_ns();
		pid_t p = fork();
		if (p == 0) {
			if (argv) {
				int fd = open("/dev/null", O_WRONLY);
				dup2(fd, 1);
				execv(argv[0], argv);
			}
			_exit(0);
		}
		waitpid(p, NULL, 0);
		double d = now_ns() - t0;
		best = d < best ? d : best;
		sum += d;
	}
	printf("%-10s best %8.0f ns  mean %8.0f ns  (%d rounds)\n", name, best, sum / rounds, rounds);
}

int main(void)
{
	char *tru[] = { "/bin/true", NULL };
	char *sh[] = { "/bin/sh", "-c", ":", NULL };
	char *git[] = { "/usr/bin/git", "--version", NULL };

	run("fork_exit", NULL, 5000);
	run("fork_exec", tru, 2000);
	run("spawn_sh", sh, 2000);
	run("spawn_git", git, 1000);
	return 0;
}
