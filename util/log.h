/* SPDX-License-Identifier: MIT */
/* Leveled logging to stderr, safe from any thread. stdout belongs to the
 * MCP stdio transport, so nothing here ever writes there. */
#ifndef LIZARD_UTIL_LOG_H
#define LIZARD_UTIL_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Reads LIZARD_LOG (error, warn, info, debug); info when unset. */
void log_init_from_env(void);
void log_set_level(enum log_level level);
int log_enabled(enum log_level level);

__attribute__((format(printf, 2, 3))) void log_write(enum log_level level, const char *fmt, ...);

#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_write(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_write(LOG_DEBUG, __VA_ARGS__)

#endif
