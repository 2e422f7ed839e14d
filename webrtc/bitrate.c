/* SPDX-License-Identifier: MIT */
#include "webrtc/bitrate.h"

#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>

#define LOSS_HIGH 0.10
#define LOSS_LOW 0.02

int webrtc_bitrate_next(int current, double worst_loss)
{
	double next = current;
	if (worst_loss > LOSS_HIGH)
		next = current * 0.75;
	else if (worst_loss >= 0 && worst_loss < LOSS_LOW)
		next = current * 1.05;
	if (next < WEBRTC_BITRATE_MIN)
		next = WEBRTC_BITRATE_MIN;
	if (next > WEBRTC_BITRATE_MAX)
		next = WEBRTC_BITRATE_MAX;
	return (int)next;
}

static gboolean worst_of(GQuark field, const GValue *value, gpointer data)
{
	(void)field;
	double *worst = data;
	if (!GST_VALUE_HOLDS_STRUCTURE(value))
		return TRUE;
	const GstStructure *entry = gst_value_get_structure(value);
	GstWebRTCStatsType type;
	double lost;
	if (gst_structure_get(entry, "type", GST_TYPE_WEBRTC_STATS_TYPE, &type, NULL) &&
	    type == GST_WEBRTC_STATS_REMOTE_INBOUND_RTP &&
	    gst_structure_get_double(entry, "fraction-lost", &lost) && lost > *worst)
		*worst = lost;
	return TRUE;
}

double webrtc_bitrate_worst_loss(const GstStructure *stats)
{
	double worst = -1;
	if (stats)
		gst_structure_foreach(stats, worst_of, &worst);
	return worst;
}
