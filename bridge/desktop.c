#include "desktop.h"

#include "process.h"
#include "../util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LAUNCHED 32
#define XVNC_START_TIMEOUT_MS 15000
#define WM_START_TIMEOUT_MS 10000

struct bridge_desktop {
	char dir[128];        /* private, 0700: socket, cookie, HOME, TMPDIR, logs */
	char socket_path[160];
	char xauthority[160];
	char home[160];
	char tmp[160];
	char log_path[160];
	int display;
	char *env[12];        /* the environment every process here gets */
	struct bridge_process xvnc;
	struct bridge_process window_manager;
	pthread_mutex_t lock; /* guards launched and browser */
	struct bridge_process launched[MAX_LAUNCHED];
	struct bridge_process browser;
	char browser_profile[200];
};

static bool write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	bool ok = write(fd, data, len) == (ssize_t)len;
	return close(fd) == 0 && ok;
}

/* An Xauthority entry with family FamilyWild and an empty display number
 * matches whichever display Xvnc ends up on, so the cookie can be written
 * before the display is known. */
static bool write_xauthority(const char *path)
{
	unsigned char cookie[16];
	if (getrandom(cookie, sizeof(cookie), 0) != (ssize_t)sizeof(cookie))
		return false;
	static const char protocol[] = "MIT-MAGIC-COOKIE-1";
	unsigned char entry[2 + 2 + 2 + 2 + sizeof(protocol) - 1 + 2 + sizeof(cookie)];
	unsigned char *p = entry;
	uint16_t family = htons(0xffff), zero = 0, name_len = htons(sizeof(protocol) - 1),
		 data_len = htons(sizeof(cookie));
	memcpy(p, &family, 2), p += 2;
	memcpy(p, &zero, 2), p += 2; /* address */
	memcpy(p, &zero, 2), p += 2; /* display number */
	memcpy(p, &name_len, 2), p += 2;
	memcpy(p, protocol, sizeof(protocol) - 1), p += sizeof(protocol) - 1;
	memcpy(p, &data_len, 2), p += 2;
	memcpy(p, cookie, sizeof(cookie));
	bool ok = write_file(path, entry, sizeof(entry));
	memset(cookie, 0, sizeof(cookie));
	memset(entry, 0, sizeof(entry));
	return ok;
}

static char *env_entry(const char *name, const char *value)
{
	char *entry;
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return NULL;
	return entry;
}

/* A fresh environment: nothing of the daemon's (API keys, VNC passwords)
 * reaches the desktop. */
static bool build_environment(struct bridge_desktop *d)
{
	char display[16];
	snprintf(display, sizeof(display), ":%d", d->display);
	const char *path = getenv("PATH");
	int i = 0;
	d->env[i++] = env_entry("PATH", path ? path : "/usr/local/bin:/usr/bin:/bin");
	d->env[i++] = env_entry("HOME", d->home);
	d->env[i++] = env_entry("TMPDIR", d->tmp);
	d->env[i++] = env_entry("XDG_RUNTIME_DIR", d->tmp);
	d->env[i++] = env_entry("DISPLAY", display);
	d->env[i++] = env_entry("XAUTHORITY", d->xauthority);
	d->env[i++] = env_entry("LANG", "C.UTF-8");
	d->env[i++] = env_entry("LC_ALL", "C.UTF-8");
	d->env[i++] = env_entry("USER", getenv("USER") ? getenv("USER") : "root");
	d->env[i] = NULL;
	for (int k = 0; k < i; k++)
		if (!d->env[k])
			return false;
	return true;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	remove(path);
	return 0;
}

/* Reads the display number Xvnc writes to -displayfd once it accepts
 * connections. Returns -1 on timeout or early exit. */
static int read_display_number(struct bridge_desktop *d, int fd)
{
	char buf[16];
	size_t used = 0;
	int64_t waited = 0;
	while (waited < XVNC_START_TIMEOUT_MS) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n = poll(&pfd, 1, 100);
		waited += 100;
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			ssize_t got = read(fd, buf + used, sizeof(buf) - 1 - used);
			if (got <= 0)
				return -1; /* Xvnc exited before it was ready */
			used += (size_t)got;
			buf[used] = '\0';
			if (strchr(buf, '\n') || used == sizeof(buf) - 1)
				return atoi(buf);
		}
		if (!bridge_process_running(&d->xvnc))
			return -1;
	}
	return -1;
}

static void describe_log_tail(const char *path, char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[256], last[256] = "";
	while (fgets(line, sizeof(line), f))
		if (strlen(line) > 1)
			snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	last[strcspn(last, "\n")] = '\0';
	snprintf(out, size, "%s", last);
}

static bool start_xvnc(struct bridge_desktop *d, const struct bridge_desktop_options *o,
		       char *err, size_t err_size)
{
	int pipe_fds[2];
	if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
		snprintf(err, err_size, "cannot create a pipe: %s", strerror(errno));
		return false;
	}
	char geometry[32];
	snprintf(geometry, sizeof(geometry), "%dx%d", o->width, o->height);
	char *argv[] = {
		"Xvnc", "-displayfd", "3", "-geometry", geometry, "-depth", "24",
		"-rfbport", "-1", "-rfbunixpath", d->socket_path, "-rfbunixmode", "0600",
		"-SecurityTypes", "None", "-auth", d->xauthority, "-nolisten", "tcp",
		"-AlwaysShared", "-AcceptSetDesktopSize=0", "-desktop", "lizard", NULL,
	};
	/* Xvnc needs no DISPLAY; the environment is otherwise the desktop's. */
	struct bridge_spawn spawn = {
		.name = "Xvnc", .argv = argv, .envp = d->env, .cwd = d->home,
		.log_path = d->log_path, .pass_fd = pipe_fds[1],
	};
	bool ok = bridge_process_spawn(&d->xvnc, &spawn, err, err_size);
	close(pipe_fds[1]);
	if (!ok) {
		close(pipe_fds[0]);
		return false;
	}
	d->display = read_display_number(d, pipe_fds[0]);
	close(pipe_fds[0]);
	if (d->display < 0) {
		char tail[256];
		describe_log_tail(d->log_path, tail, sizeof(tail));
		snprintf(err, err_size,
			 "Xvnc did not start (is tigervnc-standalone-server installed?)%s%s",
			 tail[0] ? ": " : "", tail);
		return false;
	}
	/* The display is up; the RFB socket comes with it. */
	for (int i = 0; i < 100 && access(d->socket_path, F_OK) != 0; i++) {
		struct timespec tick = { 0, 20 * 1000000L };
		nanosleep(&tick, NULL);
	}
	if (access(d->socket_path, F_OK) != 0) {
		snprintf(err, err_size, "Xvnc started on :%d but never opened %s", d->display,
			 d->socket_path);
		return false;
	}
	return true;
}

/* openbox, and the wait until it manages the screen: windows mapped before
 * that can end up without focus, so typing into them goes nowhere. openbox
 * runs its --startup command once it is up. */
static bool start_window_manager(struct bridge_desktop *d, char *err, size_t err_size)
{
	char ready[200], startup[260];
	snprintf(ready, sizeof(ready), "%s/window-manager-ready", d->dir);
	snprintf(startup, sizeof(startup), "touch %s", ready);
	char *argv[] = { "openbox", "--sm-disable", "--startup", startup, NULL };
	struct bridge_spawn spawn = {
		.name = "openbox", .argv = argv, .envp = d->env, .cwd = d->home,
		.log_path = d->log_path, .pass_fd = -1,
	};
	if (!bridge_process_spawn(&d->window_manager, &spawn, err, err_size))
		return false;
	for (int waited = 0; waited < WM_START_TIMEOUT_MS; waited += 20) {
		if (access(ready, F_OK) == 0)
			return true;
		if (!bridge_process_running(&d->window_manager))
			break;
		struct timespec tick = { 0, 20 * 1000000L };
		nanosleep(&tick, NULL);
	}
	char tail[256];
	describe_log_tail(d->log_path, tail, sizeof(tail));
	snprintf(err, err_size, "openbox did not start (is it installed?)%s%s", tail[0] ? ": " : "",
		 tail);
	return false;
}

struct bridge_desktop *bridge_desktop_start(const struct bridge_desktop_options *options,
					    char *err, size_t err_size)
{
	struct bridge_desktop *d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	const char *base = getenv("TMPDIR");
	snprintf(d->dir, sizeof(d->dir), "%s/lizard-desktop-XXXXXX",
		 base && *base && strlen(base) < 64 ? base : "/tmp");
	if (!mkdtemp(d->dir)) {
		snprintf(err, err_size, "cannot create a private directory under %s: %s",
			 base ? base : "/tmp", strerror(errno));
		d->dir[0] = '\0';
		goto fail;
	}
	snprintf(d->socket_path, sizeof(d->socket_path), "%s/vnc.sock", d->dir);
	snprintf(d->xauthority, sizeof(d->xauthority), "%s/Xauthority", d->dir);
	snprintf(d->home, sizeof(d->home), "%s/home", d->dir);
	snprintf(d->tmp, sizeof(d->tmp), "%s/tmp", d->dir);
	snprintf(d->log_path, sizeof(d->log_path), "%s/desktop.log", d->dir);
	snprintf(d->browser_profile, sizeof(d->browser_profile), "%s/browser", d->home);
	if (mkdir(d->home, 0700) != 0 || mkdir(d->tmp, 0700) != 0 ||
	    !write_xauthority(d->xauthority)) {
		snprintf(err, err_size, "cannot prepare %s: %s", d->dir, strerror(errno));
		goto fail;
	}
	d->display = 0;
	if (!build_environment(d)) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	if (!start_xvnc(d, options, err, err_size))
		goto fail;
	/* The display number is known only now. */
	for (int i = 0; d->env[i]; i++) {
		if (strncmp(d->env[i], "DISPLAY=", 8) == 0) {
			free(d->env[i]);
			char display[16];
			snprintf(display, sizeof(display), ":%d", d->display);
			if (!(d->env[i] = env_entry("DISPLAY", display))) {
				snprintf(err, err_size, "out of memory");
				goto fail;
			}
		}
	}

	if (options->window_manager && !start_window_manager(d, err, err_size))
		goto fail;
	log_info("local desktop on display :%d (%dx%d), files in %s", d->display, options->width,
		 options->height, d->dir);
	return d;

fail:
	bridge_desktop_destroy(d);
	return NULL;
}

void bridge_desktop_destroy(struct bridge_desktop *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	for (int i = 0; i < MAX_LAUNCHED; i++)
		bridge_process_stop(&d->launched[i], 500);
	bridge_process_stop(&d->browser, 1000);
	pthread_mutex_unlock(&d->lock);
	bridge_process_stop(&d->window_manager, 500);
	bridge_process_stop(&d->xvnc, 2000);
	if (d->dir[0])
		nftw(d->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	for (int i = 0; d->env[i]; i++)
		free(d->env[i]);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

const char *bridge_desktop_vnc_socket(const struct bridge_desktop *d)
{
	return d->socket_path;
}

int bridge_desktop_display(const struct bridge_desktop *d)
{
	return d->display;
}

const char *bridge_desktop_xauthority(const struct bridge_desktop *d)
{
	return d->xauthority;
}

bool bridge_desktop_running(struct bridge_desktop *d)
{
	return bridge_process_running(&d->xvnc);
}

bool bridge_desktop_launch(struct bridge_desktop *d, const char *name, char *const *argv,
			   char *err, size_t err_size)
{
	pthread_mutex_lock(&d->lock);
	int slot = -1;
	for (int i = 0; i < MAX_LAUNCHED && slot < 0; i++)
		if (!bridge_process_group_alive(&d->launched[i]))
			slot = i;
	if (slot < 0) {
		pthread_mutex_unlock(&d->lock);
		snprintf(err, err_size, "this desktop already runs %d launched programs",
			 MAX_LAUNCHED);
		return false;
	}
	struct bridge_spawn spawn = {
		.name = name, .argv = argv, .envp = d->env, .cwd = d->home,
		.log_path = d->log_path, .pass_fd = -1,
	};
	bool ok = bridge_process_spawn(&d->launched[slot], &spawn, err, err_size);
	pthread_mutex_unlock(&d->lock);
	return ok;
}

bool bridge_desktop_run(struct bridge_desktop *d, const char *name, char *const *argv,
			char **output, size_t max_output, int timeout_ms, char *err,
			size_t err_size)
{
	struct bridge_spawn spawn = {
		.name = name, .argv = argv, .envp = d->env, .cwd = d->home,
		.log_path = d->log_path, .pass_fd = -1,
	};
	return bridge_process_run(&spawn, output, max_output, timeout_ms, err, err_size);
}

const char *bridge_desktop_tmp_dir(const struct bridge_desktop *d)
{
	return d->tmp;
}

bool bridge_desktop_open_url(struct bridge_desktop *d, const char *url, bool *started,
			     char *err, size_t err_size)
{
	const char *browser = getenv("LIZARD_BROWSER");
	char profile[256];
	snprintf(profile, sizeof(profile), "--user-data-dir=%s", d->browser_profile);
	/* Chromium refuses to run as root without --no-sandbox; --test-type
	 * keeps it from covering the page with a warning about that flag. The
	 * rest keeps a fresh profile quiet on a closed network. */
	char *argv[] = {
		(char *)(browser && *browser ? browser : "chromium"),
		profile,
		geteuid() == 0 ? "--no-sandbox" : "--no-default-browser-check",
		"--test-type",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-features=Translate,MediaRouter",
		"--password-store=basic",
		"--start-maximized",
		(char *)url,
		NULL,
	};
	struct bridge_spawn spawn = {
		.name = "chromium", .argv = argv, .envp = d->env, .cwd = d->home,
		.log_path = d->log_path, .pass_fd = -1,
	};
	pthread_mutex_lock(&d->lock);
	*started = !bridge_process_running(&d->browser);
	pthread_mutex_unlock(&d->lock);
	if (*started) {
		pthread_mutex_lock(&d->lock);
		bool ok = bridge_process_spawn(&d->browser, &spawn, err, err_size);
		pthread_mutex_unlock(&d->lock);
		return ok;
	}
	/* A second invocation with the same profile hands the URL to the
	 * running browser as a new tab and exits; should the browser be
	 * closing just then, it becomes the browser itself. Either way it is
	 * not waited for. */
	return bridge_desktop_launch(d, "chromium", argv, err, err_size);
}
