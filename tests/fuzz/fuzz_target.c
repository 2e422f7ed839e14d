/* SPDX-License-Identifier: MIT */
/* VNC URLs (vnc://[:PASSWORD@]HOST[:PORT], unix:///path): any text. A
 * parsed target has a host and a port in range and describes itself; a
 * refusal carries a message, in UTF-8 when the URL was. */
#include "fuzz.h"

#include "util/utf8.h"
#include "vnc/target.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *url = malloc(size + 1);
	FUZZ_CHECK(url, "out of memory");
	memcpy(url, data, size);
	url[size] = '\0';
	struct vnc_target target;
	struct error err = { 0 };
	bool text = utf8_valid(url, strlen(url), NULL);
	if (vnc_target_parse(url, &target, &err)) {
		FUZZ_CHECK(target.host && target.host[0], "no host in %s", url);
		FUZZ_CHECK(target.is_unix || (target.port >= 1 && target.port <= 65535), "port %d",
			   target.port);
		char where[300];
		vnc_target_describe(&target, where, sizeof(where));
		FUZZ_CHECK(where[0], "no description of %s", url);
		vnc_target_finish(&target);
	} else {
		FUZZ_CHECK(err.message[0], "refused without a message: %s", url);
		if (text)
			FUZZ_CHECK(utf8_valid(err.message, strlen(err.message), NULL),
				   "message: %s", err.message);
	}
	free(url);
	return 0;
}
