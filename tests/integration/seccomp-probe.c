/* SPDX-License-Identifier: MIT */
/* Run inside a session by seccomp.test.mjs, compiled there: makes the
 * system calls the sandbox's filter refuses, and calls of the same kinds
 * it allows, and prints one line per call, "NAME ok" or "NAME ERRNONAME".
 * The refused calls get arguments the kernel itself would answer with
 * another error (EFAULT, EBADF, EINVAL) or with success wherever that is
 * possible, so EPERM can only come from the filter.
 *
 *   seccomp-probe calls   the calls, then the process's seccomp state
 *   seccomp-probe ia32    getpid through int 0x80 (the 32-bit table)
 *   seccomp-probe x32     getpid with the x32 bit set */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/quota.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#define NETFILTER_TABLE_REPLACE 64 /* IPT_SO_SET_REPLACE, IP6T_SO_SET_REPLACE */

static void report(const char *name, long result)
{
	int saved = errno;
	printf("%s %s\n", name, result >= 0 ? "ok" : strerrorname_np(saved));
}

/* For calls that return a descriptor on success. */
static void report_fd(const char *name, long fd)
{
	report(name, fd);
	if (fd >= 0)
		close((int)fd);
}

static void setsockopt_probe(const char *name, int family, int level, int option)
{
	int fd = socket(family, SOCK_DGRAM, 0);
	char junk[8] = { 0 };
	report(name, fd < 0 ? fd : setsockopt(fd, level, option, junk, sizeof(junk)));
	if (fd >= 0)
		close(fd);
}

/* In a child, so the probe itself stays in its namespace. */
static void unshare_probe(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
	int status = 0;
	waitpid(pid, &status, 0);
	errno = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
	report("unshare(CLONE_NEWUSER)", errno ? -1 : 0);
}

static void refused_calls(void)
{
	report("add_key", syscall(SYS_add_key, NULL, "lizard", NULL, 0, -2));
	report("request_key", syscall(SYS_request_key, NULL, "lizard", NULL, 0));
	report("keyctl", syscall(SYS_keyctl, -1L, 0, 0, 0, 0));
	report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	report("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
	report("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
	report("io_uring_register", syscall(SYS_io_uring_register, -1, 0, NULL, 0));
	report("bpf", syscall(SYS_bpf, -1, NULL, 0));
	report_fd("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
	report("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
	report("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0));
	report("init_module", syscall(SYS_init_module, NULL, 0, ""));
	report("finit_module", syscall(SYS_finit_module, -1, "", 0));
	report("delete_module", syscall(SYS_delete_module, "lizard_none", 0));
	report("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));
	report("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL, 0));
	report("iopl", syscall(SYS_iopl, 4));
	report("ioperm", syscall(SYS_ioperm, 0, 0, 0));
	report("swapon", syscall(SYS_swapon, NULL, -1));
	report("swapoff", syscall(SYS_swapoff, NULL));
	report("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
	report("acct", syscall(SYS_acct, NULL));
	report("settimeofday", syscall(SYS_settimeofday, (void *)1, NULL));
	report("clock_settime", syscall(SYS_clock_settime, CLOCK_REALTIME, NULL));
	report("clock_adjtime", syscall(SYS_clock_adjtime, CLOCK_REALTIME, NULL));
	struct timex read_only = { .modes = 0 };
	report("adjtimex", syscall(SYS_adjtimex, &read_only));
	report("quotactl", syscall(SYS_quotactl, QCMD(Q_SYNC, 99), NULL, 0, NULL));
	report("quotactl_fd", syscall(SYS_quotactl_fd, -1, 0, 0, NULL));
	report("syslog", syscall(SYS_syslog, 10, NULL, 0));
	report("lookup_dcookie", syscall(SYS_lookup_dcookie, 0, NULL, 0));
	report("nfsservctl", syscall(SYS_nfsservctl, 0, NULL, NULL));
	report("uselib", syscall(SYS_uselib, NULL));
	long persona = syscall(SYS_personality, ADDR_NO_RANDOMIZE);
	report("personality(ADDR_NO_RANDOMIZE)", persona);
	if (persona >= 0)
		syscall(SYS_personality, PER_LINUX);
	persona = syscall(SYS_personality, READ_IMPLIES_EXEC);
	report("personality(READ_IMPLIES_EXEC)", persona);
	if (persona >= 0)
		syscall(SYS_personality, PER_LINUX);
	report_fd("socket(AF_NETLINK,NETLINK_NETFILTER)",
		  socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER));
	report_fd("socket(AF_NETLINK,NETLINK_XFRM)", socket(AF_NETLINK, SOCK_RAW, NETLINK_XFRM));
	report_fd("socket(AF_INET,SOCK_RAW)", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	report_fd("socket(AF_INET6,SOCK_RAW)",
		  socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMPV6));
	report_fd("socket(AF_INET,SOCK_PACKET)", socket(AF_INET, SOCK_PACKET, 0));
	report_fd("socket(AF_PACKET)", socket(AF_PACKET, SOCK_RAW, 0));
	report_fd("socket(AF_VSOCK)", socket(AF_VSOCK, SOCK_STREAM, 0));
	report_fd("socket(AF_ALG)", socket(AF_ALG, SOCK_SEQPACKET, 0));
	report_fd("socket(AF_KEY)", socket(AF_KEY, SOCK_RAW, 2));
	int pair[2];
	report("socketpair(AF_VSOCK)", socketpair(AF_VSOCK, SOCK_STREAM, 0, pair));
	setsockopt_probe("setsockopt(IPT_SO_SET_REPLACE)", AF_INET, IPPROTO_IP,
			 NETFILTER_TABLE_REPLACE);
	setsockopt_probe("setsockopt(IP6T_SO_SET_REPLACE)", AF_INET6, IPPROTO_IPV6,
			 NETFILTER_TABLE_REPLACE);
}

/* Of the same kinds, allowed: they tell a filter from a broken sandbox. */
static void allowed_calls(void)
{
	report_fd("socket(AF_INET,SOCK_DGRAM)", socket(AF_INET, SOCK_DGRAM, 0));
	report_fd("socket(AF_INET6,SOCK_STREAM)", socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
	report_fd("socket(AF_UNIX)", socket(AF_UNIX, SOCK_STREAM, 0));
	report_fd("socket(AF_NETLINK,NETLINK_ROUTE)", socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
	int pair[2];
	int made = socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
	report("socketpair(AF_UNIX)", made);
	if (made == 0) {
		close(pair[0]);
		close(pair[1]);
	}
	setsockopt_probe("setsockopt(IP_TOS)", AF_INET, IPPROTO_IP, IP_TOS);
	report("personality(query)", syscall(SYS_personality, 0xffffffffUL));
	long persona = syscall(SYS_personality, PER_LINUX32);
	report("personality(PER_LINUX32)", persona);
	if (persona >= 0)
		syscall(SYS_personality, PER_LINUX);
	struct timespec now;
	report("clock_gettime", clock_gettime(CLOCK_REALTIME, &now));
	unshare_probe();
}

/* "seccomp-mode N" and "seccomp-filters N" from /proc/self/status. */
static void seccomp_state(void)
{
	FILE *status = fopen("/proc/self/status", "r");
	char line[256];
	while (status && fgets(line, sizeof(line), status)) {
		int value;
		if (sscanf(line, "Seccomp: %d", &value) == 1)
			printf("seccomp-mode %d\n", value);
		else if (sscanf(line, "Seccomp_filters: %d", &value) == 1)
			printf("seccomp-filters %d\n", value);
	}
	if (status)
		fclose(status);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "calls") == 0) {
		refused_calls();
		allowed_calls();
		seccomp_state();
		return 0;
	}
	if (strcmp(mode, "ia32") == 0) {
		long pid;
		__asm__ volatile("int $0x80" : "=a"(pid) : "a"(20L) : "memory"); /* getpid */
		printf("ia32 getpid %ld\n", pid);
		return 0;
	}
	if (strcmp(mode, "x32") == 0) {
		long pid = syscall(0x40000000L | SYS_getpid);
		report("x32 getpid", pid);
		return 0;
	}
	fprintf(stderr, "usage: seccomp-probe calls|ia32|x32\n");
	return 2;
}
