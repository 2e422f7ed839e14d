/* The local sandbox: a private set of Linux namespaces (user, PID, mount,
 * IPC, UTS and network) made with bubblewrap, in which every program of a
 * session runs; with a network, slirp4netns connects it to the outside
 * without the host's loopback (network.h). Inside it the host's system directories are
 * read-only; HOME, /tmp and /workspace are its own; nothing else of the
 * host is there. Its programs run as an unprivileged user, mapped to a
 * host uid of the sandbox's own when the daemon is root. They all start
 * through the sandbox's init (init.c), so they all end with it: when the
 * sandbox is destroyed, when the daemon exits, or when the daemon is
 * killed, including programs that called setsid or forked twice.
 *
 * This is isolation on a shared kernel, not a virtual machine: a kernel
 * bug reachable from inside is a way out.
 *
 * Threads: any thread may start, wait for and kill programs concurrently;
 * the first sandbox_create must come from a thread that lives as long as
 * the sandbox (the kernel ties the death signal to the creating thread). */
#ifndef LIZARD_SANDBOX_H
#define LIZARD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

struct sandbox;
struct sandbox_cgroup;
struct sandbox_uid_range;

#define SANDBOX_FILE_MAX_BYTES (16 * 1024 * 1024)
#define SANDBOX_LIST_MAX_ENTRIES 10000

/* Paths inside the sandbox. */
#define SANDBOX_HOME "/home/user"
#define SANDBOX_WORKSPACE "/workspace"
#define SANDBOX_RUN_DIR "/run/lizard"

struct sandbox_options {
	bool network;            /* true: out through slirp4netns; false: loopback only */
	const char *const *envs; /* NAME=value for every program; NULL-terminated or NULL */
	/* Every process of the sandbox runs in this cgroup (bwrap joins it
	 * between fork and exec, so nothing escapes it); NULL: none. */
	struct sandbox_cgroup *cgroup;
	/* A host directory (a volume) bound read-write at /workspace instead
	 * of a fresh one; its files are given to the sandbox's host uid. */
	const char *workspace_dir;
	/* A volume's disk image (disk.h), mounted at /workspace instead; its
	 * files are given to the sandbox's host uid. At most one of the two. */
	const char *workspace_image;
	/* HOME, /tmp, /workspace and the run directory on a disk of this size
	 * (disk.h; the daemon must be able to make disks); 0: on the host's
	 * filesystem, unbounded. */
	uint64_t disk_bytes;
	/* Where a root daemon takes the sandbox's host uid from (uid.h);
	 * NULL: SANDBOX_UID_RANGE_DEFAULT. */
	const struct sandbox_uid_range *uid_range;
};

/* Removes the private directories of daemons that died without cleaning
 * up (killed with SIGKILL, where no janitor got to it). Call once at
 * start. How many it removed; err holds the first that could not be. */
unsigned sandbox_remove_stale(struct error *err);
/* Forks the janitor, which removes this daemon's private directories, and
 * unmounts what is mounted in them, once the daemon has died, however it
 * died. Call once at start, before any thread (stale.c). */
bool sandbox_janitor_start(struct error *err);

/* Failures fill err (error.h) with a sentence that says what failed and,
 * where it helps, what would work.
 *
 * Says what is missing when the sandbox cannot be made (no bwrap, user
 * namespaces refused); it never falls back to running unsandboxed. */
struct sandbox *sandbox_create(const struct sandbox_options *options, struct error *err);
/* Kills every process in the sandbox and removes its private directory,
 * doing all of it whatever fails; false with the first failure in err
 * (may be NULL). NULL is fine. */
bool sandbox_destroy(struct sandbox *sandbox, struct error *err);
/* Kills every process in the sandbox now, from any thread, while others
 * may still use it: what they wait on ends, and what they start fails.
 * The rest goes with sandbox_destroy. NULL is fine. */
void sandbox_kill(struct sandbox *sandbox);
/* sandbox_kill, then waits for the sandbox's processes and its network
 * helper to be gone (2 s at most, then they are killed harder): for a
 * sandbox that failed and stays known a while. Not with sandbox_destroy
 * at the same time. NULL is fine. */
void sandbox_end(struct sandbox *sandbox);
/* A descriptor that polls POLLHUP once the sandbox's init is gone. */
int sandbox_watch_fd(const struct sandbox *sandbox);

/* Where HOME, the run directory and /workspace are in the programs' view
 * (the fixed paths above when isolated). */
const char *sandbox_inside_home(const struct sandbox *sandbox);
const char *sandbox_inside_run_dir(const struct sandbox *sandbox);
/* Adds or replaces NAME=value for programs started from now on. */
bool sandbox_set_env(struct sandbox *sandbox, const char *name, const char *value);

/* The host directory that appears inside as SANDBOX_RUN_DIR (sockets, the
 * X cookie), for messages and for people looking from the host. The
 * sandbox's user owns it and may put links, FIFOs or other sockets there
 * at any time, so the daemon never opens a path in it: the calls below
 * work on the descriptor taken when it was made and follow no link. */
const char *sandbox_run_dir(const struct sandbox *sandbox);
/* Creates name there (0600, given to the sandbox's user) for the daemon to
 * write; an existing name is an error. The descriptor, or -1 with err. */
int sandbox_run_create_file(struct sandbox *sandbox, const char *name, struct error *err);
/* Whether name is there and of type (S_IFSOCK, S_IFREG, ...), itself and
 * not through a link. */
bool sandbox_run_has(struct sandbox *sandbox, const char *name, mode_t type);
/* An O_PATH descriptor of the socket name, checked to be a socket owned by
 * the sandbox's user (what a program of the sandbox made); -1 with err
 * otherwise. Connect through "/proc/self/fd/N": it names this inode, so
 * whatever is renamed or linked there later changes nothing. */
int sandbox_run_open_socket(struct sandbox *sandbox, const char *name, struct error *err);
/* Whether programs are isolated (false only in the benchmark's
 * comparison mode, LIZARD_BENCH_UNSANDBOXED=1). */
bool sandbox_isolated(const struct sandbox *sandbox);
bool sandbox_has_network(const struct sandbox *sandbox);
/* The last line programs wrote to the sandbox's log (their default
 * stdout and stderr), for error messages. */
void sandbox_last_log_line(const struct sandbox *sandbox, char *out, size_t size);
/* Bytes in use and in all on the sandbox's disk; false without one. */
bool sandbox_disk_use(const struct sandbox *sandbox, uint64_t *used, uint64_t *total);
/* A sentence on what is isolated and what is not. */
const char *sandbox_describe_isolation(const struct sandbox *sandbox);

/* Programs. */
enum sandbox_user { SANDBOX_AS_USER, SANDBOX_AS_ROOT };

struct sandbox_command {
	const char *name;              /* for logs and messages */
	const char *const *argv;       /* argv[0] looked up in PATH inside */
	const char *const *envs;       /* NAME=value over the sandbox's; may be NULL */
	const char *cwd;               /* inside; NULL: SANDBOX_HOME */
	enum sandbox_user user;
	/* Killing it, or its end, kills everything it started (in the
	 * session's PID namespace, so its pids are those /proc shows). */
	bool own_process_tree;
	int stdin_fd, stdout_fd, stderr_fd; /* -1: /dev/null in, the sandbox log out */
	int fd3;                       /* becomes fd 3, or -1 */
	bool builtin;                  /* argv is a file operation (files_inside.h) */
	bool oom_last;                 /* the OOM killer takes it after every other */
};

struct sandbox_process {
	int channel; /* -1 when not running or released */
	int pid;     /* inside the sandbox */
	bool exited;
	int status;  /* wait status once exited */
};

/* Starts a program that is stopped with sandbox_process_stop (or when the
 * sandbox ends). */
bool sandbox_spawn(struct sandbox *sandbox, const struct sandbox_command *command,
		   struct sandbox_process *process, struct error *err);
/* Starts a program that runs until it ends or the sandbox does. */
bool sandbox_launch(struct sandbox *sandbox, const struct sandbox_command *command, struct error *err);

/* How a launched program did in its first moments. */
struct sandbox_launched {
	int pid;        /* inside the sandbox */
	bool exited;    /* within the watch: then status and output are set */
	int status;     /* wait status */
	char output[512]; /* the end of what it wrote to the sandbox log meanwhile */
};
/* sandbox_launch, then watches the program for watch_ms: a program that
 * cannot run usually says so and exits at once. Its stdout and stderr
 * must go to the sandbox log (-1). */
bool sandbox_launch_watched(struct sandbox *sandbox, const struct sandbox_command *command,
			    int watch_ms, struct sandbox_launched *out, struct error *err);
/* True while it runs; notices an exit without blocking. */
bool sandbox_process_running(struct sandbox_process *process);
/* Waits up to timeout_ms for it to end; true when it has. */
bool sandbox_process_wait(struct sandbox_process *process, int timeout_ms);
/* Sends sig to it. */
void sandbox_process_signal(struct sandbox_process *process, int sig);
/* Kills it (and, with its own process tree, all it started), waits up to
 * a second for the init to confirm, and lets go of it. */
void sandbox_process_stop(struct sandbox_process *process);

/* Output of a stream, keeping the last max bytes of it. */
struct sandbox_output {
	char *data;
	size_t len;
	uint64_t total; /* bytes the program wrote */
};

enum sandbox_stream { SANDBOX_STDOUT = 1, SANDBOX_STDERR = 2 };

struct sandbox_run {
	struct sandbox_command command; /* its fds are ignored */
	const void *input;              /* stdin, then closed; may be NULL */
	size_t input_len;
	int timeout_ms;
	size_t max_output; /* per stream */
	/* Called as output arrives, and polled for a stop; both may be NULL. */
	void (*on_output)(void *context, enum sandbox_stream stream, const char *data, size_t len);
	bool (*should_stop)(void *context);
	void *context;
};

struct sandbox_run_result {
	struct sandbox_output out, err;
	bool exited;       /* else killed by signal */
	int exit_code;
	int signal;
	bool timed_out;
	bool stopped;      /* should_stop said so */
	int64_t duration_ms;
};

/* Runs a command to its end (or its timeout, after which it is killed with
 * everything it started). False with a message only when it could not run;
 * a non-zero exit is a result. */
bool sandbox_run(struct sandbox *sandbox, const struct sandbox_run *run,
		 struct sandbox_run_result *result, struct error *err);
void sandbox_run_result_finish(struct sandbox_run_result *result);

/* Files, in the sandbox's view, as user. */
struct sandbox_file_data {
	char *data;
	size_t len;
	uint64_t size; /* of the whole file; unsized: offset + len */
	/* false for a file the kernel says is empty though it holds data
	 * (most of /proc and /sys): it is read to its end or to length, and
	 * more says whether it went on beyond. */
	bool sized;
	bool more;
};

bool sandbox_read_file(struct sandbox *sandbox, enum sandbox_user user, const char *path,
		       uint64_t offset, uint64_t length, struct sandbox_file_data *out, struct error *err);
bool sandbox_write_file(struct sandbox *sandbox, enum sandbox_user user, const char *path,
			const void *data, size_t len, unsigned mode, struct error *err);

struct sandbox_dir_entry {
	char type; /* f d l p s c b ? */
	uint64_t size;
	int64_t mtime;
	char *name;
};

/* Entries in readdir order; free with sandbox_free_entries. */
bool sandbox_list_files(struct sandbox *sandbox, enum sandbox_user user, const char *path,
			struct sandbox_dir_entry **entries, size_t *count, bool *truncated,
			struct error *err);
void sandbox_free_entries(struct sandbox_dir_entry *entries, size_t count);

/* The hidden `lizard-bridge sandbox-init` subcommand (init.c). */
int sandbox_init_main(int argc, char **argv);

#endif
