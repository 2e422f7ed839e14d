/* SPDX-License-Identifier: MIT */
/* The cgroup types both the public header and the files of the cgroup
 * code need: which kernel interface, and how many hierarchies a session
 * spans. Types only. */
#ifndef LIZARD_SANDBOX_CGROUP_TYPES_H
#define LIZARD_SANDBOX_CGROUP_TYPES_H

enum sandbox_cgroup_version {
	SANDBOX_CGROUP_AUTO, /* v2 when it has the memory controller, else v1, else v2 */
	SANDBOX_CGROUP_V1,
	SANDBOX_CGROUP_V2,
};

/* Hierarchies a v1 session spans at most (cpu, cpuacct, memory, pids, freezer). */
#define SANDBOX_CGROUP_MAX_HIERARCHIES 5

#endif
