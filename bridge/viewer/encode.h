/* SPDX-License-Identifier: MIT */
/* Making a viewer's update: what a job of the hub needs painted, copied
 * out of the framebuffer while it is locked, then encoded as the binary
 * message the page applies (the format is in encode.c). */
#ifndef LIZARD_BRIDGE_VIEWER_ENCODE_H
#define LIZARD_BRIDGE_VIEWER_ENCODE_H

#include <stdbool.h>
#include <stddef.h>

struct bridge_viewer_message;
struct bridge_viewers;
struct job;
struct vnc_framebuffer_view;

/* A message of len bytes with headroom free before them, one reference. */
struct bridge_viewer_message *bridge_viewer_message_new(size_t headroom, bool text, size_t len);
/* Under the framebuffer's lock: copies the job's damage and pointer shape
 * (or, for a rectangle of one colour, only its colour). False when out of
 * memory. */
bool bridge_viewer_snapshot(struct job *job, const struct vnc_framebuffer_view *view);
/* Encodes every damage rectangle of the jobs that have their own (not
 * same_as another), spread over several threads when that pays. */
void bridge_viewer_encode_images(struct job *jobs, int count);
/* The job's message from its encoded parts; NULL when out of memory. */
struct bridge_viewer_message *bridge_viewer_encode(struct bridge_viewers *hub, struct job *job);
/* Lets go of the pixels the snapshot copied. */
void bridge_viewer_free_pixels(struct job *job);

#endif
