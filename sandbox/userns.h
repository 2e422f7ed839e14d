/* SPDX-License-Identifier: MIT */
/* A root daemon's user and network namespaces for one sandbox, made before the sandbox
 * starts: ids 0 to count - 1 inside are host ids first to first + count -
 * 1, and host uid first owns it. The same namespace is the sandbox's (bwrap
 * joins it with --userns) and the idmapping of the writable root's lower
 * layers (root.h), so a file the host's uid u owns shows inside as owned by
 * u, for every u below count. Its owner being the sandbox's root on the
 * host, what runs as that uid outside (bwrap, slirp4netns) may join it.
 * Private to sandbox/. */
#ifndef LIZARD_SANDBOX_USERNS_H
#define LIZARD_SANDBOX_USERNS_H

#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A descriptor of the new namespace (close-on-exec), or -1 and err. The
 * daemon must be root: it writes maps other than its own. */
int sandbox_userns_make(uid_t first, uint32_t count, struct error *err);

/* For a daemon that is not root: a namespace of its own, owned by its uid,
 * whose maps write_maps writes for the pid of the process in it (newuidmap
 * and newgidmap, setuid root, may map what /etc/subuid grants). A
 * descriptor (close-on-exec), or -1 and err. */
int sandbox_userns_make_own(bool (*write_maps)(pid_t pid, void *arg, struct error *err), void *arg,
			    struct error *err);

/* A network namespace that the user namespace userns owns, with only its
 * loopback interface, up: the sandbox's, which bwrap's child joins before
 * its exec, so that slirp4netns may connect it while the rest of the
 * sandbox is made (bwrap's own loopback setup would race with it). A
 * descriptor (close-on-exec), or -1 and err. */
int sandbox_netns_make(int userns, struct error *err);

struct sandbox;
struct sandbox_uid_range;

/* A root daemon's ids for s: a block from range (uid.h; NULL: the
 * default), the user namespace that maps it and a network namespace of
 * that one; in s->host_uid, id_count, uid_held, userns_fd and netns_fd,
 * which sandbox_destroy lets go of. */
bool sandbox_userns_take_ids(struct sandbox *s, const struct sandbox_uid_range *range,
			     struct error *err);

#endif
