/* SPDX-License-Identifier: MIT */
#include "kernel/message.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>

static const char delimiter[] = "<IDS|MSG>";

static void hex(const unsigned char *bytes, size_t count, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < count; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * count] = '\0';
}

static bool random_bytes(unsigned char *out, size_t count, struct error *err)
{
	size_t done = 0;
	while (done < count) {
		ssize_t n = getrandom(out + done, count - done, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_set(err, errno, "getrandom");
		done += (size_t)n;
	}
	return true;
}

bool kernel_key_generate(struct kernel_key *key, struct error *err)
{
	unsigned char bytes[KERNEL_KEY_LENGTH / 2];
	if (!random_bytes(bytes, sizeof(bytes), err))
		return false;
	hex(bytes, sizeof(bytes), key->text);
	return true;
}

/* OpenSSL's HMAC, looked up once: the lookup costs more than signing a
 * small message. */
static EVP_MAC *hmac;
static pthread_once_t hmac_once = PTHREAD_ONCE_INIT;

static void fetch_hmac(void)
{
	hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

/* HMAC-SHA256 over the four JSON frames, in hex. */
static bool sign(const struct kernel_key *key, const void *const *frames, const size_t *lengths,
		 char out[65])
{
	bool ok = false;
	pthread_once(&hmac_once, fetch_hmac);
	EVP_MAC_CTX *ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	unsigned char digest[32];
	size_t digest_length = 0;
	if (!ctx || !EVP_MAC_init(ctx, (const unsigned char *)key->text, strlen(key->text), params))
		goto out;
	for (int i = 0; i < 4; i++)
		if (!EVP_MAC_update(ctx, frames[i], lengths[i]))
			goto out;
	if (!EVP_MAC_final(ctx, digest, &digest_length, sizeof(digest)) || digest_length != 32)
		goto out;
	hex(digest, sizeof(digest), out);
	ok = true;
out:
	EVP_MAC_CTX_free(ctx);
	return ok;
}

static bool new_uuid(char out[37], struct error *err)
{
	unsigned char b[16];
	if (!random_bytes(b, sizeof(b), err))
		return false;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	char h[33];
	hex(b, sizeof(b), h);
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
	return true;
}

static void iso_date(char out[40])
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct tm tm;
	gmtime_r(&tv.tv_sec, &tm);
	char day[24];
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 40, "%s.%06ldZ", day, (long)tv.tv_usec);
}

static cJSON *header_for(const char *id, const char *session, const char *msg_type)
{
	char date[40];
	iso_date(date);
	cJSON *h = cJSON_CreateObject();
	if (!h || !cJSON_AddStringToObject(h, "msg_id", id) ||
	    !cJSON_AddStringToObject(h, "session", session) ||
	    !cJSON_AddStringToObject(h, "username", "lizard-bridge") ||
	    !cJSON_AddStringToObject(h, "date", date) ||
	    !cJSON_AddStringToObject(h, "msg_type", msg_type) ||
	    !cJSON_AddStringToObject(h, "version", "5.3")) {
		cJSON_Delete(h);
		return NULL;
	}
	return h;
}

bool kernel_outgoing_build(struct kernel_outgoing *out, const struct kernel_key *key,
			   const char *session, const char *msg_type, cJSON *content,
			   struct error *err)
{
	memset(out, 0, sizeof(*out));
	bool ok = true;
	if (!new_uuid(out->msg_id, err)) {
		cJSON_Delete(content);
		return false;
	}
	cJSON *parts[4] = { header_for(out->msg_id, session, msg_type), cJSON_CreateObject(),
			    cJSON_CreateObject(), content };
	for (int i = 0; i < 4; i++) {
		out->frames[i] = parts[i] ? cJSON_PrintUnformatted(parts[i]) : NULL;
		if (!out->frames[i])
			ok = false;
		else
			out->lengths[i] = strlen(out->frames[i]);
		cJSON_Delete(parts[i]);
	}
	if (!ok) {
		kernel_outgoing_finish(out);
		return error_set(err, ENOMEM, "building a %s message", msg_type);
	}
	if (!sign(key, (const void *const *)out->frames, out->lengths, out->signature)) {
		kernel_outgoing_finish(out);
		return error_set(err, 0, "signing a %s message: OpenSSL's HMAC failed", msg_type);
	}
	return true;
}

void kernel_outgoing_finish(struct kernel_outgoing *out)
{
	for (int i = 0; i < 4; i++) {
		free(out->frames[i]);
		out->frames[i] = NULL;
	}
}

void kernel_message_free(struct kernel_message *m)
{
	cJSON_Delete(m->header);
	cJSON_Delete(m->parent_header);
	cJSON_Delete(m->metadata);
	cJSON_Delete(m->content);
	memset(m, 0, sizeof(*m));
}

static const char *string_in(const cJSON *object, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(object, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

enum kernel_frames_verdict kernel_message_parse(const struct kernel_key *key,
						const void *const *frames, const size_t *lengths,
						size_t count, struct kernel_message *m)
{
	memset(m, 0, sizeof(*m));
	size_t at = 0;
	while (at < count && !(lengths[at] == sizeof(delimiter) - 1 &&
			       memcmp(frames[at], delimiter, lengths[at]) == 0))
		at++;
	/* The delimiter, the signature and four JSON frames. */
	if (count - at < 6)
		return KERNEL_FRAMES_MALFORMED;
	const void *const *json = frames + at + 2;
	const size_t *json_lengths = lengths + at + 2;
	char expected[65];
	if (!sign(key, json, json_lengths, expected))
		return KERNEL_FRAMES_MALFORMED;
	/* The length is no secret; the bytes are compared in constant time. */
	if (lengths[at + 1] != 64 || CRYPTO_memcmp(frames[at + 1], expected, 64) != 0)
		return KERNEL_FRAMES_FORGED;

	cJSON *parts[4];
	for (int i = 0; i < 4; i++)
		parts[i] = cJSON_ParseWithLength(json[i], json_lengths[i]);
	m->header = parts[0];
	m->parent_header = parts[1];
	m->metadata = parts[2];
	m->content = parts[3];
	for (int i = 0; i < 4; i++)
		if (!cJSON_IsObject(parts[i])) {
			kernel_message_free(m);
			return KERNEL_FRAMES_MALFORMED;
		}
	m->msg_type = string_in(m->header, "msg_type");
	m->msg_id = string_in(m->header, "msg_id");
	m->parent_id = string_in(m->parent_header, "msg_id");
	if (!m->parent_id)
		m->parent_id = "";
	if (!m->msg_type || !m->msg_id) {
		kernel_message_free(m);
		return KERNEL_FRAMES_MALFORMED;
	}
	return KERNEL_FRAMES_OK;
}
