/* SPDX-License-Identifier: MIT */
/* A root daemon's user namespace for one sandbox, made before the sandbox
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

#include <stdint.h>
#include <sys/types.h>

/* A descriptor of the new namespace (close-on-exec), or -1 and err. The
 * daemon must be root: it writes maps other than its own. */
int sandbox_userns_make(uid_t first, uint32_t count, struct error *err);

#endif
