/* SPDX-License-Identifier: MIT */
#include "sandbox/desktop.h"

#include "sandbox/sandbox.h"
#include "sandbox/pool.h"
#include "sandbox/process.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XVNC_START_TIMEOUT_MS 15000
#define WM_START_TIMEOUT_MS 10000

struct sandbox_desktop {
	struct sandbox *sandbox;
	/* Xvnc's socket, opened by inode once it made it (-1 before), and the
	 * path that names that inode for connect(). */
	int socket_fd;
	char socket_path[32];
	char inside_socket[300]; /* in the sandbox */
	char inside_xauthority[300];
	int display;
	bool has_x_server;
	struct sandbox_process xvnc; /* channel -1 without one */
	struct sandbox_process window_manager;
	pthread_mutex_t lock; /* guards browser */
	struct sandbox_process browser;
};

/* An Xauthority entry with family FamilyWild and an empty display number
 * matches whichever display Xvnc ends up on, so the cookie can be written
 * before the display is known. */
static bool write_xauthority(struct sandbox *sandbox, struct error *err)
{
	unsigned char cookie[16];
	if (getrandom(cookie, sizeof(cookie), 0) != (ssize_t)sizeof(cookie))
		return error_set(err, errno, "cannot make an X cookie");
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
	int fd = sandbox_run_create_file(sandbox, "Xauthority", err);
	bool ok = fd >= 0 && write(fd, entry, sizeof(entry)) == (ssize_t)sizeof(entry);
	if (fd >= 0 && !ok)
		error_set(err, errno, "cannot write the X cookie");
	if (fd >= 0 && close(fd) != 0 && ok)
		ok = error_set(err, errno, "cannot write the X cookie");
	memset(cookie, 0, sizeof(cookie));
	memset(entry, 0, sizeof(entry));
	return ok;
}

static void sleep_ms(long ms)
{
	struct timespec tick = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&tick, NULL);
}

/* Reads the display number Xvnc writes to -displayfd once it accepts
 * connections. Returns -1 on timeout or early exit. */
static int read_display_number(struct sandbox_desktop *d, int fd)
{
	char buf[16];
	size_t used = 0;
	for (int waited = 0; waited < XVNC_START_TIMEOUT_MS; waited += 100) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n = poll(&pfd, 1, 100);
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
		if (!sandbox_process_running(&d->xvnc))
			return -1;
	}
	return -1;
}

static struct sandbox_command user_command(const char *name, const char *const *argv)
{
	return (struct sandbox_command){ .name = name,
					 .argv = argv,
					 .user = SANDBOX_AS_USER,
					 .stdin_fd = -1,
					 .stdout_fd = -1,
					 .stderr_fd = -1,
					 .fd3 = -1 };
}

static bool start_xvnc(struct sandbox_desktop *d, const struct sandbox_desktop_options *o,
		       struct error *err)
{
	int pipe_fds[2];
	if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
		error_set(err, errno, "cannot create a pipe");
		return false;
	}
	char geometry[32];
	snprintf(geometry, sizeof(geometry), "%dx%d", o->width, o->height);
	const char *argv[] = {
		"Xvnc",
		"-displayfd",
		"3",
		"-geometry",
		geometry,
		"-depth",
		"24",
		"-rfbport",
		"-1",
		"-rfbunixpath",
		d->inside_socket,
		"-rfbunixmode",
		"0600",
		"-SecurityTypes",
		"None",
		"-auth",
		d->inside_xauthority,
		"-nolisten",
		"tcp",
		"-AlwaysShared",
		"-AcceptSetDesktopSize=0",
		"-desktop",
		"lizard",
		/* Clipboard: text pasted by viewers up to 1 MiB (the default is
		 * 256 KiB, and more is silently dropped); what is copied
		 * (CLIPBOARD) goes out, not every selection (PRIMARY). */
		"-MaxCutText",
		"1048576",
		"-SendPrimary=0",
		NULL,
	};
	struct sandbox_command command = user_command("Xvnc", argv);
	command.fd3 = pipe_fds[1];
	command.oom_last = true;
	bool ok = sandbox_spawn(d->sandbox, &command, &d->xvnc, err);
	close(pipe_fds[1]);
	if (!ok) {
		close(pipe_fds[0]);
		return false;
	}
	d->display = read_display_number(d, pipe_fds[0]);
	close(pipe_fds[0]);
	if (d->display < 0) {
		char tail[256];
		sandbox_last_log_line(d->sandbox, tail, sizeof(tail));
		error_set(err, 0,
			  "Xvnc did not start (is tigervnc-standalone-server installed?)%s%s",
			  tail[0] ? ": " : "", tail);
		return false;
	}
	/* The display is up; the RFB socket comes with it. No other program
	 * runs yet, so what is there now is Xvnc's: it is held by inode from
	 * here on, whatever is put at its name later. */
	for (int i = 0; i < 100 && !sandbox_run_has(d->sandbox, "vnc.sock", S_IFSOCK); i++)
		sleep_ms(20);
	if (!sandbox_run_has(d->sandbox, "vnc.sock", S_IFSOCK)) {
		error_set(err, 0, "Xvnc started on :%d but never opened %s/vnc.sock", d->display,
			  sandbox_run_dir(d->sandbox));
		return false;
	}
	if ((d->socket_fd = sandbox_run_open_socket(d->sandbox, "vnc.sock", err)) < 0)
		return false;
	snprintf(d->socket_path, sizeof(d->socket_path), "/proc/self/fd/%d", d->socket_fd);
	return true;
}

/* openbox, and the wait until it manages the screen: windows mapped before
 * that can end up without focus, so typing into them goes nowhere. openbox
 * runs its --startup command once it is up. */
static bool start_window_manager(struct sandbox_desktop *d, struct error *err)
{
	char startup[320];
	snprintf(startup, sizeof(startup), "touch %s/window-manager-ready",
		 sandbox_inside_run_dir(d->sandbox));
	const char *argv[] = { "openbox", "--sm-disable", "--startup", startup, NULL };
	struct sandbox_command command = user_command("openbox", argv);
	command.oom_last = true;
	if (!sandbox_spawn(d->sandbox, &command, &d->window_manager, err))
		return false;
	for (int waited = 0; waited < WM_START_TIMEOUT_MS; waited += 20) {
		if (sandbox_run_has(d->sandbox, "window-manager-ready", S_IFREG))
			return true;
		if (!sandbox_process_running(&d->window_manager))
			break;
		sleep_ms(20);
	}
	char tail[256];
	sandbox_last_log_line(d->sandbox, tail, sizeof(tail));
	error_set(err, 0, "openbox did not start (is it installed?)%s%s", tail[0] ? ": " : "",
		  tail);
	return false;
}

struct sandbox_desktop *sandbox_desktop_start(const struct sandbox_desktop_options *o,
					      struct error *err)
{
	struct sandbox_desktop *d = calloc(1, sizeof(*d));
	if (!d) {
		error_set(err, 0, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->socket_fd = -1;
	d->xvnc.channel = d->window_manager.channel = d->browser.channel = -1;
	struct sandbox_options options = { .network = o->network,
					   .envs = o->envs,
					   .cgroup = o->cgroup,
					   .workspace_dir = o->workspace_dir,
					   .workspace_image = o->workspace_image,
					   .disk_bytes = o->disk_bytes,
					   .uid_range = o->uid_range,
					   .restore_dir = o->restore_dir };
	d->sandbox = sandbox_pool_take(&options);
	struct error failed;
	if (!d->sandbox && !(d->sandbox = sandbox_create(&options, &failed))) {
		/* Never refused for the uids a sandbox started ahead holds. */
		if (failed.code == EUSERS && sandbox_pool_give_back()) {
			d->sandbox = sandbox_create(&options, err);
			sandbox_pool_resume();
		} else if (err) {
			*err = failed;
		}
	}
	if (!d->sandbox)
		goto fail;
	d->has_x_server = !o->no_x_server;
	if (o->no_x_server)
		return d;
	const char *inside = sandbox_inside_run_dir(d->sandbox);
	snprintf(d->inside_socket, sizeof(d->inside_socket), "%s/vnc.sock", inside);
	snprintf(d->inside_xauthority, sizeof(d->inside_xauthority), "%s/Xauthority", inside);
	if (!write_xauthority(d->sandbox, err))
		goto fail;
	if (!sandbox_set_env(d->sandbox, "XAUTHORITY", d->inside_xauthority) ||
	    !start_xvnc(d, o, err))
		goto fail;
	char display[16];
	snprintf(display, sizeof(display), ":%d", d->display);
	if (!sandbox_set_env(d->sandbox, "DISPLAY", display)) {
		error_set(err, 0, "out of memory");
		goto fail;
	}
	if (o->window_manager && !start_window_manager(d, err))
		goto fail;
	return d;

fail:
	sandbox_desktop_destroy(d, NULL);
	return NULL;
}

bool sandbox_desktop_destroy(struct sandbox_desktop *d, struct error *err)
{
	if (!d)
		return true;
	/* Everything in the sandbox ends with it; the handles just let go. */
	bool ok = sandbox_destroy(d->sandbox, err);
	sandbox_process_stop(&d->browser);
	sandbox_process_stop(&d->window_manager);
	sandbox_process_stop(&d->xvnc);
	if (d->socket_fd >= 0)
		close(d->socket_fd);
	pthread_mutex_destroy(&d->lock);
	free(d);
	return ok;
}

int sandbox_desktop_display(const struct sandbox_desktop *d)
{
	return d->display;
}

bool sandbox_desktop_wait_ended(struct sandbox_desktop *d, int timeout_ms, int stop_fd,
				struct error *why)
{
	struct pollfd pfds[3] = { { .fd = d->xvnc.channel, .events = POLLIN },
				  { .fd = sandbox_watch_fd(d->sandbox), .events = 0 },
				  { .fd = stop_fd, .events = POLLIN } };
	int n;
	while ((n = poll(pfds, 3, timeout_ms)) < 0 && errno == EINTR)
		;
	if (n <= 0 || pfds[2].revents)
		return false;
	if (pfds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) {
		error_set(why, 0, "the sandbox's init is gone");
		return true;
	}
	if (!sandbox_process_wait(&d->xvnc, 0))
		return false; /* a message, not an end */
	int status = d->xvnc.status;
	if (WIFSIGNALED(status))
		error_set(why, 0, "the X server (Xvnc) was killed by signal %d (%s)",
			  WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		error_set(why, 0, "the X server (Xvnc) exited with status %d", WEXITSTATUS(status));
	return true;
}

void sandbox_desktop_end(struct sandbox_desktop *d)
{
	if (d)
		sandbox_end(d->sandbox);
}

void sandbox_desktop_kill(struct sandbox_desktop *d)
{
	if (d)
		sandbox_kill(d->sandbox);
}

const char *sandbox_desktop_vnc_socket(const struct sandbox_desktop *d)
{
	return d->socket_path;
}

struct sandbox *sandbox_desktop_sandbox(struct sandbox_desktop *d)
{
	return d->sandbox;
}

bool sandbox_desktop_running(struct sandbox_desktop *d)
{
	if (!d->has_x_server) {
		struct pollfd pfd = { .fd = sandbox_watch_fd(d->sandbox), .events = 0 };
		return poll(&pfd, 1, 0) == 0;
	}
	return sandbox_process_running(&d->xvnc);
}

bool sandbox_desktop_open_url(struct sandbox_desktop *d, const char *url, bool *started,
			      struct error *err)
{
	if (!d->has_x_server)
		return error_set(err, 0, "this sandbox has no X server to show a browser on");
	const char *browser = getenv("LIZARD_BROWSER");
	char profile[400];
	snprintf(profile, sizeof(profile), "--user-data-dir=%s/.browser-profile",
		 sandbox_inside_home(d->sandbox));
	/* It runs as the sandbox's unprivileged user, so its own sandbox stays
	 * on. The rest keeps a fresh profile quiet on a closed network. */
	const char *argv[] = {
		browser && *browser ? browser : "chromium",
		profile,
		"--test-type",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-features=Translate,MediaRouter",
		"--password-store=basic",
		"--start-maximized",
		url,
		NULL,
	};
	struct sandbox_command command = user_command("chromium", argv);
	pthread_mutex_lock(&d->lock);
	*started = !sandbox_process_running(&d->browser);
	bool ok;
	if (*started)
		ok = sandbox_spawn(d->sandbox, &command, &d->browser, err);
	else
		/* A second invocation with the same profile hands the URL to
		 * the running browser as a new tab and exits; should the
		 * browser be closing just then, it becomes the browser itself.
		 * Either way it is not waited for. */
		ok = sandbox_launch(d->sandbox, &command, err);
	pthread_mutex_unlock(&d->lock);
	return ok;
}
