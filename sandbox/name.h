/* SPDX-License-Identifier: MIT */
/* Names used as directory names (volumes, cgroups, sessions): checked
 * where they come in, so that none can ever be "..", hidden, or hold a
 * '/'. */
#ifndef LIZARD_SANDBOX_NAME_H
#define LIZARD_SANDBOX_NAME_H

#include <stdbool.h>

#include "util/error.h"

#define SANDBOX_NAME_MAX 64

/* 1 to 64 of [A-Za-z0-9._-], starting with a letter or digit, without "..".
 * kind names the thing in the message ("volume"). err may be NULL. */
bool sandbox_name_check(const char *kind, const char *name, struct error *err);

#endif
