/* SPDX-License-Identifier: MIT */
/* A session's lifetime and the registry that holds sessions, against a
 * small RFB server of the test's own (tests/fake-rfb/rfb_server.c) on a
 * UNIX socket: attached sessions start, describe themselves, end, fail
 * with a reason; the registry finds, lists, bounds and expires them. */
#include "test.h"

#include "bridge/session/info.h"
#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "tests/fake-rfb/rfb_server.h"
#include "util/error.h"
#include "util/log.h"
#include "vnc/conn.h"
#include "vnc/framebuffer.h"
#include "vnc/target.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char socket_path[108];
static int listener = -1;

/* Serves each client a 320x200 screen and one full update, then reads
 * what it sends until it goes. */
static void *serve_one(void *arg)
{
	int fd = (int)(intptr_t)arg;
	if (rfb_handshake(fd, 320, 200, "test-server")) {
		unsigned char byte;
		bool first = true;
		while (read(fd, &byte, 1) == 1) {
			/* Its first update request (after SetPixelFormat and
			 * SetEncodings) gets the picture. */
			if (first && byte == 3) {
				first = false;
				rfb_raw_update(fd, 0, 0, 320, 200, 7);
			}
		}
	}
	close(fd);
	return NULL;
}

static void *accept_loop(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(listener, NULL, NULL);
		if (fd < 0)
			return NULL;
		pthread_t t;
		if (pthread_create(&t, NULL, serve_one, (void *)(intptr_t)fd) == 0)
			pthread_detach(t);
		else
			close(fd);
	}
}

static bool start_server(void)
{
	snprintf(socket_path, sizeof(socket_path), "/tmp/lizard-test-session-%d.sock",
		 (int)getpid());
	unlink(socket_path);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path);
	listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(listener, 16) != 0)
		return false;
	pthread_t t;
	if (pthread_create(&t, NULL, accept_loop, NULL) != 0)
		return false;
	pthread_detach(t);
	return true;
}

static struct bridge_session *attached(const char *id, const char *path, struct error *err)
{
	struct vnc_target target = { .host = (char *)path, .is_unix = true };
	struct bridge_session_spec spec = { .kind = BRIDGE_ATTACHED, .target = &target };
	return bridge_session_create(id, &spec, err);
}

static void an_attached_session_starts_ready_and_describes_itself(void)
{
	struct error err;
	struct bridge_session *s = attached("s-test0001", socket_path, &err);
	ASSERT(s);
	ASSERT_EQ(bridge_session_state(s), BRIDGE_STARTING);
	ASSERT(bridge_session_start(s, &err));
	ASSERT_EQ(bridge_session_state(s), BRIDGE_READY);
	ASSERT(bridge_session_usable(s, &err));
	int w, h;
	vnc_framebuffer_size(bridge_session_framebuffer(s), &w, &h);
	ASSERT_EQ(w, 320);
	ASSERT_EQ(h, 200);
	cJSON *info = bridge_session_describe(s);
	ASSERT(info);
	ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(info, "session")), "s-test0001");
	ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(info, "template")), "vnc");
	ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(info, "size")), "320x200");
	ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(info, "state")), "ready");
	/* No deadline asked for: none. */
	ASSERT(cJSON_IsNull(cJSON_GetObjectItem(info, "deadline")));
	cJSON_Delete(info);
	bridge_session_unref(s);
}

static void a_session_whose_server_is_not_there_fails_with_the_reason(void)
{
	struct error err;
	struct bridge_session *s = attached("s-test0002", "/tmp/lizard-test-no-such.sock", &err);
	ASSERT(s);
	ASSERT(!bridge_session_start(s, &err));
	ASSERT_CONTAINS(err.message, "/tmp/lizard-test-no-such.sock");
	ASSERT_EQ(bridge_session_state(s), BRIDGE_FAILED);
	struct error why;
	ASSERT(!bridge_session_usable(s, &why));
	ASSERT_CONTAINS(why.message, "session s-test0002 failed");
	bridge_session_unref(s);
}

static void an_ended_session_says_why_to_every_call(void)
{
	struct error err;
	struct bridge_session *s = attached("s-test0003", socket_path, &err);
	ASSERT(s && bridge_session_start(s, &err));
	bridge_session_end(s, "ended by the test");
	ASSERT_EQ(bridge_session_state(s), BRIDGE_ENDED);
	ASSERT(!bridge_session_usable(s, &err));
	ASSERT_STR_EQ(err.message, "session s-test0003 has ended (ended by the test)");
	/* Ending twice keeps the first reason. */
	bridge_session_end(s, "again");
	ASSERT(!bridge_session_usable(s, &err));
	ASSERT_CONTAINS(err.message, "ended by the test");
	bridge_session_unref(s);
}

static void the_registry_finds_the_only_session_and_lists_the_others(void)
{
	struct error err;
	struct bridge_registry *r = bridge_registry_create();
	ASSERT(r);
	struct bridge_session *a = attached("s-aaaa0001", socket_path, &err);
	struct bridge_session *b = attached("s-bbbb0002", socket_path, &err);
	ASSERT(a && b);
	ASSERT(bridge_registry_add(r, a, &err));
	struct bridge_session *only = bridge_registry_acquire(r, NULL, &err);
	ASSERT(only == a);
	bridge_session_unref(only);
	ASSERT(bridge_registry_add(r, b, &err));
	ASSERT(!bridge_registry_acquire(r, NULL, &err));
	ASSERT_CONTAINS(err.message, "s-aaaa0001");
	ASSERT_CONTAINS(err.message, "s-bbbb0002");
	struct bridge_session *named = bridge_registry_acquire(r, "s-bbbb0002", &err);
	ASSERT(named == b);
	bridge_session_unref(named);
	ASSERT(!bridge_registry_acquire(r, "s-cccc0003", &err));
	ASSERT_CONTAINS(err.message, "no session 's-cccc0003'");
	char lane[64];
	ASSERT(bridge_registry_lane(r, "s-aaaa0001", lane, sizeof(lane)));
	ASSERT_STR_EQ(lane, "session:s-aaaa0001");
	ASSERT(bridge_registry_kill(r, "s-aaaa0001", "killed by the test", &err));
	ASSERT_EQ(bridge_session_state(a), BRIDGE_ENDED);
	/* One left: it is the one again. */
	only = bridge_registry_acquire(r, NULL, &err);
	ASSERT(only == b);
	bridge_session_unref(only);
	ASSERT(!bridge_registry_kill(r, "s-aaaa0001", "twice", &err));
	bridge_session_unref(a);
	bridge_session_unref(b);
	bridge_registry_destroy(r);
}

static void a_deadline_ends_the_session_and_the_registry_forgets_it(void)
{
	struct error err;
	struct bridge_registry *r = bridge_registry_create();
	struct bridge_session *s = attached("s-dead0001", socket_path, &err);
	ASSERT(r && s && bridge_session_start(s, &err));
	bridge_session_set_timeout(s, 150);
	ASSERT(bridge_registry_add(r, s, &err));
	struct bridge_session *found = NULL;
	for (int i = 0; i < 200; i++) {
		found = bridge_registry_acquire(r, "s-dead0001", &err);
		if (!found)
			break;
		bridge_session_unref(found);
		struct timespec tick = { 0, 20 * 1000000L };
		nanosleep(&tick, NULL);
	}
	ASSERT(!found);
	ASSERT_EQ(bridge_session_state(s), BRIDGE_ENDED);
	ASSERT(!bridge_session_usable(s, &err));
	ASSERT_CONTAINS(err.message, "its deadline passed");
	bridge_session_unref(s);
	bridge_registry_destroy(r);
}

static void the_registry_holds_at_most_its_bound_and_nothing_after_shutdown(void)
{
	struct error err;
	struct bridge_registry *r = bridge_registry_create();
	ASSERT(r);
	struct bridge_session *all[BRIDGE_MAX_SESSIONS + 1];
	for (int i = 0; i <= BRIDGE_MAX_SESSIONS; i++) {
		char id[32];
		snprintf(id, sizeof(id), "s-%08x", (unsigned)i);
		all[i] = attached(id, socket_path, &err);
		ASSERT(all[i]);
	}
	for (int i = 0; i < BRIDGE_MAX_SESSIONS; i++)
		ASSERT(bridge_registry_add(r, all[i], &err));
	ASSERT(!bridge_registry_add(r, all[BRIDGE_MAX_SESSIONS], &err));
	ASSERT(err.message[0]);
	bridge_registry_shutdown(r);
	for (int i = 0; i < BRIDGE_MAX_SESSIONS; i++)
		ASSERT_EQ(bridge_session_state(all[i]), BRIDGE_ENDED);
	ASSERT(!bridge_registry_acquire(r, NULL, &err));
	ASSERT_CONTAINS(err.message, "shutting down");
	for (int i = 0; i <= BRIDGE_MAX_SESSIONS; i++)
		bridge_session_unref(all[i]);
	bridge_registry_destroy(r);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	/* The sessions' own log lines would bury the test's. */
	setenv("LIZARD_LOG", "warn", 0);
	log_init_from_env();
	vnc_conn_global_init();
	if (!start_server()) {
		fprintf(stderr, "cannot start the test's RFB server at %s\n", socket_path);
		return EXIT_FAILURE;
	}
	RUN_TEST(an_attached_session_starts_ready_and_describes_itself);
	RUN_TEST(a_session_whose_server_is_not_there_fails_with_the_reason);
	RUN_TEST(an_ended_session_says_why_to_every_call);
	RUN_TEST(the_registry_finds_the_only_session_and_lists_the_others);
	RUN_TEST(a_deadline_ends_the_session_and_the_registry_forgets_it);
	RUN_TEST(the_registry_holds_at_most_its_bound_and_nothing_after_shutdown);
	close(listener);
	unlink(socket_path);
	TEST_EXIT();
}
