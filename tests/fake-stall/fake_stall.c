/* SPDX-License-Identifier: MIT */
/* A helper that hangs: takes any arguments, does nothing and waits until
 * it is killed. Bound over a tool the sandbox runs (fuse-overlayfs, which
 * the init runs through the dynamic loader, so it must be a program, not
 * a script), it is the tool that never answers. */
#include <unistd.h>

int main(void)
{
	for (;;)
		pause();
}
