/* SPDX-License-Identifier: MIT */
#include "test.h"

#include "util/base64.h"
#include "util/blob.h"

/* One character at a time, straight from RFC 4648, to check the fast one. */
static void reference_encode(const unsigned char *data, size_t len, char *out)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)data[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
	}
	out[o] = '\0';
}

static void rfc4648_vectors(void)
{
	static const char *cases[][2] = {
		{ "", "" },
		{ "f", "Zg==" },
		{ "fo", "Zm8=" },
		{ "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob *text = base64_encode((const unsigned char *)cases[i][0],
						  strlen(cases[i][0]));
		ASSERT_STR_EQ(text->data, cases[i][1]);
		blob_unref(text);
	}
}

static void every_length_and_byte_matches_the_reference(void)
{
	unsigned char data[600];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 151 + (i >> 3));
	char expected[801], actual[801];
	for (size_t len = 0; len <= sizeof(data); len++) {
		reference_encode(data, len, expected);
		size_t n = base64_encode_into(actual, data, len);
		ASSERT_EQ(n, base64_encoded_len(len));
		actual[n] = '\0';
		ASSERT_STR_EQ(actual, expected);
	}
}

static void blobs_live_until_the_last_reference(void)
{
	struct blob *blob = blob_create(3);
	ASSERT(blob != NULL);
	memcpy(blob->data, "abc", 3);
	ASSERT_EQ(blob->data[3], '\0');
	struct blob *again = blob_ref(blob);
	ASSERT(again == blob);
	blob_unref(blob);
	ASSERT_STR_EQ(again->data, "abc"); /* AddressSanitizer catches it if freed */
	blob_unref(again);
	blob_unref(NULL);
}

/* Decoding undoes encoding for every length and byte, with and without
 * padding, and refuses what is not base64. */
static void decode_undoes_encode(void)
{
	unsigned char data[300], back[300 + 3];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 97 + 13);
	for (size_t len = 0; len <= sizeof(data); len++) {
		struct blob *text = base64_encode(data, len);
		ASSERT(text != NULL);
		size_t out_len = 0;
		ASSERT(base64_decode(text->data, text->len, back, &out_len));
		ASSERT_EQ(out_len, len);
		ASSERT(memcmp(back, data, len) == 0);
		size_t unpadded = text->len;
		while (unpadded && text->data[unpadded - 1] == '=')
			unpadded--;
		ASSERT(base64_decode(text->data, unpadded, back, &out_len));
		ASSERT_EQ(out_len, len);
		blob_unref(text);
	}
	size_t out_len;
	ASSERT(!base64_decode("Zm9v YmFy", 9, back, &out_len));
	ASSERT(!base64_decode("Zm9vY", 5, back, &out_len));
	ASSERT(!base64_decode("Zm9-", 4, back, &out_len));
}

int main(void)
{
	RUN_TEST(rfc4648_vectors);
	RUN_TEST(decode_undoes_encode);
	RUN_TEST(every_length_and_byte_matches_the_reference);
	RUN_TEST(blobs_live_until_the_last_reference);
	TEST_EXIT();
}
