/* SPDX-License-Identifier: MIT */
/* Key combinations ("ctrl+shift+t Return"): any text. Parsing either gives
 * combos within the bounds or a message in valid UTF-8 when the text was. */
#include "fuzz.h"

#include "util/utf8.h"
#include "vnc/keys.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	FUZZ_CHECK(text, "out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	struct vnc_key_combo combos[VNC_MAX_COMBOS];
	size_t count = 0;
	struct error err = { 0 };
	if (vnc_keys_parse(text, combos, VNC_MAX_COMBOS, &count, &err)) {
		FUZZ_CHECK(count <= VNC_MAX_COMBOS, "%zu combos", count);
		for (size_t i = 0; i < count; i++) {
			FUZZ_CHECK(combos[i].count >= 1 && combos[i].count <= VNC_MAX_COMBO_KEYS,
				   "combo of %d keys", combos[i].count);
			for (int k = 0; k < combos[i].count; k++)
				FUZZ_CHECK(combos[i].keysyms[k] != 0, "keysym 0 in combo %zu", i);
		}
	} else {
		FUZZ_CHECK(err.message[0], "failed without a message");
		if (utf8_valid(text, strlen(text), NULL))
			FUZZ_CHECK(utf8_valid(err.message, strlen(err.message), NULL),
				   "message: %s", err.message);
	}
	/* One name, as hold_key and the aliases see it. */
	(void)vnc_keysym_from_name(text);
	free(text);
	return 0;
}
