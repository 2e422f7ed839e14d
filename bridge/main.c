/* SPDX-License-Identifier: MIT */
/* lizard-bridge: command line and the stdio daemon. */
#include "bridge/client/client.h"
#include "bridge/context.h"
#include "bridge/server/forwarded.h"
#include "bridge/tools/geometry.h"
#include "bridge/server/metrics.h"
#include "bridge/session/registry.h"
#include "bridge/server/server.h"
#include "bridge/session/session.h"
#include "bridge/tools/catalog.h"
#include "bridge/tools/templates.h"
#include "mcp/server.h"
#include "mcp/workers.h"
#include "bridge/viewer/video.h"
#include "mcp/stdio.h"
#include "sandbox/cgroup.h"
#include "sandbox/disk.h"
#include "sandbox/pool.h"
#include "sandbox/sandbox.h"
#include "sandbox/volume.h"
#include "util/log.h"
#include "vnc/conn.h"
#include "vnc/target.h"
#include "sandbox/init.h"
#include "sandbox/stale.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LIZARD_VERSION
#define LIZARD_VERSION "0.0.0"
#endif

#define DEFAULT_WIDTH 1280
#define DEFAULT_HEIGHT 800
/* Tool calls: 16 workers, of which long calls (commands, files, input,
 * waits) leave 4 to quick ones (screenshots, session management, kills);
 * one client runs at most 8 long calls at once and one desktop at most 4,
 * one client at most 4 quick ones. More wait their turn (workers.h). */
static const struct mcp_workers_limits worker_limits = {
	.threads = 16,
	.reserved = 4,
	.long_per_owner = 8,
	.long_per_group = 4,
	.quick_per_owner = 4,
};

static const char usage[] =
	"usage: lizard-bridge stdio [--vnc URL] [--size WxH] [--sizes ...] [--data-dir DIR]\n"
	"                           [--uid-range FIRST:COUNT] [--viewer ADDR:PORT] [--no-webrtc]\n"
	"                           [--no-fuse-root] [--warm-sandboxes N]\n"
	"       lizard-bridge serve [--listen ADDR:PORT|/socket/path] [--vnc URL]\n"
	"                           [--sizes NAME=CPUS:MEMORY[:PIDS[:DISK]],...] [--data-dir DIR]\n"
	"                           [--uid-range FIRST:COUNT] [--no-webrtc] [--no-fuse-root]\n"
	"                           [--warm-sandboxes N]\n"
	"                           [--allowed-host NAME]... [--max-connections N]\n"
	"                           [--max-peer-connections N] [--request-timeout SECONDS]\n"
	"                           [--trusted-proxy ADDR[/PREFIX]]... [--public-host NAME]\n"
	"                           [--port-idle-timeout SECONDS] [--max-port-connections N]\n"
	"                           [--port-upgraded-idle-timeout SECONDS]\n"
	"       lizard-bridge call [--url URL] [--json] TOOL [KEY=VALUE ...] [-o FILE]\n"
	"       lizard-bridge template build|list|delete ... (template --help)\n"
	"       lizard-bridge --help | --version\n"
	"\n"
	"stdio   serve MCP on stdin/stdout. Without --vnc it starts a local desktop\n"
	"        (Xvnc + openbox, --size, default 1280x800) that lives as long as the\n"
	"        bridge; with --vnc it drives an existing VNC server:\n"
	"          vnc://[:PASSWORD@]HOST[:PORT]   (port 5900 by default)\n"
	"          unix:///path/to/socket\n"
	"        The password may come from LIZARD_VNC_PASSWORD instead.\n"
	"        --viewer ADDR:PORT serves the viewer pages there, for start_stream's\n"
	"        links (MCP stays on stdio).\n"
	"        The viewer page is offered each desktop as WebRTC video (GStreamer's\n"
	"        webrtcbin) when GStreamer has what it needs, and falls back to its own\n"
	"        updates; --no-webrtc (stdio and serve) offers the updates only.\n"
	"serve   the daemon: sessions made with create_session, MCP over WebSocket and\n"
	"        Streamable HTTP on /mcp (default 127.0.0.1:7070), /healthz, /metrics.\n"
	"        Requests need Authorization: Bearer $LIZARD_API_KEY (one is generated\n"
	"        and printed once when unset). --vnc adds a session attached to URL.\n"
	"        --sizes changes the presets small, medium, large of create_session's\n"
	"        size, e.g. small=1:512M:4096:8G (defaults 2:4G:4096:10G,\n"
	"        4:8G:4096:20G, 8:16G:4096:40G); DISK bounds HOME, /tmp and /workspace.\n"
	"        --data-dir holds the volumes (default ~/.local/share/lizard-bridge).\n"
	"        --uid-range: run as root, each sandbox gets 65536 host uids (and the\n"
	"        same gids), its ids 0..65535, from FIRST..FIRST+COUNT-1 (default\n"
	"        2000000:1000000000), a block starting at a multiple of 65536 (one uid\n"
	"        when the range holds no whole block), none of them a user's, a\n"
	"        group's, in /etc/subuid or /etc/subgid, or a process's.\n"
	"        A daemon that is not root gives its sessions a writable root with\n"
	"        fuse-overlayfs inside each sandbox (README); --no-fuse-root (stdio\n"
	"        and serve) keeps their system directories the host's, read-only.\n"
	"        --warm-sandboxes N (stdio and serve, 0 to 8, default 0) keeps N\n"
	"        sandboxes started ahead for sessions with no size, volume or\n"
	"        snapshot and the network on (create_session template=base):\n"
	"        such a session starts in milliseconds.\n"
	"        The Host header must be localhost or an address (against DNS\n"
	"        rebinding); --allowed-host NAME (repeatable) accepts another name,\n"
	"        e.g. that of a reverse proxy. Caps: --max-connections (512, at most\n"
	"        512 and half the descriptor limit), --max-peer-connections per\n"
	"        client address (64), --request-timeout per HTTP request (30 s).\n"
	"        --trusted-proxy ADDR (repeatable; an address or ADDR/PREFIX) names a\n"
	"        reverse proxy whose X-Forwarded-For says who the client is: its\n"
	"        requests count for that client's cap, not the proxy's.\n"
	"        expose_port's services are reached as <port>-<session>.localhost:PORT\n"
	"        on the daemon's port; --public-host NAME[:PORT] makes that\n"
	"        <port>-<session>.NAME[:PORT] (a wildcard name that reaches this daemon).\n"
	"        A connection to a port closes after --port-idle-timeout without a byte\n"
	"        (120 s), or after --port-upgraded-idle-timeout once it was upgraded to\n"
	"        a WebSocket (600 s); --max-port-connections caps\n"
	"        those open to one session's ports (256).\n"
	"call    run one tool on a daemon (LIZARD_API_URL, LIZARD_API_KEY); prints text\n"
	"        results, writes the first image to -o FILE, exits 1 on a tool error.\n"
	"\n"
	"Logs go to stderr; LIZARD_LOG=error|warn|info|debug sets how much.\n";

static const char instructions[] =
	"These tools drive a graphical desktop. Take a screenshot to see it; use the "
	"pixel coordinates from the screenshot for click, move_mouse and scroll; type "
	"enters text into the focused window and press sends keys and shortcuts.";

static int stop_pipe[2] = { -1, -1 };

static void on_stop_signal(int sig)
{
	(void)sig;
	int saved = errno;
	if (write(stop_pipe[1], "x", 1) < 0) {
		/* The pipe is full: a stop is already pending. */
	}
	errno = saved;
}

static bool install_stop_signals(void)
{
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return false;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGTERM, &sa, NULL) == 0 && sigaction(SIGINT, &sa, NULL) == 0 &&
	       sigaction(SIGHUP, &sa, NULL) == 0;
}

#define MAX_ALLOWED_HOSTS 16
#define MAX_TRUSTED_PROXIES 16

struct stdio_options {
	const char *vnc_url;
	const char *listen;
	const char *viewer_listen; /* stdio --viewer: where viewer pages are served */
	bool webrtc;               /* viewers are offered video (--no-webrtc: not) */
	int warm;                  /* --warm-sandboxes: sandboxes started ahead */
	int width, height;
	bool serve;
	const char *data_dir;
	struct sandbox_sizes *sizes;
	struct sandbox_uid_range *uid_range;
	const char *allowed_hosts[MAX_ALLOWED_HOSTS];
	size_t allowed_host_count;
	struct bridge_trusted_proxy trusted_proxies[MAX_TRUSTED_PROXIES];
	size_t trusted_proxy_count;
	int max_connections, max_peer_connections, request_timeout_s;
	const char *public_host; /* --public-host; NULL: localhost */
	int port_idle_timeout_s, port_upgraded_idle_timeout_s, port_max_session_connections;
};

/* A whole number in [min, max], or -1. */
static int parse_count(const char *text, int min, int max)
{
	char *end;
	long n = strtol(text, &end, 10);
	return end != text && *end == '\0' && n >= min && n <= max ? (int)n : -1;
}

/* serve's own options; 1 when consumed (with *i moved past the value), 0
 * when not one of them, 2 on a bad value (said). */
static int parse_serve_option(const char *arg, const char *value, int *i, struct stdio_options *o)
{
	struct {
		const char *name;
		int *field, min, max;
	} counts[] = {
		{ "--max-connections", &o->max_connections, 1, 1000000 },
		{ "--max-peer-connections", &o->max_peer_connections, 1, 1000000 },
		{ "--request-timeout", &o->request_timeout_s, 1, 3600 },
		{ "--port-idle-timeout", &o->port_idle_timeout_s, 1, 86400 },
		{ "--port-upgraded-idle-timeout", &o->port_upgraded_idle_timeout_s, 1, 86400 },
		{ "--max-port-connections", &o->port_max_session_connections, 1, 100000 },
	};
	if (!value)
		return 0;
	if (strcmp(arg, "--allowed-host") == 0) {
		if (o->allowed_host_count == MAX_ALLOWED_HOSTS || !value[0] ||
		    strpbrk(value, ":/ ")) {
			fprintf(stderr,
				"lizard-bridge: --allowed-host takes a host name without "
				"port (at most %d of them)\n",
				MAX_ALLOWED_HOSTS);
			return 2;
		}
		o->allowed_hosts[o->allowed_host_count++] = value;
		(*i)++;
		return 1;
	}
	if (strcmp(arg, "--public-host") == 0) {
		if (!value[0] || strlen(value) > 100 || strpbrk(value, "/ ?#@") ||
		    value[0] == '.') {
			fprintf(stderr, "lizard-bridge: --public-host takes a host name, with a "
					"port if need be (example.com, box.example.com:8443)\n");
			return 2;
		}
		o->public_host = value;
		(*i)++;
		return 1;
	}
	if (strcmp(arg, "--trusted-proxy") == 0) {
		if (o->trusted_proxy_count == MAX_TRUSTED_PROXIES ||
		    !bridge_trusted_proxy_parse(value,
						&o->trusted_proxies[o->trusted_proxy_count])) {
			fprintf(stderr,
				"lizard-bridge: --trusted-proxy '%s' is not an IPv4 or IPv6 address, "
				"or one with /PREFIX (e.g. 127.0.0.1, ::1, 10.0.0.0/8; at most %d "
				"of them)\n",
				value, MAX_TRUSTED_PROXIES);
			return 2;
		}
		o->trusted_proxy_count++;
		(*i)++;
		return 1;
	}
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		if (strcmp(arg, counts[k].name) != 0)
			continue;
		*counts[k].field = parse_count(value, counts[k].min, counts[k].max);
		if (*counts[k].field < 0) {
			fprintf(stderr, "lizard-bridge: %s takes a number from %d to %d\n", arg,
				counts[k].min, counts[k].max);
			return 2;
		}
		(*i)++;
		return 1;
	}
	return 0;
}

static int parse_stdio_options(int argc, char **argv, struct stdio_options *o)
{
	o->width = DEFAULT_WIDTH;
	o->height = DEFAULT_HEIGHT;
	o->listen = "127.0.0.1:7070";
	int rc;
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(arg, "--vnc") == 0 && value) {
			o->vnc_url = value;
			i++;
		} else if (strcmp(arg, "--listen") == 0 && value && o->serve) {
			o->listen = value;
			i++;
		} else if (strcmp(arg, "--viewer") == 0 && value && !o->serve) {
			o->viewer_listen = value;
			i++;
		} else if (strcmp(arg, "--sizes") == 0 && value) {
			struct error failed;
			if (!sandbox_sizes_parse(o->sizes, value, &failed)) {
				fprintf(stderr, "lizard-bridge: --sizes: %s\n", failed.message);
				return 2;
			}
			i++;
		} else if (strcmp(arg, "--data-dir") == 0 && value) {
			o->data_dir = value;
			i++;
		} else if (strcmp(arg, "--webrtc") == 0) {
			o->webrtc = true; /* the default; from when video was opt-in */
		} else if (strcmp(arg, "--no-webrtc") == 0) {
			o->webrtc = false;
		} else if (strcmp(arg, "--fuse-root") == 0) {
			sandbox_allow_fuse_root(true); /* the default; from when it was opt-in */
		} else if (strcmp(arg, "--no-fuse-root") == 0) {
			sandbox_allow_fuse_root(false);
		} else if (strcmp(arg, "--warm-sandboxes") == 0 && value) {
			if ((o->warm = parse_count(value, 0, SANDBOX_POOL_MAX)) < 0) {
				fprintf(stderr,
					"lizard-bridge: --warm-sandboxes takes 0 to %d sandboxes\n",
					SANDBOX_POOL_MAX);
				return 2;
			}
			i++;
		} else if (strcmp(arg, "--uid-range") == 0 && value) {
			struct error failed;
			if (!sandbox_uid_range_parse(value, geteuid(), o->uid_range, &failed)) {
				fprintf(stderr, "lizard-bridge: --uid-range: %s\n", failed.message);
				return 2;
			}
			if (geteuid() != 0)
				log_warn(
					"--uid-range is for a daemon run as root; this one runs as "
					"uid %u and gives its sessions that uid",
					(unsigned)geteuid());
			i++;
		} else if (o->serve && (rc = parse_serve_option(arg, value, &i, o)) != 0) {
			if (rc == 2)
				return 2;
		} else if (strcmp(arg, "--size") == 0 && value && !o->serve) {
			if (!bridge_parse_size(value, &o->width, &o->height)) {
				fprintf(stderr,
					"lizard-bridge: --size '%s' is not WxH with each side "
					"64..8192, e.g. 1280x800\n",
					value);
				return 2;
			}
			i++;
		} else {
			fprintf(stderr, "lizard-bridge: unknown or incomplete option '%s'\n\n%s",
				arg, usage);
			return 2;
		}
	}
	return 0;
}

/* The default session: lives as long as the bridge. */
static bool start_default_session(const struct stdio_options *o, struct bridge_tools_context *c)
{
	struct bridge_registry *registry = c->registry;
	if (o->serve && !o->vnc_url)
		return true;
	struct error err;
	struct vnc_target target;
	struct bridge_session_spec spec = {
		.kind = o->vnc_url ? BRIDGE_ATTACHED : BRIDGE_DESKTOP,
		.width = o->width,
		.height = o->height,
		.timeout_ms = 0,
		.network = true,
		.uid_range = &c->uid_range,
	};
	/* Limited (and so pausable) like create_session's default, when it can be. */
	struct sandbox_limits limits;
	if (!o->vnc_url && c->cgroup_root && sandbox_sizes_find(&c->sizes, NULL, &limits, NULL)) {
		spec.cgroup_root = c->cgroup_root;
		spec.limits = &limits;
		spec.size_name = "medium";
	}
	if (o->vnc_url) {
		if (!vnc_target_parse(o->vnc_url, &target, &err)) {
			log_error("%s", err.message);
			return false;
		}
		const char *password = getenv("LIZARD_VNC_PASSWORD");
		if (password && *password && !vnc_target_set_password(&target, password)) {
			vnc_target_finish(&target);
			return false;
		}
		spec.target = &target;
	}
	char id[32] = "default";
	if (o->serve)
		bridge_registry_new_id(id, sizeof(id));
	struct bridge_session *session = bridge_session_create(id, &spec, &err);
	if (o->vnc_url)
		vnc_target_finish(&target);
	bool ok = session && bridge_session_start(session, &err) &&
		  bridge_registry_add(registry, session, &err);
	if (!ok)
		log_error("%s", err.message);
	bridge_session_unref(session);
	return ok;
}

/* Session events go to MCP clients as log messages (notifications/message). */
static void log_session_event(const char *id, enum bridge_session_state from,
			      enum bridge_session_state to, const char *why, void *context)
{
	struct mcp_server *server = context;
	char message[400];
	enum mcp_log_level level = MCP_LOG_INFO;
	const char *what = bridge_session_state_name(to);
	switch (to) {
	case BRIDGE_READY:
		what = from == BRIDGE_RECONNECTING ? "reconnected" : "started";
		break;
	case BRIDGE_RECONNECTING:
		level = MCP_LOG_WARNING;
		break;
	case BRIDGE_FAILED:
		level = MCP_LOG_ERROR;
		break;
	case BRIDGE_ENDED:
		level = MCP_LOG_NOTICE;
		break;
	case BRIDGE_STARTING:
		break;
	}
	snprintf(message, sizeof(message), "session %s %s%s%s", id, what, why ? ": " : "",
		 why ? why : "");
	mcp_server_log(server, level, "session", message);
}

/* LIZARD_API_KEY, or a fresh one printed once: the only time it is shown. */
static bool api_key(char *key, size_t size)
{
	const char *given = getenv("LIZARD_API_KEY");
	if (given && *given) {
		if (strlen(given) < 16) {
			log_error(
				"LIZARD_API_KEY is shorter than 16 characters; use a long random key");
			return false;
		}
		snprintf(key, size, "%s", given);
	} else {
		unsigned char bytes[24];
		if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
			return false;
		for (size_t i = 0; i < sizeof(bytes) && i * 2 + 2 < size; i++)
			snprintf(key + i * 2, 3, "%02x", bytes[i]);
		fprintf(stderr, "lizard-bridge: no LIZARD_API_KEY set; generated API key: %s\n",
			key);
	}
	/* Nothing started from here on needs to see it. */
	unsetenv("LIZARD_API_KEY");
	return true;
}

/* Sizes need cgroups; without them sessions still run, unlimited. */
static void open_resources(struct bridge_tools_context *c, const char *data_dir)
{
	struct error failed;
	c->cgroup_root = sandbox_cgroup_root_open(SANDBOX_CGROUP_AUTO, &failed);
	if (c->cgroup_root) {
		unsigned removed = 0;
		if (!sandbox_cgroup_root_remove_stale(c->cgroup_root, &removed, &failed))
			log_warn("cgroups left by earlier daemons: %s", failed.message);
		else if (removed > 0)
			log_info("removed %u session cgroups left by daemons that died", removed);
		char what[128];
		sandbox_cgroup_root_describe(c->cgroup_root, what, sizeof(what));
		log_info("session sizes enforced with cgroup v%d (%s)",
			 sandbox_cgroup_root_version(c->cgroup_root) == SANDBOX_CGROUP_V2 ? 2 : 1,
			 what);
	} else {
		snprintf(c->cgroup_why, sizeof(c->cgroup_why), "%s", failed.message);
		log_warn("sizes are unavailable, sessions run without limits: %s", failed.message);
	}
	/* A size's disk needs a daemon that can make disks; without, sizes
	 * still limit CPU, memory and processes, and say why not the disk. */
	if (!sandbox_disk_available(&failed)) {
		snprintf(c->disk_why, sizeof(c->disk_why), "%s", failed.message);
		for (int i = 0; i < SANDBOX_SIZE_COUNT; i++)
			c->sizes.preset[i].disk_bytes = 0;
		if (c->cgroup_root)
			log_warn("sizes come without disk limits: %s", failed.message);
	}
	char dir[512];
	if (!data_dir) {
		if (sandbox_data_dir_default(dir, sizeof(dir), &failed))
			data_dir = dir;
	}
	if (data_dir) {
		c->volumes = sandbox_volumes_open(data_dir, &failed);
		snprintf(c->snapshots_dir, sizeof(c->snapshots_dir), "%.480s/snapshots", data_dir);
		if (mkdir(c->snapshots_dir, 0700) != 0 && errno != EEXIST)
			c->snapshots_dir[0] = '\0';
	}
	if (!c->volumes) {
		snprintf(c->volumes_why, sizeof(c->volumes_why), "%s", failed.message);
		log_warn("volumes are unavailable: %s", failed.message);
	}
}

static void close_resources(struct bridge_tools_context *c)
{
	struct error failed;
	error_clear(&failed);
	sandbox_cgroup_root_close(c->cgroup_root, &failed);
	if (failed.message[0])
		log_warn("%s", failed.message);
	sandbox_volumes_close(c->volumes);
}

/* stdio --viewer: the HTTP server for viewer pages only, on a thread of
 * its own beside the stdio loop, stopped when that ends. */
struct viewer_server {
	struct bridge_server_options options;
	pthread_t thread;
	int stop[2], ready[2];
	int rc;
};

static void *run_viewer_server(void *arg)
{
	struct viewer_server *v = arg;
	v->rc = bridge_server_run(&v->options);
	/* A server that never listened wakes the starter too. */
	if (write(v->ready[1], "0", 1) != 1)
		log_debug("cannot say the viewer server ended");
	return NULL;
}

static bool start_viewer_server(struct viewer_server *v, const char *listen,
				struct bridge_registry *registry)
{
	v->stop[0] = v->stop[1] = v->ready[0] = v->ready[1] = -1;
	if (pipe2(v->stop, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(v->ready, O_CLOEXEC) != 0) {
		log_error("cannot start the viewer server: %s", strerror(errno));
		return false;
	}
	v->options = (struct bridge_server_options){
		.listen = listen,
		.api_key = "",
		.registry = registry,
		.max_message = MCP_STDIO_MAX_MESSAGE,
		.stop_fd = v->stop[0],
		.ready_fd = v->ready[1],
	};
	if (pthread_create(&v->thread, NULL, run_viewer_server, v) != 0) {
		log_error("cannot start the viewer server's thread");
		return false;
	}
	char said = '0';
	struct pollfd pfd = { .fd = v->ready[0], .events = POLLIN };
	if (poll(&pfd, 1, 10000) == 1 && read(v->ready[0], &said, 1) == 1 && said == '1')
		return true;
	log_error("--viewer %s: the viewer server did not start", listen);
	if (write(v->stop[1], "x", 1) != 1)
		log_debug("cannot stop the viewer server");
	pthread_join(v->thread, NULL);
	return false;
}

static void stop_viewer_server(struct viewer_server *v)
{
	if (write(v->stop[1], "x", 1) != 1)
		log_debug("cannot stop the viewer server");
	pthread_join(v->thread, NULL);
	for (int i = 0; i < 2; i++) {
		close(v->stop[i]);
		close(v->ready[i]);
	}
}

static int run_bridge(int argc, char **argv, bool serve)
{
	struct bridge_tools_context context = { .registry = NULL };
	sandbox_sizes_init(&context.sizes);
	context.uid_range = SANDBOX_UID_RANGE_DEFAULT;
	struct stdio_options options = { .serve = serve,
					 .webrtc = true,
					 .sizes = &context.sizes,
					 .uid_range = &context.uid_range };
	int rc = parse_stdio_options(argc, argv, &options);
	if (rc != 0)
		return rc;
	/* Before any thread: a fork. */
	struct error janitor;
	if (!sandbox_janitor_start(&janitor))
		log_warn("what sessions leave on the host stays if the daemon is killed: %s",
			 janitor.message);
	if (!install_stop_signals()) {
		log_error("cannot install signal handlers: %s", strerror(errno));
		return 1;
	}
	struct error video;
	if (!options.webrtc)
		log_info("--no-webrtc: viewers get the WebSocket viewer's updates, no video");
	else if (!bridge_video_init(&video))
		log_warn("viewers get no video, only the WebSocket viewer's updates: %s (or "
			 "start with --no-webrtc to say so)",
			 video.message);
	else
		log_info("viewers are offered WebRTC video (--no-webrtc: updates only)");

	char key[128] = "";
	if (serve && !api_key(key, sizeof(key)))
		return 1;
	struct error stale;
	unsigned removed = sandbox_remove_stale(&stale);
	if (removed)
		log_info("removed the sandbox files of %u daemons that died", removed);
	if (stale.message[0])
		log_warn("sandbox files of a daemon that died: %s", stale.message);
	open_resources(&context, options.data_dir);
	context.registry = bridge_registry_create();
	bool started = context.registry && start_default_session(&options, &context);
	/* The password has been read; keep it out of anything started later. */
	unsetenv("LIZARD_VNC_PASSWORD");
	if (!started) {
		bridge_registry_destroy(context.registry);
		close_resources(&context);
		return 1;
	}

	/* With the default size's disk (a root daemon's sessions get a size
	 * unless they ask for another). */
	struct sandbox_limits defaults = { 0 };
	if (context.cgroup_root)
		sandbox_sizes_find(&context.sizes, NULL, &defaults, NULL);
	struct error warm;
	if (!sandbox_pool_start((unsigned)options.warm, &context.uid_range, defaults.disk_bytes,
				&warm))
		log_warn("no sandboxes are started ahead: %s", warm.message);
	else if (options.warm > 0)
		log_info("%d sandbox%s started ahead for plain sessions (--warm-sandboxes)",
			 options.warm, options.warm == 1 ? " is" : "es are");

	/* Filled before the tools are registered, not written after. */
	struct bridge_viewer_links links = { .base_url = "" };
	if (serve || options.viewer_listen)
		bridge_server_viewer_links(serve ? options.listen : options.viewer_listen,
					   options.public_host, &links);
	context.viewer_links = &links;
	struct mcp_server *server = mcp_server_create("lizard-bridge", LIZARD_VERSION, instructions,
						      &worker_limits);
	if (!server || !bridge_tools_register(server, &context)) {
		log_error("cannot set up the MCP server");
		mcp_server_destroy(server);
		bridge_registry_destroy(context.registry);
		sandbox_pool_stop();
		close_resources(&context);
		return 1;
	}
	mcp_server_set_group_function(server, bridge_tools_group, &context);
	bridge_session_set_event_sink(log_session_event, server);
	struct bridge_metrics *metrics = bridge_metrics_create();
	if (metrics)
		mcp_server_set_observer(server, bridge_metrics_observe_call, metrics);

	if (serve) {
		struct bridge_server_options server_options = {
			.listen = options.listen,
			.api_key = key,
			.mcp = server,
			.registry = context.registry,
			.metrics = metrics,
			.max_message = MCP_STDIO_MAX_MESSAGE,
			.stop_fd = stop_pipe[0],
			.allowed_hosts = options.allowed_hosts,
			.allowed_host_count = options.allowed_host_count,
			.max_connections = options.max_connections,
			.max_peer_connections = options.max_peer_connections,
			.request_timeout_s = options.request_timeout_s,
			.trusted_proxies = options.trusted_proxies,
			.trusted_proxy_count = options.trusted_proxy_count,
			.public_host = options.public_host,
			.port_idle_timeout_s = options.port_idle_timeout_s,
			.port_upgraded_idle_timeout_s = options.port_upgraded_idle_timeout_s,
			.port_max_session_connections = options.port_max_session_connections,
		};
		rc = metrics ? bridge_server_run(&server_options) : 1;
		log_info("shutting down");
	} else {
		struct viewer_server viewers;
		bool viewing = options.viewer_listen != NULL;
		if (viewing &&
		    !start_viewer_server(&viewers, options.viewer_listen, context.registry)) {
			/* The sessions' ends are still told to the server's log:
			 * end them first, then let go of the sink and the server. */
			bridge_registry_shutdown(context.registry);
			bridge_session_set_event_sink(NULL, NULL);
			mcp_server_destroy(server);
			bridge_registry_destroy(context.registry);
			bridge_metrics_destroy(metrics);
			sandbox_pool_stop();
			close_resources(&context);
			return 1;
		}
		log_info("serving MCP on stdio");
		enum mcp_stdio_end end = mcp_stdio_serve(server, STDIN_FILENO, STDOUT_FILENO,
							 stop_pipe[0], MCP_STDIO_MAX_MESSAGE);
		if (viewing)
			stop_viewer_server(&viewers);
		log_info("%s; shutting down", end == MCP_STDIO_EOF       ? "stdin closed"
					      : end == MCP_STDIO_STOPPED ? "signal received"
									 : "stdio failed");
	}
	memset(key, 0, sizeof(key));

	/* Nothing is read any more. What still runs is cancelled (after EOF,
	 * stdio has already waited for the replies), then the sessions end,
	 * once each: calls waiting on them wake and fail, and none can find a
	 * session any more. Only when the workers are joined can nothing
	 * reach the registry, so it is freed last. */
	mcp_server_cancel_all(server);
	bridge_registry_shutdown(context.registry);
	bridge_session_set_event_sink(NULL, NULL);
	mcp_server_destroy(server);
	bridge_registry_destroy(context.registry);
	bridge_metrics_destroy(metrics);
	/* After the sessions, some of whose sandboxes its thread started. */
	sandbox_pool_stop();
	/* After the sessions: their cgroups and volumes went with them. */
	close_resources(&context);
	bridge_video_finish(); /* after the sessions' streams */
	return rc;
}

int main(int argc, char **argv)
{
	/* Inside a sandbox, not for people: see sandbox/init.c. */
	if (argc >= 2 && strcmp(argv[1], "sandbox-init") == 0)
		return sandbox_init_main(argc - 2, argv + 2);
	log_init_from_env();
	vnc_conn_global_init();
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("lizard-bridge %s\n", LIZARD_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "stdio") == 0)
		return run_bridge(argc - 2, argv + 2, false);
	if (strcmp(argv[1], "serve") == 0)
		return run_bridge(argc - 2, argv + 2, true);
	if (strcmp(argv[1], "template") == 0)
		return tools_template_command(argc - 1, argv + 1);
	if (strcmp(argv[1], "call") == 0)
		return bridge_client_run(argc - 2, argv + 2);
	fprintf(stderr, "lizard-bridge: unknown command '%s'\n\n%s", argv[1], usage);
	return 2;
}
