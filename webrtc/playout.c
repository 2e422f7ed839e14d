/* SPDX-License-Identifier: MIT */
/* The playout-delay RTP header extension on every packet of an encode:
 * a minimum and a maximum delay of 0, which tells the receiver to show
 * each frame as soon as it is decoded. Without it a browser sizes its
 * jitter buffer from how much frame sizes vary, and screen content varies
 * a lot (a scroll, then nothing, then a window), so Chromium held frames
 * back by a few hundred milliseconds. GStreamer 1.22 has no element for
 * this extension; its payload is three bytes (two 12-bit delays, in tens
 * of milliseconds), so a probe on the payloader writes it. The offer
 * names it (WEBRTC_PLAYOUT_DELAY_ID); a browser that does not answer with
 * it ignores an extension it did not agree to. */
#include "webrtc/playout.h"

#include <gst/rtp/gstrtpbuffer.h>

/* Both delays 0: min (12 bits), max (12 bits). */
static const guint8 zero_delay[3] = { 0, 0, 0 };

/* Adds the extension to one packet; a packet that cannot take it (not
 * RTP, or another kind of header extension already there) goes as it
 * is. */
static gboolean add_to_packet(GstBuffer **buffer, guint index, gpointer data)
{
	(void)index;
	(void)data;
	*buffer = gst_buffer_make_writable(*buffer);
	GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
	if (!gst_rtp_buffer_map(*buffer, GST_MAP_READWRITE, &rtp))
		return TRUE;
	gst_rtp_buffer_add_extension_onebyte_header(&rtp, WEBRTC_PLAYOUT_DELAY_ID, zero_delay,
						    sizeof(zero_delay));
	gst_rtp_buffer_unmap(&rtp);
	return TRUE;
}

static GstPadProbeReturn on_packets(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
	(void)pad;
	(void)data;
	if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
		GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
		add_to_packet(&buffer, 0, NULL);
		GST_PAD_PROBE_INFO_DATA(info) = buffer;
	} else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
		GstBufferList *list = gst_buffer_list_make_writable(
			GST_PAD_PROBE_INFO_BUFFER_LIST(info));
		gst_buffer_list_foreach(list, add_to_packet, NULL);
		GST_PAD_PROBE_INFO_DATA(info) = list;
	}
	return GST_PAD_PROBE_OK;
}

void webrtc_playout_delay_add(GstElement *payloader)
{
	GstPad *src = gst_element_get_static_pad(payloader, "src");
	if (!src)
		return;
	gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
			  on_packets, NULL, NULL);
	gst_object_unref(src);
}
