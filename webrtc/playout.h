/* SPDX-License-Identifier: MIT */
/* Zero playout delay for an encode's packets (playout.c says why).
 * Private to webrtc/. */
#ifndef LIZARD_WEBRTC_PLAYOUT_H
#define LIZARD_WEBRTC_PLAYOUT_H

#include <gst/gst.h>

/* The extension's id in the offer (one-byte headers take 1 to 14), and
 * its name. */
#define WEBRTC_PLAYOUT_DELAY_ID 12
#define WEBRTC_PLAYOUT_DELAY_URI "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"

/* Every packet leaving payloader from now on carries the extension. */
void webrtc_playout_delay_add(GstElement *payloader);

#endif
