/* SPDX-License-Identifier: MIT */
/* The encoders' bitrate, from what the receivers report. Debian 12's
 * GStreamer has no congestion controller for webrtcbin (that is in
 * gst-plugins-rs), so the stream reads each peer's statistics once a
 * second and steers by the worst loss a receiver reports in its RTCP
 * receiver reports: down by a quarter when over LOSS_HIGH is lost, up by
 * a twentieth when under LOSS_LOW, held between; within the bounds below.
 * One encode serves all of a codec's peers, so the worst one sets it: a
 * peer on a bad link costs the others sharpness, never a queue. */
#ifndef LIZARD_WEBRTC_BITRATE_H
#define LIZARD_WEBRTC_BITRATE_H

#include <gst/gst.h>

/* A desktop needs little: at 2 Mbit/s bench/viewer.mjs's full-screen
 * animation shows at SSIM 0.98 or better (at up to 8 Mbit/s, where the
 * bitrate used to climb with no loss, it took twice the bytes for 0.99
 * and arrived later), and a scrolling page stays well under it. So the
 * start is the most, and only loss moves it. */
#define WEBRTC_BITRATE_MIN 300000
#define WEBRTC_BITRATE_MAX 2000000
#define WEBRTC_BITRATE_START 2000000

/* The next bitrate (bits a second) after current, given the worst
 * fraction lost (0..1) reported since the last step, or a negative value
 * when no receiver reported anything (held then). */
int webrtc_bitrate_next(int current, double worst_loss);
/* The largest "fraction-lost" of the remote-inbound-rtp entries in
 * webrtcbin's statistics (get-stats' reply), or -1 when there is none. */
double webrtc_bitrate_worst_loss(const GstStructure *stats);

#endif
