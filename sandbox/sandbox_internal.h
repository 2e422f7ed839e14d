/* Shared inside sandbox/; not part of its public surface. */
#ifndef LIZARD_SANDBOX_INTERNAL_H
#define LIZARD_SANDBOX_INTERNAL_H

#include "sandbox/sandbox.h"

#include "sandbox/network.h"

#include <pthread.h>
#include <sys/types.h>

struct sandbox {
	char dir[200];      /* private, on the host; the daemon's, 0711 */
	/* Descriptors of dir and of run_dir, taken when they were made: the
	 * sandbox's user owns run_dir and may put anything in it, so the
	 * daemon reaches what is there only through run_fd, never following a
	 * link (sandbox_run_*). -1 when not open. */
	int dir_fd, run_fd;
	/* With a disk (disk.h): it is mounted at disk_mount (dir/disk), held
	 * open by disk_fd, on loop device disk_loop, and holds run, home,
	 * workspace and tmp; without one they are in dir and /tmp is a tmpfs. */
	bool on_disk;
	char disk_mount[220];
	int disk_fd, disk_loop;
	char tmp_dir[240];
	char run_dir[240];  /* dir/run, SANDBOX_RUN_DIR inside */
	char x11_dir[260];  /* run_dir/.X11-unix, /tmp/.X11-unix inside */
	char home[240];     /* dir/home */
	char workspace[512]; /* dir/workspace, or the volume's directory */
	/* dir/volume: the volume bound there on the host while bwrap starts
	 * (its uid may not pass through the data directory's path); "" when
	 * not mounted. */
	char volume_mount[240];
	int volume_loop; /* a volume's image: its loop device, or -1 */
	char log_path[240];
	char inside_home[240], inside_run_dir[240], inside_workspace[512];
	struct sandbox_log *log; /* programs' default stdout and stderr */
	int log_fd;         /* its write end */
	struct sandbox_network net;
	bool has_dns;       /* the inside has nameservers it can reach */
	pid_t pid;          /* bwrap (or the init itself when not isolated); 0 once reaped */
	pid_t init_pid;     /* the init, on the host (isolated only; 0: not known) */
	int control;        /* to the init */
	pthread_mutex_t lock; /* sending on control; env */
	char **env;         /* NAME=value for every program, NULL-terminated */
	bool isolated, network;
	uid_t host_uid;     /* what the sandbox's root is on the host */
	bool uid_held;      /* host_uid is taken from the daemon's range (uid.h) */
	char description[1400];
};

struct sandbox_cgroup_join;
/* In a child between fork and exec (async-signal-safe; _exits on failure):
 * joins the cgroup (join may be NULL), becomes host uid, dies with the
 * daemon (its thread parent, which must still be there), and gets its own
 * process group and an empty signal mask. */
void sandbox_child_setup(const struct sandbox_cgroup_join *join, uid_t uid, pid_t parent);

/* Waits for a child to exit, killing it after timeout_ms. */
void sandbox_reap(pid_t pid, int timeout_ms);

/* Host side of the protocol (process.c). */
bool sandbox_send_request(struct sandbox *sandbox, const struct sandbox_command *command,
			  bool detached, int channel, struct error *err);

/* The parent of every daemon's directories for this host user, made if
 * need be and checked to be this user's (stale.c). */
bool sandbox_base_dir(char *out, size_t size, struct error *err);



#endif
