/* SPDX-License-Identifier: MIT */
/* Every packet an encode's payloader sends carries the playout-delay
 * header extension with both delays 0, whether it comes alone or in a
 * list, and keeps its payload; the offer names the extension under the
 * same id. Packets pass through an identity element with the probe, as
 * they would through a payloader's source pad. */
#include "test.h"

#include "webrtc/encode.h"
#include "webrtc/playout.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/rtp/gstrtpbuffer.h>

#include <string.h>

static const guint8 payload[] = "a payload";

static GstBuffer *packet(guint16 sequence)
{
	GstBuffer *buffer = gst_rtp_buffer_new_allocate(sizeof(payload), 0, 0);
	GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
	gst_rtp_buffer_map(buffer, GST_MAP_WRITE, &rtp);
	gst_rtp_buffer_set_payload_type(&rtp, 96);
	gst_rtp_buffer_set_seq(&rtp, sequence);
	memcpy(gst_rtp_buffer_get_payload(&rtp), payload, sizeof(payload));
	gst_rtp_buffer_unmap(&rtp);
	return buffer;
}

/* The packet's extension and payload are as they should be. */
static void check_packet(GstBuffer *buffer, guint16 sequence)
{
	GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
	ASSERT(gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp));
	gpointer data = NULL;
	guint size = 0;
	ASSERT(gst_rtp_buffer_get_extension_onebyte_header(&rtp, WEBRTC_PLAYOUT_DELAY_ID, 0, &data,
							   &size));
	ASSERT_EQ(size, 3u);
	const guint8 *delays = data;
	ASSERT_EQ(delays[0] | delays[1] | delays[2], 0);
	ASSERT_EQ(gst_rtp_buffer_get_seq(&rtp), sequence);
	ASSERT_EQ(gst_rtp_buffer_get_payload_len(&rtp), sizeof(payload));
	ASSERT(memcmp(gst_rtp_buffer_get_payload(&rtp), payload, sizeof(payload)) == 0);
	gst_rtp_buffer_unmap(&rtp);
}

static void every_packet_carries_zero_delays(void)
{
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=in caps=application/x-rtp,media=video,clock-rate=90000,"
		"encoding-name=VP8,payload=96 ! identity name=pay ! appsink name=out sync=false",
		NULL);
	ASSERT(pipeline != NULL);
	GstElement *in = gst_bin_get_by_name(GST_BIN(pipeline), "in");
	GstElement *pay = gst_bin_get_by_name(GST_BIN(pipeline), "pay");
	GstElement *out = gst_bin_get_by_name(GST_BIN(pipeline), "out");
	webrtc_playout_delay_add(pay);
	ASSERT(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);

	ASSERT_EQ(gst_app_src_push_buffer(GST_APP_SRC(in), packet(1)), GST_FLOW_OK);
	GstBufferList *list = gst_buffer_list_new();
	gst_buffer_list_add(list, packet(2));
	gst_buffer_list_add(list, packet(3));
	ASSERT_EQ(gst_app_src_push_buffer_list(GST_APP_SRC(in), list), GST_FLOW_OK);
	for (guint16 sequence = 1; sequence <= 3; sequence++) {
		GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 5 * GST_SECOND);
		ASSERT(sample != NULL);
		if (!sample)
			break;
		check_packet(gst_sample_get_buffer(sample), sequence);
		gst_sample_unref(sample);
	}

	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(in);
	gst_object_unref(pay);
	gst_object_unref(out);
	gst_object_unref(pipeline);
}

static void the_offer_names_the_extension_under_its_id(void)
{
	for (int codec = 0; codec < WEBRTC_CODECS; codec++) {
		GstCaps *offer = webrtc_rtp_caps((enum webrtc_codec)codec, true);
		const char *uri = gst_structure_get_string(
			gst_caps_get_structure(offer, 0),
			"extmap-" G_STRINGIFY(WEBRTC_PLAYOUT_DELAY_ID));
		ASSERT(uri != NULL && strcmp(uri, WEBRTC_PLAYOUT_DELAY_URI) == 0);
		gst_caps_unref(offer);
		/* The payloader's own caps say nothing of it. */
		GstCaps *own = webrtc_rtp_caps((enum webrtc_codec)codec, false);
		ASSERT(!gst_structure_has_field(gst_caps_get_structure(own, 0),
						"extmap-" G_STRINGIFY(WEBRTC_PLAYOUT_DELAY_ID)));
		gst_caps_unref(own);
	}
}

int main(void)
{
	gst_init(NULL, NULL);
	RUN_TEST(every_packet_carries_zero_delays);
	RUN_TEST(the_offer_names_the_extension_under_its_id);
	TEST_EXIT();
}
