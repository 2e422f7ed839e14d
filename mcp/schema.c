/* SPDX-License-Identifier: MIT */
#include "mcp/schema.h"

#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *type_of(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	if (cJSON_IsNumber(v))
		return v->valuedouble == floor(v->valuedouble) ? "an integer" : "a number";
	return "an unknown value";
}

static bool is_type(const cJSON *v, const char *type)
{
	if (strcmp(type, "string") == 0)
		return cJSON_IsString(v);
	if (strcmp(type, "boolean") == 0)
		return cJSON_IsBool(v);
	if (strcmp(type, "array") == 0)
		return cJSON_IsArray(v);
	if (strcmp(type, "object") == 0)
		return cJSON_IsObject(v);
	if (strcmp(type, "number") == 0)
		return cJSON_IsNumber(v) && isfinite(v->valuedouble);
	if (strcmp(type, "integer") == 0)
		return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
		       v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9.0e15;
	if (strcmp(type, "null") == 0)
		return cJSON_IsNull(v);
	return false;
}

static bool type_matches(const cJSON *schema_type, const cJSON *v, char *names, size_t size)
{
	names[0] = '\0';
	if (cJSON_IsString(schema_type)) {
		snprintf(names, size, "%s", schema_type->valuestring);
		return is_type(v, schema_type->valuestring);
	}
	const cJSON *t;
	size_t used = 0;
	cJSON_ArrayForEach(t, schema_type)
	{
		if (!cJSON_IsString(t))
			continue;
		if (is_type(v, t->valuestring))
			return true;
		int n = snprintf(names + used, size - used, "%s%s", used ? " or " : "",
				 t->valuestring);
		if (n > 0 && (size_t)n < size - used)
			used += (size_t)n;
	}
	return false;
}

static void list_enum(const cJSON *choices, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	const cJSON *c;
	cJSON_ArrayForEach(c, choices)
	{
		if (!cJSON_IsString(c))
			continue;
		int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "", c->valuestring);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
}

static bool check_value(const cJSON *schema, const cJSON *v, const char *path, struct error *err);

static bool check_array(const cJSON *schema, const cJSON *v, const char *path, struct error *err)
{
	int count = cJSON_GetArraySize(v);
	const cJSON *min = cJSON_GetObjectItemCaseSensitive(schema, "minItems");
	const cJSON *max = cJSON_GetObjectItemCaseSensitive(schema, "maxItems");
	if (cJSON_IsNumber(min) && count < min->valuedouble) {
		error_set(err, 0, "argument '%s' needs at least %d items, got %d", path,
			  (int)min->valuedouble, count);
		return false;
	}
	if (cJSON_IsNumber(max) && count > max->valuedouble) {
		error_set(err, 0, "argument '%s' takes at most %d items, got %d", path,
			  (int)max->valuedouble, count);
		return false;
	}
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(schema, "items");
	if (!cJSON_IsObject(items))
		return true;
	int index = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, v)
	{
		char item_path[128];
		snprintf(item_path, sizeof(item_path), "%s[%d]", path, index++);
		if (!check_value(items, item, item_path, err))
			return false;
	}
	return true;
}

static bool check_value(const cJSON *schema, const cJSON *v, const char *path, struct error *err)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(schema, "type");
	char names[96];
	if (type && !type_matches(type, v, names, sizeof(names))) {
		error_set(err, 0, "argument '%s' must be %s %s, got %s", path,
			  strchr("aeiou", names[0]) ? "an" : "a", names, type_of(v));
		return false;
	}

	const cJSON *choices = cJSON_GetObjectItemCaseSensitive(schema, "enum");
	if (cJSON_IsArray(choices) && cJSON_IsString(v)) {
		bool found = false;
		const cJSON *c;
		cJSON_ArrayForEach(c, choices)
		{
			if (cJSON_IsString(c) && strcmp(c->valuestring, v->valuestring) == 0)
				found = true;
		}
		if (!found) {
			char allowed[256];
			list_enum(choices, allowed, sizeof(allowed));
			char shown[65];
			error_set(err, 0, "argument '%s' is '%s'; it must be one of: %s", path,
				  utf8_excerpt(shown, sizeof(shown), v->valuestring), allowed);
			return false;
		}
	}

	if (cJSON_IsNumber(v)) {
		const cJSON *min = cJSON_GetObjectItemCaseSensitive(schema, "minimum");
		const cJSON *max = cJSON_GetObjectItemCaseSensitive(schema, "maximum");
		if ((cJSON_IsNumber(min) && v->valuedouble < min->valuedouble) ||
		    (cJSON_IsNumber(max) && v->valuedouble > max->valuedouble)) {
			char range[96];
			if (cJSON_IsNumber(min) && cJSON_IsNumber(max))
				snprintf(range, sizeof(range), "from %.15g to %.15g",
					 min->valuedouble, max->valuedouble);
			else if (cJSON_IsNumber(min))
				snprintf(range, sizeof(range), "at least %.15g", min->valuedouble);
			else
				snprintf(range, sizeof(range), "at most %.15g", max->valuedouble);
			error_set(err, 0, "argument '%s' is %.15g; it must be %s", path,
				  v->valuedouble, range);
			return false;
		}
	}

	if (cJSON_IsString(v)) {
		size_t len = strlen(v->valuestring);
		const cJSON *min = cJSON_GetObjectItemCaseSensitive(schema, "minLength");
		const cJSON *max = cJSON_GetObjectItemCaseSensitive(schema, "maxLength");
		if (cJSON_IsNumber(min) && (double)len < min->valuedouble) {
			error_set(err, 0, "argument '%s' must not be empty", path);
			return false;
		}
		/* Byte length is a safe upper bound for the character limit. */
		if (cJSON_IsNumber(max) && (double)len > max->valuedouble * 4) {
			error_set(err, 0, "argument '%s' is too long (at most %.0f characters)",
				  path, max->valuedouble);
			return false;
		}
	}

	if (cJSON_IsArray(v))
		return check_array(schema, v, path, err);
	return true;
}

static void list_properties(const cJSON *properties, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	const cJSON *p;
	cJSON_ArrayForEach(p, properties)
	{
		int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "", p->string);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(out, size, "no arguments");
}

bool mcp_schema_check_arguments(const cJSON *schema, const cJSON *args, const char *tool,
				struct error *err)
{
	if (!cJSON_IsObject(args)) {
		error_set(err, 0, "arguments of %s must be a JSON object", tool);
		return false;
	}
	const cJSON *properties = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	const cJSON *arg;
	cJSON_ArrayForEach(arg, args)
	{
		const cJSON *prop = cJSON_GetObjectItemCaseSensitive(properties, arg->string);
		if (!prop) {
			char known[512];
			list_properties(properties, known, sizeof(known));
			char shown[65];
			error_set(err, 0, "unknown argument '%s' for %s; it takes: %s",
				  utf8_excerpt(shown, sizeof(shown), arg->string), tool, known);
			return false;
		}
		if (!check_value(prop, arg, arg->string, err))
			return false;
	}
	const cJSON *required = cJSON_GetObjectItemCaseSensitive(schema, "required");
	const cJSON *name;
	cJSON_ArrayForEach(name, required)
	{
		if (cJSON_IsString(name) &&
		    !cJSON_GetObjectItemCaseSensitive(args, name->valuestring)) {
			error_set(err, 0, "missing required argument '%s' for %s",
				  name->valuestring, tool);
			return false;
		}
	}
	return true;
}
