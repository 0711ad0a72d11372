/*
 * proclog.so: an LD_PRELOAD logger of every program image's life during a
 * build, for tools/calibrate/kbuild/README.md.
 *
 * A constructor notes when an image starts (CLOCK_MONOTONIC) and the
 * process's CPU clock then (CLOCK_PROCESS_CPUTIME_ID, all threads, from
 * zero at the fork); the image's end is logged at exit (destructor),
 * _exit, or just before an exec replaces it. A child forked without an
 * exec gets its own start from a pthread_atfork handler; a vfork child
 * (dash and posix_spawn use them) runs in its parent's memory until its
 * exec, so it logs nothing and its program is logged from its own
 * constructor. One line per
 * image, appended with one write() to $PROCLOG (O_APPEND):
 *
 *   pid ppid comm how cpu_at_start_ns cpu_at_end_ns start_ns end_ns argv...
 *
 * An image's own CPU time is its cpu_at_end less the previous image's of
 * the same pid (0 for the first: the clock starts at the fork), so the
 * exec and dynamic linking count towards the new image.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pid_t me, parent;
static long long t_start, cpu_start;
static char comm[32], args[200];
static int logged;

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void read_small(const char *path, char *buf, size_t len, int nul_to_space)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	buf[n] = 0;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n' || (nul_to_space && buf[i] == 0) || buf[i] == '\t')
			buf[i] = ' ';
}

static void begin(void)
{
	me = getpid();
	parent = getppid();
	t_start = clock_ns(CLOCK_MONOTONIC);
	cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	logged = 0;
}

static void forked_child(void)
{
	begin();
}

static void finish(const char *how)
{
	char line[400];
	const char *path = getenv("PROCLOG");
	int fd, n;

	/* A vfork()ed child shares our memory until it execs: not ours to log. */
	if (logged || !path || getpid() != me)
		return;
	logged = 1;
	n = snprintf(line, sizeof(line), "%d %d %s %s %lld %lld %lld %lld %s\n",
		     me, parent, comm[0] ? comm : "?", how, cpu_start,
		     clock_ns(CLOCK_PROCESS_CPUTIME_ID), t_start,
		     clock_ns(CLOCK_MONOTONIC), args);
	if (n >= (int)sizeof(line)) {
		n = sizeof(line);
		line[n - 1] = '\n';
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, n) != n) {
			/* nothing to do: the log is best effort */
		}
		close(fd);
	}
}

__attribute__((constructor)) static void proclog_init(void)
{
	begin();
	read_small("/proc/self/comm", comm, sizeof(comm), 0);
	comm[strcspn(comm, " ")] = 0;
	read_small("/proc/self/cmdline", args, sizeof(args), 1);
	pthread_atfork(NULL, NULL, forked_child);
}

__attribute__((destructor)) static void proclog_fini(void)
{
	finish("exit");
}

/* The exec family: log the image it replaces; if the exec fails, the
 * image goes on and is logged again at its end (the summary keeps the
 * last line of a pid's image). */
#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static int after_failed_exec(int r)
{
	logged = 0;
	return r;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	finish("exec");
	return after_failed_exec(REAL(execve)(path, argv, envp));
}

int execv(const char *path, char *const argv[])
{
	finish("exec");
	return after_failed_exec(REAL(execv)(path, argv));
}

int execvp(const char *file, char *const argv[])
{
	finish("exec");
	return after_failed_exec(REAL(execvp)(file, argv));
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	finish("exec");
	return after_failed_exec(REAL(execvpe)(file, argv, envp));
}

void _exit(int status)
{
	finish("_exit");
	REAL(_exit)(status);
	__builtin_unreachable();
}

void _Exit(int status)
{
	finish("_exit");
	REAL(_Exit)(status);
	__builtin_unreachable();
}
