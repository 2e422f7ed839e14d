/* SPDX-License-Identifier: MIT */
/* The browser viewer's wire format: what the hub (hub.c, its updates made
 * in encode.c) and the viewer socket (bridge/server/viewer_ws.c) send a
 * page, and what a page may send back (read in viewer_ws.c and
 * control.c). This is the reference for both sides; wire.js is its one
 * reader of updates (the page's, the tests' and the bench's). Constants
 * only, no functions.
 *
 * The socket: a WebSocket on /viewer with subprotocol "lizard-viewer".
 * Text messages are JSON objects, binary messages are updates.
 *
 * Page to server, text:
 *   {"session":"s-...","token":"<32 hex digits>"}   the first message, within
 *       BRIDGE_SERVER_VIEWER_JOIN_MS (bridge/server/server.h) of opening,
 *       else the socket is closed; a wrong token gets an "error" and the
 *       socket closes.
 *   {"type":"ack"}                  one per update painted: the hub sends
 *       another only while at most one is unacknowledged and it holds under
 *       1 MiB, so a slow page gets fewer, merged updates. Updates from
 *       before the latest "hello" are not acknowledged (the hub counts
 *       afresh there).
 *   {"type":"quality","quality":"exact"|"fast"}   "fast": large
 *       photographic rectangles may come as JPEG, sent again exactly once
 *       still; anything else means exact.
 *   Control viewers only (the server drops these from view-only ones):
 *   {"type":"pointer","x":X,"y":Y,"buttons":B}  0 <= X, Y < 16384, 0 <= B
 *       < 128: bit 1 left, 2 middle, 4 right, 8/16 wheel up/down, 32/64
 *       wheel left/right (a click is a press and a release).
 *   {"type":"key","keysym":K,"down":true|false,"code":"KeyA"}  0 < K <
 *       0x2000000 (X keysyms; Unicode as 0x1000000 + code point); code, the
 *       physical key (up to 32 bytes), makes a release go out with the
 *       keysym its press had.
 *   {"type":"release"}              let go of every key and button held.
 *   {"type":"clipboard","text":"..."} at most BRIDGE_VIEWER_MAX_CLIPBOARD
 *       (hub.h) bytes of UTF-8, for the desktop's clipboard.
 *   Video (WebRTC; bridge/viewer/video.h), when the hello said "video":
 *   {"type":"webrtc-start","codecs":["VP8","H264"]}  the codecs the page
 *       decodes, best first: the server makes a peer in the first it has
 *       and sends its offer. From then on the viewer gets no updates.
 *   {"type":"webrtc-answer","sdp":"..."}   the page's answer.
 *   {"type":"webrtc-candidate","candidate":"candidate:...","mline":0}
 *       one of the page's ICE candidates ("" when it has no more).
  *   {"type":"webrtc-stop"}   the page goes back to updates: the next one
 *       repaints the canvas whole.
 *   {"type":"webrtc-keyframe"}   connected but no picture yet (a still
 *       screen sends nothing, so a lost first frame is not noticed): the
 *       newest frame again, as a keyframe.
 *   A message is at most VIEWER_WIRE_MAX_MESSAGE bytes before joining,
 *   VIEWER_WIRE_MAX_JOINED_MESSAGE from a view-only viewer (an answer
 *   fits); a control viewer's may take the server's message limit (its
 *   clipboard text, escaped).
 *
 * Server to page, text:
 *   {"type":"hello","width":W,"height":H,"role":"control"|"view",
 *    "video":true}  first, and again whenever the screen's size changes:
 *       the canvas is W x H and unknown; the updates after it repaint it
 *       whole. "video" is there when the server offers WebRTC; with it,
 *       "ice_servers":[{"urls":["stun:..."|"turn:..."|"turns:..."],
 *       "username":"...","credential":"..."}] when the link's start_stream
 *       gave some: the page's RTCPeerConnection uses them (none: host
 *       candidates only, which is all one host or a LAN needs).
 *   {"type":"webrtc-offer","sdp":"...","codec":"VP8"|"H264"}  the
 *       server's offer, after a webrtc-start.
 *   {"type":"webrtc-candidate","candidate":"candidate:...","mline":0}
 *   {"type":"webrtc-failed","message":"..."}  the video did not start or
 *       broke; the viewer gets updates again (repainted whole).
 *   {"type":"status","state":"paused"|"connected"}   the session was
 *       paused or resumed (sent after the hello).
 *   {"type":"status","state":"ended"}   the session ended; the socket
 *       closes.
 *   {"type":"error","message":"..."}  the link is wrong, revoked or the
 *       server is out of memory; the socket closes.
 *   {"type":"clipboard","text":"..."} or {"type":"clipboard","too_large":N}
 *       text copied on the desktop (over BRIDGE_VIEWER_MAX_CLIPBOARD bytes:
 *       only its length N), to control viewers only.
 *
 * Server to page, binary: an update, operations one after another to the
 * message's end, applied in order. Numbers are big endian; u8, u16 and
 * u32 unsigned, s16 two's complement. Each operation starts with its kind
 * (u8); all but POINTER_MOVED go on with a rectangle, x, y, width, height
 * (u16 each; s16 for POINTER's x and y), in canvas pixels:
 *   COPY (1), 13 bytes: kind, src x, src y, width, height, then dest x,
 *       dest y (u16): the canvas's pixels at (src x, src y) are copied to
 *       (dest x, dest y), as the canvas is after the operations before.
 *   PNG (2) and JPEG (3), 13 + length bytes: kind, x, y, width, height,
 *       length (u32), then length bytes: a PNG or JPEG file of width x
 *       height, painted at (x, y). JPEG only for a page that asked "fast".
 *   FILL (4), 12 bytes: kind, x, y, width, height, red, green, blue (u8):
 *       the rectangle in one colour.
 *   POINTER (5), 9 + width * height * 4 bytes: kind, x, y (s16), width,
 *       height, then the pointer's image, RGBA row by row, alpha 0
 *       (transparent) or 255: its top left goes at (x, y) and may stick out
 *       of the screen. Width or height 0: no pointer is shown.
 *   POINTER_MOVED (6), 5 bytes: kind, x, y (s16): the pointer's top left
 *       moved there, its image unchanged.
 *   INDEXED (7), 15 + colours * 3 + length bytes: kind, x, y, width,
 *       height, depth (u8: 1, 2, 4 or 8 bits an index), colours - 1 (u8),
 *       the palette (colours times red, green, blue, u8 each), length
 *       (u32), then length bytes of zlib data (RFC 1950) that inflate to
 *       height rows of ceil(width * depth / 8) bytes: indices into the
 *       palette, the first pixel in the most significant bits, each row
 *       starting on a byte, no filter bytes (a PNG's rows without its
 *       container): an image of at most 256 colours, painted at (x, y).
 * The hub sends the copies first, then the changed rectangles (FILL, PNG,
 * JPEG, INDEXED), then at most one POINTER or POINTER_MOVED. The pointer
 * is never in the pixels: the page draws it over its canvas after each
 * update and takes it off before the next, so copies never carry it. */
#ifndef LIZARD_BRIDGE_VIEWER_WIRE_H
#define LIZARD_BRIDGE_VIEWER_WIRE_H

#define VIEWER_WIRE_PATH "/viewer"
#define VIEWER_WIRE_SUBPROTOCOL "lizard-viewer"

/* Text messages' "type", page to server. */
#define VIEWER_WIRE_TYPE_ACK "ack"
#define VIEWER_WIRE_TYPE_QUALITY "quality"
#define VIEWER_WIRE_TYPE_POINTER "pointer"
#define VIEWER_WIRE_TYPE_KEY "key"
#define VIEWER_WIRE_TYPE_RELEASE "release"
#define VIEWER_WIRE_TYPE_CLIPBOARD "clipboard" /* both ways */
#define VIEWER_WIRE_TYPE_WEBRTC_START "webrtc-start"
#define VIEWER_WIRE_TYPE_WEBRTC_ANSWER "webrtc-answer"
#define VIEWER_WIRE_TYPE_WEBRTC_CANDIDATE "webrtc-candidate" /* both ways */
#define VIEWER_WIRE_TYPE_WEBRTC_STOP "webrtc-stop"
#define VIEWER_WIRE_TYPE_WEBRTC_KEYFRAME "webrtc-keyframe"
#define VIEWER_WIRE_TYPE_WEBRTC_PREFIX "webrtc-"
/* Server to page. */
#define VIEWER_WIRE_TYPE_HELLO "hello"
#define VIEWER_WIRE_ICE_SERVERS "ice_servers"
#define VIEWER_WIRE_TYPE_STATUS "status"
#define VIEWER_WIRE_TYPE_ERROR "error"
#define VIEWER_WIRE_TYPE_WEBRTC_OFFER "webrtc-offer"
#define VIEWER_WIRE_TYPE_WEBRTC_FAILED "webrtc-failed"
/* Their values: "quality", "role" (hello), "state" (status). */
#define VIEWER_WIRE_QUALITY_EXACT "exact"
#define VIEWER_WIRE_QUALITY_FAST "fast"
#define VIEWER_WIRE_ROLE_CONTROL "control"
#define VIEWER_WIRE_ROLE_VIEW "view"
#define VIEWER_WIRE_STATE_CONNECTED "connected"
#define VIEWER_WIRE_STATE_PAUSED "paused"
#define VIEWER_WIRE_STATE_ENDED "ended"

/* Bounds of what a page sends. */
enum {
	VIEWER_WIRE_MAX_MESSAGE = 4096,         /* bytes, before joining */
	VIEWER_WIRE_MAX_JOINED_MESSAGE = 16384, /* bytes, from a view-only viewer */
	VIEWER_WIRE_COORDINATE_LIMIT = 16384,   /* pointer x and y are below */
	VIEWER_WIRE_BUTTONS_LIMIT = 128,        /* the button mask is below */
	VIEWER_WIRE_KEYSYM_LIMIT = 0x2000000,   /* a keysym is above 0 and below */
	VIEWER_WIRE_MAX_KEY_CODE = 32,          /* bytes of "code" */
};

/* An update's operations: their kind, the first byte of each. */
enum viewer_wire_op {
	VIEWER_WIRE_OP_COPY = 1,
	VIEWER_WIRE_OP_PNG = 2,
	VIEWER_WIRE_OP_JPEG = 3,
	VIEWER_WIRE_OP_FILL = 4,
	VIEWER_WIRE_OP_POINTER = 5,
	VIEWER_WIRE_OP_POINTER_MOVED = 6,
	VIEWER_WIRE_OP_INDEXED = 7,
};

/* Their parts, in bytes, in the order they come. */
enum {
	VIEWER_WIRE_RECT_HEAD_SIZE = 9,      /* kind, x, y, width, height */
	VIEWER_WIRE_COPY_DEST_SIZE = 4,      /* COPY: dest x, dest y */
	VIEWER_WIRE_LENGTH_SIZE = 4,         /* PNG, JPEG, INDEXED: the data's length */
	VIEWER_WIRE_FILL_COLOUR_SIZE = 3,    /* FILL: red, green, blue */
	VIEWER_WIRE_POINTER_PIXEL_SIZE = 4,  /* POINTER: R, G, B, A per pixel */
	VIEWER_WIRE_POINTER_MOVED_SIZE = 5,  /* POINTER_MOVED: kind, x, y; whole */
	VIEWER_WIRE_INDEXED_FORMAT_SIZE = 2, /* INDEXED: depth, colours - 1 */
	VIEWER_WIRE_PALETTE_ENTRY_SIZE = 3,  /* INDEXED: red, green, blue */
	VIEWER_WIRE_INDEXED_MAX_COLOURS = 256,
};

/* Whole operations of a fixed size, and the part before PNG and JPEG data. */
enum {
	VIEWER_WIRE_COPY_SIZE = VIEWER_WIRE_RECT_HEAD_SIZE + VIEWER_WIRE_COPY_DEST_SIZE,
	VIEWER_WIRE_FILL_SIZE = VIEWER_WIRE_RECT_HEAD_SIZE + VIEWER_WIRE_FILL_COLOUR_SIZE,
	VIEWER_WIRE_IMAGE_HEAD_SIZE = VIEWER_WIRE_RECT_HEAD_SIZE + VIEWER_WIRE_LENGTH_SIZE,
};

#endif
