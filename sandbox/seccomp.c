/* SPDX-License-Identifier: MIT */
/* The sandbox's default system call filter, built with libseccomp in the
 * spirit of the container runtimes' default profiles, but as a deny list:
 * a desktop runs whatever programs its user starts, so every call is
 * allowed except the kernel facilities a desktop has no use for and that
 * keep turning up in kernel exploits (keyrings, perf events, io_uring,
 * BPF, userfaultfd, module loading, netfilter, raw and packet sockets and
 * the rarer socket families). Those fail with EPERM, which programs take
 * as "not allowed here" and work around. Namespaces, chroot and seccomp
 * itself stay open: the init makes a user namespace for the sandbox's
 * user, and Chromium builds its own sandbox from them and stacks its own
 * filter on this one. Only the native system call table is served: a
 * 32-bit (int 0x80) or x32 call kills its process, so no other table's
 * numbers lead around the list. Since Linux 5.11 the kernel caches, per
 * call number, that a call the filter does not name is allowed whatever
 * its arguments, so the filter costs most calls nothing. */
#include "sandbox/seccomp.h"

#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define REFUSED SCMP_ACT_ERRNO(EPERM)

/* Refused whatever their arguments. Several of them need capabilities of
 * the host's initial namespace, which nothing in a sandbox has; they are
 * here so that no kernel bug in a capability check opens them. */
static const char *const refused_calls[] = {
	/* Kernel keyrings: shared kernel state with a long record of
	 * reference-count bugs; a desktop session keeps no keys there. */
	"add_key",
	"request_key",
	"keyctl",
	/* Performance counters: hardware side channels and a large driver
	 * surface, open to a process for itself. */
	"perf_event_open",
	/* io_uring: the subsystem behind most recent kernel exploits;
	 * programs fall back to threads and epoll when it is refused. */
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	/* BPF programs and maps, and userfaultfd, which lets a process stall
	 * the kernel inside a copy from its memory, the usual way to win a
	 * kernel race. (Its other door, /dev/userfaultfd, is not in bwrap's
	 * minimal /dev.) */
	"bpf",
	"userfaultfd",
	/* Replacing or extending the kernel. */
	"kexec_load",
	"kexec_file_load",
	"init_module",
	"finit_module",
	"delete_module",
	/* File handles: open_by_handle_at opens any inode of a filesystem
	 * by number, past the sandbox's view of it. */
	"open_by_handle_at",
	"name_to_handle_at",
	/* I/O ports, swap, reboot (in the sandbox's PID namespace its root
	 * could end the session with it), process accounting, the clock and
	 * its NTP state (adjtimex reads and sets through one structure the
	 * filter cannot look into), disk quotas and the kernel log. */
	"iopl",
	"ioperm",
	"swapon",
	"swapoff",
	"reboot",
	"acct",
	"settimeofday",
	"clock_settime",
	"clock_adjtime",
	"adjtimex",
	"quotactl",
	"quotactl_fd",
	"syslog",
	/* Obsolete: gone from current kernels or 32-bit only (vm86), kept
	 * refused on any kernel that still has them. */
	"lookup_dcookie",
	"nfsservctl",
	"uselib",
	"vm86",
	"vm86old",
};

/* Socket families a desktop uses; socket() and socketpair() refuse the
 * others. Most of those are protocols for hardware or networks a sandbox
 * does not have (CAN, Bluetooth, amateur radio, TIPC, RDS...), each a
 * kernel module that the first socket() of its family loads, which is how
 * many socket bugs were reached; AF_VSOCK talks to the hypervisor on a
 * virtual machine, AF_ALG hands untrusted input to the kernel's crypto
 * templates (user-space libraries do the same work in the process), AF_KEY
 * configures IPsec, AF_PACKET captures and forges frames. */
static const int allowed_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };

/* Netlink protocols that configure the kernel rather than report on it:
 * netfilter (nf_tables, conntrack) and IPsec (xfrm). The sandbox's root
 * holds CAP_NET_ADMIN over its own network namespace, which is all these
 * ask for, and a desktop configures neither. */
static const int refused_netlink_protocols[] = { NETLINK_NETFILTER, NETLINK_XFRM };

/* The socket options at IPPROTO_IP from IPT_BASE_CTL (64) up belong to
 * netfilter's legacy tables (iptables, arptables, ebtables, IPVS) and to
 * multicast routing; ordinary IP options end below it. For IPv6 the two
 * table setters, IP6T_SO_SET_REPLACE and IP6T_SO_SET_ADD_COUNTERS: IPv6's
 * own options continue above them. */
#define NETFILTER_SOCKOPT_BASE 64

/* personality(2) values that change nothing risky, as Docker's profile
 * has them: PER_LINUX, PER_LINUX32 and UNAME26 (alone or together), and
 * 0xffffffff, which only asks. The others would turn off address space
 * randomisation (ADDR_NO_RANDOMIZE), make data executable
 * (READ_IMPLIES_EXEC) or map page zero (MMAP_PAGE_ZERO). */
#define HARMLESS_PERSONALITY_BITS ((uint32_t)(PER_LINUX32 | UNAME26))

/* Adds one rule refusing call when all of args hold; what names the rule
 * in the error. */
static bool refuse_when(scmp_filter_ctx ctx, int call, unsigned count,
			const struct scmp_arg_cmp *args, const char *what, struct error *err)
{
	int rc = seccomp_rule_add_array(ctx, REFUSED, call, count, args);
	if (rc < 0)
		return error_set(err, -rc, "cannot build the system call filter: the rule for %s",
				 what);
	return true;
}

/* A comparison of the low 32 bits of an int argument only: the kernel
 * ignores the upper half of an int, so a rule must too, or a value with
 * garbage there would slip past it. */
/* One comparison of argument arg, all four fields given (libseccomp's
 * SCMP_A0_64() leaves the second value to the compiler, which clang
 * rightly warns of). */
static struct scmp_arg_cmp compare(unsigned arg, enum scmp_compare op, uint64_t a, uint64_t b)
{
	return (struct scmp_arg_cmp){ arg, op, a, b };
}

static struct scmp_arg_cmp int_equals(unsigned arg, uint32_t value)
{
	return (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ, 0xffffffffu, value };
}

static bool refuse_calls(scmp_filter_ctx ctx, struct error *err)
{
	for (size_t i = 0; i < sizeof(refused_calls) / sizeof(refused_calls[0]); i++) {
		/* A call this architecture's table does not have resolves to a
		 * negative pseudo-number: nothing to refuse. */
		int call = seccomp_syscall_resolve_name(refused_calls[i]);
		if (call >= 0 && !refuse_when(ctx, call, 0, NULL, refused_calls[i], err))
			return false;
	}
	return true;
}

static bool family_allowed(int family)
{
	for (size_t i = 0; i < sizeof(allowed_families) / sizeof(allowed_families[0]); i++)
		if (allowed_families[i] == family)
			return true;
	return false;
}

/* libseccomp compares an argument once per rule, so "none but these
 * families" is one rule per refused number below the highest allowed one
 * and one for everything above it. The comparisons are of all 64 bits: an
 * int with anything in its upper half is above them and refused. */
static bool refuse_families(scmp_filter_ctx ctx, int call, const char *what, struct error *err)
{
	int highest = 0;
	for (size_t i = 0; i < sizeof(allowed_families) / sizeof(allowed_families[0]); i++)
		if (allowed_families[i] > highest)
			highest = allowed_families[i];
	for (int family = AF_UNSPEC + 1; family < highest; family++) {
		struct scmp_arg_cmp is_family = compare(0, SCMP_CMP_EQ, (uint64_t)family, 0);
		if (!family_allowed(family) && !refuse_when(ctx, call, 1, &is_family, what, err))
			return false;
	}
	struct scmp_arg_cmp above = compare(0, SCMP_CMP_GT, (uint64_t)highest, 0);
	return refuse_when(ctx, call, 1, &above, what, err);
}

static bool refuse_socket_families(scmp_filter_ctx ctx, struct error *err)
{
	return refuse_families(ctx, SCMP_SYS(socket), "socket families", err) &&
	       refuse_families(ctx, SCMP_SYS(socketpair), "socketpair families", err);
}

/* Raw IP sockets, for IPv4 and IPv6, and IPv4's obsolete SOCK_PACKET,
 * which the kernel turns into a packet socket. The type's low four bits
 * are the type; the rest are SOCK_NONBLOCK and SOCK_CLOEXEC. */
static bool refuse_raw_sockets(scmp_filter_ctx ctx, struct error *err)
{
	const struct {
		int family, type;
	} refused[] = {
		{ AF_INET, SOCK_RAW },
		{ AF_INET6, SOCK_RAW },
		{ AF_INET, SOCK_PACKET },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct scmp_arg_cmp args[] = {
			compare(0, SCMP_CMP_EQ, (uint64_t)refused[i].family, 0),
			compare(1, SCMP_CMP_MASKED_EQ, 0xf, (uint64_t)refused[i].type),
		};
		if (!refuse_when(ctx, SCMP_SYS(socket), 2, args, "raw sockets", err))
			return false;
	}
	return true;
}

static bool refuse_netlink_protocols(scmp_filter_ctx ctx, struct error *err)
{
	for (size_t i = 0;
	     i < sizeof(refused_netlink_protocols) / sizeof(refused_netlink_protocols[0]); i++) {
		struct scmp_arg_cmp args[] = {
			compare(0, SCMP_CMP_EQ, AF_NETLINK, 0),
			int_equals(2, (uint32_t)refused_netlink_protocols[i]),
		};
		if (!refuse_when(ctx, SCMP_SYS(socket), 2, args, "netlink protocols", err))
			return false;
	}
	return true;
}

static bool refuse_netfilter_tables(scmp_filter_ctx ctx, struct error *err)
{
	struct scmp_arg_cmp ipv4[] = {
		int_equals(1, IPPROTO_IP),
		compare(2, SCMP_CMP_GE, NETFILTER_SOCKOPT_BASE, 0),
	};
	if (!refuse_when(ctx, SCMP_SYS(setsockopt), 2, ipv4, "netfilter's socket options", err))
		return false;
	for (uint32_t option = NETFILTER_SOCKOPT_BASE; option < NETFILTER_SOCKOPT_BASE + 2;
	     option++) {
		struct scmp_arg_cmp ipv6[] = { int_equals(1, IPPROTO_IPV6), int_equals(2, option) };
		if (!refuse_when(ctx, SCMP_SYS(setsockopt), 2, ipv6, "netfilter's socket options",
				 err))
			return false;
	}
	return true;
}

/* Refuses personality(2) values with bit `set` set and bit `clear` clear. */
static bool refuse_personality_bits(scmp_filter_ctx ctx, int set, int clear, struct error *err)
{
	uint64_t set_mask = (uint64_t)1 << set, clear_mask = (uint64_t)1 << clear;
	struct scmp_arg_cmp bits = compare(0, SCMP_CMP_MASKED_EQ, set_mask | clear_mask, set_mask);
	return refuse_when(ctx, SCMP_SYS(personality), 1, &bits, "personality", err);
}

/* The kernel reads personality's argument as 32 bits; refused is every
 * value with a bit outside HARMLESS_PERSONALITY_BITS set, other than all
 * ones. One comparison per rule means rules of the form "bit a set, bit b
 * clear", and 32 of them cover exactly that set: around the ring of the 30
 * other bits, a value with some of them set and some clear has a set one
 * right after a clear one; a value with all 30 set, not all ones, has a
 * harmless bit clear. */
static bool refuse_personalities(scmp_filter_ctx ctx, struct error *err)
{
	int others[32], count = 0;
	for (int bit = 0; bit < 32; bit++)
		if (!(HARMLESS_PERSONALITY_BITS & (1u << bit)))
			others[count++] = bit;
	for (int i = 0; i < count; i++)
		if (!refuse_personality_bits(ctx, others[i], others[(i + count - 1) % count], err))
			return false;
	for (int bit = 0; bit < 32; bit++)
		if ((HARMLESS_PERSONALITY_BITS & (1u << bit)) &&
		    !refuse_personality_bits(ctx, others[0], bit, err))
			return false;
	return true;
}

static bool add_rules(scmp_filter_ctx ctx, struct error *err)
{
	/* Killed, not refused: a 32-bit program whose every call failed
	 * could not even exit. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		return error_set(err, -rc,
				 "cannot build the system call filter: the action "
				 "for other architectures");
	return refuse_calls(ctx, err) && refuse_socket_families(ctx, err) &&
	       refuse_raw_sockets(ctx, err) && refuse_netlink_protocols(ctx, err) &&
	       refuse_netfilter_tables(ctx, err) && refuse_personalities(ctx, err);
}

static struct {
	pthread_once_t once;
	unsigned char *program; /* NULL when building failed */
	size_t size;
	struct error error;
} filter = { .once = PTHREAD_ONCE_INIT };

/* Exports ctx's BPF into memory: libseccomp 2.5 writes it to a descriptor
 * only. */
static bool export_program(scmp_filter_ctx ctx, struct error *err)
{
	int fd = memfd_create("lizard-seccomp-build", MFD_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "cannot build the system call filter: memfd_create");
	int rc = seccomp_export_bpf(ctx, fd);
	struct stat st;
	bool ok = false;
	if (rc < 0)
		error_set(err, -rc, "cannot build the system call filter: seccomp_export_bpf");
	else if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size % 8 != 0)
		error_set(err, 0,
			  "cannot build the system call filter: libseccomp wrote %lld "
			  "bytes, not a whole BPF program",
			  (long long)st.st_size);
	else if (!(filter.program = malloc((size_t)st.st_size)))
		error_set(err, 0, "cannot build the system call filter: out of memory");
	else if (pread(fd, filter.program, (size_t)st.st_size, 0) != (ssize_t)st.st_size)
		error_set(err, errno, "cannot build the system call filter: reading it back");
	else
		ok = true;
	close(fd);
	if (ok) {
		filter.size = (size_t)st.st_size;
	} else {
		free(filter.program);
		filter.program = NULL;
	}
	return ok;
}

static void build_filter(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		error_set(&filter.error, 0,
			  "cannot build the system call filter: seccomp_init "
			  "failed (out of memory)");
		return;
	}
	if (add_rules(ctx, &filter.error))
		export_program(ctx, &filter.error);
	seccomp_release(ctx);
}

int sandbox_seccomp_filter_fd(struct error *err)
{
	pthread_once(&filter.once, build_filter);
	if (!filter.program) {
		if (err)
			*err = filter.error;
		return -1;
	}
	int fd = memfd_create("lizard-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		error_set(err, errno, "cannot hand over the system call filter: memfd_create");
		return -1;
	}
	if (write(fd, filter.program, filter.size) != (ssize_t)filter.size ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		error_set(err, errno, "cannot hand over the system call filter: writing %zu bytes",
			  filter.size);
		close(fd);
		return -1;
	}
	return fd;
}
