/* SPDX-License-Identifier: MIT */
/* The video's bitrate follows the worst loss receivers report: down on
 * heavy loss, up on none, held between, within its bounds; the loss is
 * read from webrtcbin's statistics as get-stats gives them. */
#include "test.h"

#include "webrtc/bitrate.h"

#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>

static void heavy_loss_lowers_light_loss_holds_none_raises(void)
{
	ASSERT_EQ(webrtc_bitrate_next(1000000, 0.25), 750000);
	ASSERT_EQ(webrtc_bitrate_next(1000000, 0.05), 1000000);
	ASSERT_EQ(webrtc_bitrate_next(1000000, 0.0), 1050000);
	/* Nobody reported: nothing to go by. */
	ASSERT_EQ(webrtc_bitrate_next(1000000, -1), 1000000);
}

static void bounded_both_ways(void)
{
	int bitrate = WEBRTC_BITRATE_START;
	for (int i = 0; i < 100; i++)
		bitrate = webrtc_bitrate_next(bitrate, 0.5);
	ASSERT_EQ(bitrate, WEBRTC_BITRATE_MIN);
	for (int i = 0; i < 200; i++)
		bitrate = webrtc_bitrate_next(bitrate, 0.0);
	ASSERT_EQ(bitrate, WEBRTC_BITRATE_MAX);
}

/* Adds an entry of type to stats, as get-stats' reply holds them. */
static void add_entry(GstStructure *stats, const char *id, GstWebRTCStatsType type,
		      double fraction_lost)
{
	GstStructure *entry = gst_structure_new("stats", "type", GST_TYPE_WEBRTC_STATS_TYPE, type,
						"fraction-lost", G_TYPE_DOUBLE, fraction_lost,
						NULL);
	gst_structure_set(stats, id, GST_TYPE_STRUCTURE, entry, NULL); /* a copy */
	gst_structure_free(entry);
}

static void worst_loss_is_read_from_remote_inbound_entries_only(void)
{
	GstStructure *stats = gst_structure_new_empty("application/x-webrtc-stats");
	ASSERT(webrtc_bitrate_worst_loss(stats) < 0);
	add_entry(stats, "a", GST_WEBRTC_STATS_REMOTE_INBOUND_RTP, 0.04);
	add_entry(stats, "b", GST_WEBRTC_STATS_REMOTE_INBOUND_RTP, 0.12);
	/* Another kind of entry with a larger number counts for nothing. */
	add_entry(stats, "c", GST_WEBRTC_STATS_CODEC, 0.9);
	double worst = webrtc_bitrate_worst_loss(stats);
	ASSERT(worst > 0.119 && worst < 0.121);
	gst_structure_free(stats);
}

int main(void)
{
	gst_init(NULL, NULL);
	RUN_TEST(heavy_loss_lowers_light_loss_holds_none_raises);
	RUN_TEST(bounded_both_ways);
	RUN_TEST(worst_loss_is_read_from_remote_inbound_entries_only);
	TEST_EXIT();
}
