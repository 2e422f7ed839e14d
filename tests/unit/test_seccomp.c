/* SPDX-License-Identifier: MIT */
/* The sandbox's system call filter as its builder makes it: the BPF
 * program's descriptor, and the rules that compare arguments, checked by
 * loading the filter into a child of this test and asking the real kernel.
 * seccomp.test.mjs checks the whole list inside a session; here are the
 * sweeps of values that would take too long there: every personality bit,
 * every socket family, and arguments with garbage in their upper half. */
#include "test.h"

#include "sandbox/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define UPPER_GARBAGE ((uint64_t)1 << 32)

static void descriptor_holds_a_whole_program_from_its_start(void)
{
	struct error err;
	int first = sandbox_seccomp_filter_fd(&err);
	ASSERT(first >= 0);
	int second = sandbox_seccomp_filter_fd(&err);
	ASSERT(second >= 0 && second != first);
	struct stat st;
	ASSERT_EQ(fstat(first, &st), 0);
	ASSERT(st.st_size > 0);
	ASSERT_EQ(st.st_size % (off_t)sizeof(struct sock_filter), 0);
	ASSERT_EQ(lseek(first, 0, SEEK_CUR), 0);
	/* Each its own file: reading one moves nothing in the other. */
	char byte;
	ASSERT_EQ(read(first, &byte, 1), 1);
	ASSERT_EQ(lseek(second, 0, SEEK_CUR), 0);
	ASSERT(fcntl(first, F_GETFD) & FD_CLOEXEC);
	close(first);
	close(second);
}

/* Loads the filter in this process, as bwrap does. */
static void load_filter(void)
{
	struct error err;
	int fd = sandbox_seccomp_filter_fd(&err);
	ASSERT(fd >= 0);
	struct stat st;
	ASSERT_EQ(fstat(fd, &st), 0);
	static struct sock_filter program[BPF_MAXINSNS];
	ASSERT((size_t)st.st_size <= sizeof(program));
	ASSERT_EQ(read(fd, program, (size_t)st.st_size), st.st_size);
	close(fd);
	struct sock_fprog fprog = { .len = (unsigned short)(st.st_size / sizeof(program[0])),
				    .filter = program };
	ASSERT_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ASSERT_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog), 0);
}

/* Runs check in a child under the filter; its failures are the child's
 * exit status. */
static void under_filter(void (*check)(void))
{
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		load_filter();
		if (!test_failures)
			check();
		_exit(test_failures > 100 ? 100 : test_failures);
	}
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* What the kernel would do with the argument: it reads 32 bits. */
static bool personality_harmless(uint64_t value)
{
	uint32_t persona = (uint32_t)value;
	return persona == 0xffffffffu || (persona & ~(uint32_t)(PER_LINUX32 | UNAME26)) == 0;
}

static int personality_errno(uint64_t value)
{
	long old = syscall(SYS_personality, value);
	if (old < 0)
		return errno;
	syscall(SYS_personality, PER_LINUX);
	return 0;
}

#define ASSERT_PERSONALITY(value)                                                \
	do {                                                                     \
		uint64_t v_ = (value);                                           \
		int got_ = personality_errno(v_);                                \
		if (got_ != (personality_harmless(v_) ? 0 : EPERM))              \
			FAIL_AT("personality(0x%llx): errno %d, expected %s",    \
				(unsigned long long)v_, got_,                    \
				personality_harmless(v_) ? "success" : "EPERM"); \
	} while (0)

static void check_personalities(void)
{
	const uint64_t named[] = { PER_LINUX,
				   PER_LINUX32,
				   UNAME26,
				   UNAME26 | PER_LINUX32,
				   0xffffffffu,
				   ADDR_NO_RANDOMIZE,
				   READ_IMPLIES_EXEC,
				   MMAP_PAGE_ZERO,
				   ADDR_LIMIT_3GB,
				   PER_SVR4,
				   ~(uint64_t)0,
				   UPPER_GARBAGE,
				   UPPER_GARBAGE | ADDR_NO_RANDOMIZE,
				   UPPER_GARBAGE | PER_LINUX32 };
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		ASSERT_PERSONALITY(named[i]);
	for (int bit = 0; bit < 32; bit++) {
		ASSERT_PERSONALITY((uint64_t)1 << bit);
		ASSERT_PERSONALITY(0xffffffffu & ~((uint32_t)1 << bit));
		ASSERT_PERSONALITY(((uint64_t)1 << bit) | PER_LINUX32 | UNAME26);
	}
	uint32_t x = 2463534242u; /* xorshift32: the same values every run */
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		ASSERT_PERSONALITY(x);
		ASSERT_PERSONALITY(x & (x >> 7) & (x >> 11)); /* sparser */
		ASSERT_PERSONALITY(x | (x << 9) | (x >> 5));  /* denser */
	}
}

static void personality_allows_only_the_harmless_values(void)
{
	under_filter(check_personalities);
}

/* socket(2) and socketpair(2) of every family: refused but for UNIX, IPv4,
 * IPv6 and netlink, which the kernel itself answers, with success or an
 * error other than EPERM (datagram sockets need no privilege there). */
static void check_families(void)
{
	for (int family = 0; family <= 64; family++) {
		bool allowed = family == AF_UNIX || family == AF_INET || family == AF_INET6 ||
			       family == AF_NETLINK;
		long fd = syscall(SYS_socket, family, SOCK_DGRAM, 0);
		int got = fd < 0 ? errno : 0;
		if (fd >= 0)
			close((int)fd);
		if (family != AF_UNSPEC && (got == EPERM) == allowed)
			FAIL_AT("socket(%d, SOCK_DGRAM): errno %d", family, got);
		int pair[2];
		got = socketpair(family, SOCK_DGRAM, 0, pair) == 0 ? 0 : errno;
		if (got == 0) {
			close(pair[0]);
			close(pair[1]);
		}
		if (family != AF_UNSPEC && (got == EPERM) == allowed)
			FAIL_AT("socketpair(%d, SOCK_DGRAM): errno %d", family, got);
	}
}

static void only_unix_ip_and_netlink_sockets(void)
{
	under_filter(check_families);
}

static int socket_errno(uint64_t family, uint64_t type, uint64_t protocol)
{
	long fd = syscall(SYS_socket, family, type, protocol);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int setsockopt_errno(int family, uint64_t level, uint64_t option)
{
	int fd = socket(family, SOCK_DGRAM, 0);
	if (fd < 0)
		return -errno;
	int value = 0;
	long rc = syscall(SYS_setsockopt, fd, level, option, &value, sizeof(value));
	int got = rc < 0 ? errno : 0;
	close(fd);
	return got;
}

/* The kernel reads these arguments as ints: what it would take for a
 * refused value is refused too. */
static void check_upper_halves(void)
{
	ASSERT_EQ(socket_errno(AF_NETLINK, SOCK_RAW, UPPER_GARBAGE | NETLINK_NETFILTER), EPERM);
	ASSERT_EQ(socket_errno(UPPER_GARBAGE | AF_PACKET, SOCK_RAW, 0), EPERM);
	ASSERT_EQ(socket_errno(UPPER_GARBAGE | AF_INET, SOCK_DGRAM, 0), EPERM);
	ASSERT_EQ(socket_errno(AF_INET, UPPER_GARBAGE | SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP),
		  EPERM);
	ASSERT_EQ(socket_errno(AF_INET6, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMPV6), EPERM);
	ASSERT_EQ(setsockopt_errno(AF_INET, UPPER_GARBAGE | IPPROTO_IP, 64), EPERM);
	ASSERT_EQ(setsockopt_errno(AF_INET, IPPROTO_IP, UPPER_GARBAGE | 96), EPERM);
	ASSERT_EQ(setsockopt_errno(AF_INET6, UPPER_GARBAGE | IPPROTO_IPV6, UPPER_GARBAGE | 65),
		  EPERM);
	/* Neighbours that stay open. */
	ASSERT_EQ(socket_errno(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), 0);
	ASSERT_EQ(socket_errno(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), 0);
	ASSERT_EQ(setsockopt_errno(AF_INET, IPPROTO_IP, IP_TOS), 0);
	ASSERT_EQ(setsockopt_errno(AF_INET6, IPPROTO_IPV6, IPV6_TCLASS), 0);
}

static void arguments_are_compared_as_the_kernel_reads_them(void)
{
	under_filter(check_upper_halves);
}

int main(void)
{
	RUN_TEST(descriptor_holds_a_whole_program_from_its_start);
	RUN_TEST(personality_allows_only_the_harmless_values);
	RUN_TEST(only_unix_ip_and_netlink_sockets);
	RUN_TEST(arguments_are_compared_as_the_kernel_reads_them);
	TEST_EXIT();
}
