/* SPDX-License-Identifier: MIT */
#include "bridge/tools/catalog.h"

#include "bridge/tools/code.h"
#include "bridge/tools/common.h"
#include "bridge/tools/computer.h"
#include "bridge/tools/desktop.h"
#include "bridge/tools/exec.h"
#include "bridge/tools/files.h"
#include "bridge/tools/input.h"
#include "bridge/tools/ports.h"
#include "bridge/tools/screen.h"
#include "bridge/tools/sessions.h"
#include "bridge/tools/snapshots.h"
#include "bridge/tools/templates.h"
#include "bridge/tools/tool_schemas.h" /* generated from bridge/tools/schemas */
#include "bridge/tools/volumes.h"

#include "bridge/session/registry.h"
#include "mcp/server.h"
#include "util/log.h"

#include <cjson/cJSON.h>
#include <string.h>

/* Clients list the tools in this order: looking, acting, the desktop, the
 * computer tool, sessions, commands and files, volumes. */
static const struct bridge_tool catalog[] = {
	/* screen.h */
	{
		.name = "screenshot",
		.title = "Take a screenshot",
		.description = "Capture the screen as an image with the mouse pointer drawn in. "
			       "Its coordinates are the ones every other tool takes (large screens "
			       "come scaled; the text says how). region [x1, y1, x2, y2] zooms "
			       "into part of the screen at full resolution. settle waits until the "
			       "screen stops changing first.",
		.input_schema = tools_schema_screenshot_input,
		.handler = tools_screenshot,
		.read_only = true,
		.quick = true,
	},
	{
		.name = "cursor_position",
		.title = "Mouse pointer position",
		.description = "Where the mouse pointer is, as JSON {\"x\":..,\"y\":..} in "
			       "screenshot coordinates.",
		.input_schema = tools_schema_cursor_position_input,
		.output_schema = tools_schema_cursor_position_output,
		.handler = tools_cursor_position,
		.read_only = true,
		.quick = true,
	},
	{
		.name = "screen_size",
		.title = "Screen size",
		.description = "The screen's size in screenshot coordinates as JSON "
			       "{\"width\":..,\"height\":..} (plus native_width and native_height "
			       "when screenshots are scaled). Valid coordinates are 0..width-1 and "
			       "0..height-1.",
		.input_schema = tools_schema_screen_size_input,
		.output_schema = tools_schema_screen_size_output,
		.handler = tools_screen_size,
		.read_only = true,
		.quick = true,
	},
	/* input.h */
	{
		.name = "click",
		.title = "Click",
		.description = "Click a mouse button at (x, y), or where the pointer is when x and "
			       "y are left out. count 2 double-clicks, 3 triple-clicks; modifiers "
			       "are held during the click (\"ctrl\" for ctrl+click).",
		.input_schema = tools_schema_click_input,
		.handler = tools_click,
		.ordered = true,
	},
	{
		.name = "move_mouse",
		.title = "Move the mouse",
		.description = "Move the mouse pointer to (x, y) without clicking, e.g. to hover. "
			       "Buttons held with mouse_down stay held (that drags).",
		.input_schema = tools_schema_move_mouse_input,
		.handler = tools_move_mouse,
		.ordered = true,
	},
	{
		.name = "mouse_down",
		.title = "Press a mouse button",
		.description = "Press and keep holding a mouse button at (x, y) or where the "
			       "pointer is, until mouse_up. For custom drags; drag does the whole "
			       "gesture in one call.",
		.input_schema = tools_schema_mouse_down_input,
		.handler = tools_mouse_down,
		.ordered = true,
	},
	{
		.name = "mouse_up",
		.title = "Release a mouse button",
		.description = "Release a mouse button held by mouse_down, at (x, y) or where the "
			       "pointer is.",
		.input_schema = tools_schema_mouse_up_input,
		.handler = tools_mouse_up,
		.ordered = true,
	},
	{
		.name = "drag",
		.title = "Drag",
		.description = "Press a mouse button at the first point, move through the others "
			       "in small steps, release at the last: moves windows, selects text, "
			       "drags and drops. Give path [[x, y], ...] (at most 1000 points) or "
			       "from [x, y] and to [x, y]. The pointer moves in steps of 16 px, 8 "
			       "ms apart, at most 2000 steps (longer paths take longer strides), "
			       "so a drag takes at most about 16 s.",
		.input_schema = tools_schema_drag_input,
		.handler = tools_drag,
		.ordered = true,
	},
	{
		.name = "scroll",
		.title = "Scroll",
		.description = "Turn the mouse wheel at (x, y), or where the pointer is: direction "
			       "up, down, left or right, amount in wheel clicks (default 3; one "
			       "click is about three lines of text).",
		.input_schema = tools_schema_scroll_input,
		.handler = tools_scroll,
		.ordered = true,
	},
	{
		.name = "type",
		.title = "Type text",
		.description = "Type text into the focused window, character by character. Any "
			       "Unicode text works; \\n presses Return and \\t presses Tab. To "
			       "press shortcuts or special keys use press.",
		.input_schema = tools_schema_type_input,
		.handler = tools_type,
		.ordered = true,
	},
	{
		.name = "press",
		.title = "Press keys",
		.description = "Press keys or shortcuts. Join keys held together with '+' "
			       "(ctrl+shift+t) and separate presses with spaces (\"ctrl+a "
			       "Delete\"). Names are X keysyms in any case (Return, Tab, Escape, "
			       "BackSpace, F5, Page_Down, Home, a, A) or aliases: enter, esc, "
			       "ctrl, alt, shift, super/cmd/win, pgup, pgdn, del, backspace, up, "
			       "down, left, right.",
		.input_schema = tools_schema_press_input,
		.handler = tools_press,
		.ordered = true,
	},
	{
		.name = "hold_key",
		.title = "Hold keys",
		.description = "Hold keys down for duration_ms, then release them in reverse "
			       "order, e.g. shift while something else happens, or an arrow key to "
			       "move in a game.",
		.input_schema = tools_schema_hold_key_input,
		.handler = tools_hold_key,
		.ordered = true,
	},
	{
		.name = "wait",
		.title = "Wait",
		.description = "Wait for the screen to settle (the default: no change for "
			       "quiet_ms, 300 by default, giving up after timeout_ms, 5000 by "
			       "default), or a fixed ms. Says how long it waited and how often the "
			       "screen changed.",
		.input_schema = tools_schema_wait_input,
		.output_schema = tools_schema_wait_output,
		.handler = tools_wait,
		.ordered = true,
	},
	/* desktop.h */
	{
		.name = "open_url",
		.title = "Open a URL",
		.description = "Show a web page in Chromium on the desktop: the first call starts "
			       "the browser, later calls open new tabs. Local desktops only.",
		.input_schema = tools_schema_open_url_input,
		.handler = tools_open_url,
		.ordered = true,
	},
	{
		.name = "launch",
		.title = "Launch a program",
		.description = "Start a program on the desktop with /bin/sh -c, e.g. \"xterm\" or "
			       "\"gedit notes.txt\", and return without waiting for it. It runs in "
			       "the session's sandbox as its user, in HOME, and ends with the "
			       "session. For a command whose output you need, use exec. Local "
			       "desktops only.",
		.input_schema = tools_schema_launch_input,
		.handler = tools_launch,
		.ordered = true,
	},
	{
		.name = "clipboard_get",
		.title = "Read the clipboard",
		.description = "The text on the desktop's clipboard (what ctrl+c copied), as "
			       "{\"text\":...}.",
		.input_schema = tools_schema_clipboard_get_input,
		.output_schema = tools_schema_clipboard_get_output,
		.handler = tools_clipboard_get,
		.read_only = true,
	},
	{
		.name = "clipboard_set",
		.title = "Set the clipboard",
		.description = "Put text on the desktop's clipboard, ready to paste with ctrl+v. "
			       "Faster than type for long text.",
		.input_schema = tools_schema_clipboard_set_input,
		.handler = tools_clipboard_set,
		.ordered = true,
	},
	/* computer.h */
	{
		.name = "computer",
		.title = "Computer (Anthropic computer-use schema)",
		.description = "Use the mouse and keyboard and take screenshots, with the action "
			       "schema of Anthropic's computer-use tool. Actions: screenshot, zoom "
			       "(region), cursor_position, mouse_move, left_click, right_click, "
			       "middle_click, double_click, triple_click (coordinate optional; "
			       "text holds modifier keys such as \"shift\"), left_click_drag "
			       "(start_coordinate to coordinate), left_mouse_down, left_mouse_up, "
			       "scroll (scroll_direction, scroll_amount), key (text like "
			       "\"ctrl+s\"), hold_key (text, duration in seconds), type (text), "
			       "wait (duration in seconds). Actions return a screenshot of the "
			       "settled screen unless screenshot is false.",
		.input_schema = tools_schema_computer_input,
		.handler = tools_computer,
		.ordered = true,
	},
	/* sessions.h */
	{
		.name = "create_session",
		.title = "Create a desktop session",
		.description = "Start a new desktop: template \"desktop\" (the default: X server "
			       "with a window manager, Chromium for open_url) or \"bare\" (X "
			       "server only), or attach to a VNC server with vnc "
			       "\"vnc://[:PASSWORD@]HOST[:PORT]\". A local session is a sandbox "
			       "(Linux namespaces on a shared kernel, not a VM) with exec and file "
			       "tools; network false leaves it loopback only, envs sets variables "
			       "for all its programs. The session ends after timeout_ms (default "
			       "300000; 0 never). Returns its id for the session argument of the "
			       "other tools.",
		.input_schema = tools_schema_create_session_input,
		.output_schema = tools_schema_create_session_output,
		.handler = tools_create_session,
		.sessionless = true,
	},
	{
		.name = "list_sessions",
		.title = "List sessions",
		.description = "Every session with its id, template, size, state (starting, ready, "
			       "reconnecting, failed, ended), deadline and metadata, as "
			       "{\"sessions\":[...]}.",
		.input_schema = tools_schema_list_sessions_input,
		.output_schema = tools_schema_list_sessions_output,
		.handler = tools_list_sessions,
		.read_only = true,
		.quick = true,
		.sessionless = true,
	},
	{
		.name = "session_info",
		.title = "Describe a session",
		.description = "One session's id, template, size, state, deadline and metadata.",
		.input_schema = tools_schema_session_info_input,
		.output_schema = tools_schema_session_info_output,
		.handler = tools_session_info,
		.read_only = true,
		.quick = true,
	},
	{
		.name = "set_timeout",
		.title = "Set a session's timeout",
		.description = "End the session timeout_ms from now (1000..2147483647). Calls do "
			       "not extend the deadline; this does.",
		.input_schema = tools_schema_set_timeout_input,
		.output_schema = tools_schema_set_timeout_output,
		.handler = tools_set_timeout,
		.quick = true,
	},
	{
		.name = "pause_session",
		.title = "Pause a session",
		.description = "Freeze every process of a local session (its cgroup), keeping "
			       "memory and processes. While paused, screenshot shows the last "
			       "frame, input and exec fail, and the timeout does not run.",
		.input_schema = tools_schema_pause_session_input,
		.output_schema = tools_schema_pause_session_output,
		.handler = tools_pause_session,
		.quick = true,
	},
	{
		.name = "resume_session",
		.title = "Resume a session",
		.description = "Let a paused session's processes continue where they were.",
		.input_schema = tools_schema_resume_session_input,
		.output_schema = tools_schema_resume_session_output,
		.handler = tools_resume_session,
		.quick = true,
	},
	{
		.name = "start_stream",
		.title = "Share the desktop in a browser",
		.description = "Links for people to watch or help: url lets them use mouse and "
			       "keyboard, view_only_url only shows the screen; novnc_url and "
			       "novnc_view_only_url are the same in noVNC, the fallback viewer. "
			       "Calling it again replaces all links.",
		.input_schema = tools_schema_start_stream_input,
		.output_schema = tools_schema_start_stream_output,
		.handler = tools_start_stream,
		.quick = true,
	},
	{
		.name = "stop_stream",
		.title = "Stop sharing",
		.description = "Revoke the session's viewer links and disconnect their viewers.",
		.input_schema = tools_schema_stop_stream_input,
		.handler = tools_stop_stream,
		.quick = true,
	},
	{
		.name = "kill_session",
		.title = "End a session",
		.description = "End a session now: calls on it fail and its desktop's processes "
			       "are stopped.",
		.input_schema = tools_schema_kill_session_input,
		.handler = tools_kill_session,
		.quick = true,
	},
	/* exec.h */
	{
		.name = "exec",
		.title = "Run a command",
		.description = "Run a command in the session's sandbox and return its stdout, "
			       "stderr and exit code (a non-zero exit is a normal result). command "
			       "runs with /bin/sh -c; argv runs a program directly. Output beyond "
			       "1 MiB per stream is cut, keeping the end. Output streams as "
			       "progress notifications when the request has a progressToken. At "
			       "timeout_ms (default 60000) the command is killed with everything "
			       "it started; programs it leaves in the background end with it too "
			       "(use launch for those). Local sessions only.",
		.input_schema = tools_schema_exec_input,
		.output_schema = tools_schema_exec_output,
		.handler = tools_exec,
	},
	/* files.h */
	{
		.name = "read_file",
		.title = "Read a file",
		.description = "Read a file in the session's sandbox: UTF-8 text comes back as "
			       "text, anything else as base64 data, with the file's size. At most "
			       "3 MiB per call; use offset and length for larger files. Files the "
			       "kernel reports as empty (most of /proc and /sys) are read to their "
			       "end, and their size is where the read ended (offset + length). "
			       "Local sessions only.",
		.input_schema = tools_schema_read_file_input,
		.output_schema = tools_schema_read_file_output,
		.handler = tools_read_file,
		.read_only = true,
	},
	{
		.name = "write_file",
		.title = "Write a file",
		.description = "Write a file in the session's sandbox, creating its parent "
			       "directories: text (UTF-8) or data (base64, written exactly), with "
			       "mode (octal, default \"644\"). It replaces the file. A request "
			       "must fit the 4 MiB message limit: about 3 MB of text or base64 "
			       "data. Local sessions only.",
		.input_schema = tools_schema_write_file_input,
		.output_schema = tools_schema_write_file_output,
		.handler = tools_write_file,
	},
	{
		.name = "list_files",
		.title = "List a directory",
		.description = "The entries of a directory in the session's sandbox (default HOME) "
			       "with type, size and mtime (seconds since 1970), at most 10000. "
			       "Local sessions only.",
		.input_schema = tools_schema_list_files_input,
		.output_schema = tools_schema_list_files_output,
		.handler = tools_list_files,
		.read_only = true,
	},
	/* code.h */
	{
		.name = "run_code",
		.title = "Run code",
		.description = "Run code in a session's sandbox. Python (the default) runs in a "
			       "Jupyter kernel whose variables survive between calls: the "
			       "session's default context, or context from create_code_context. "
			       "language bash or javascript runs each call as a fresh process. "
			       "Returns results (the last expression's value and displayed "
			       "outputs such as charts, in text, html, png, ... forms; images also "
			       "as image content), logs (stdout, stderr), error (name, value, "
			       "traceback) and execution_count. At timeout_ms Python is "
			       "interrupted; a kernel that does not stop or that dies is restarted "
			       "and the result says its state is gone. Output streams as progress "
			       "when asked.",
		.input_schema = tools_schema_run_code_input,
		.output_schema = tools_schema_run_code_output,
		.handler = tools_run_code,
	},
	{
		.name = "create_code_context",
		.title = "Create a code context",
		.description = "A new context for run_code, isolated from the others: python (a "
			       "kernel of its own, running when this returns), bash or javascript, "
			       "in cwd (default HOME). At most 8 per session.",
		.input_schema = tools_schema_create_code_context_input,
		.output_schema = tools_schema_create_code_context_output,
		.handler = tools_create_code_context,
	},
	{
		.name = "list_code_contexts",
		.title = "List code contexts",
		.description = "A session's code contexts, which is the default, and whether each "
			       "is busy, as {\"contexts\":[...]}.",
		.input_schema = tools_schema_list_code_contexts_input,
		.output_schema = tools_schema_list_code_contexts_output,
		.handler = tools_list_code_contexts,
		.read_only = true,
		.quick = true,
	},
	{
		.name = "restart_code_context",
		.title = "Restart a code context",
		.description = "Fresh state in the same context: a Python context's kernel is "
			       "started anew (after the call running in it, if any).",
		.input_schema = tools_schema_restart_code_context_input,
		.output_schema = tools_schema_restart_code_context_output,
		.handler = tools_restart_code_context,
	},
	{
		.name = "remove_code_context",
		.title = "Remove a code context",
		.description = "Stop a context's kernel and forget it; a call running in it ends.",
		.input_schema = tools_schema_remove_code_context_input,
		.handler = tools_remove_code_context,
		.quick = true,
	},
	/* volumes.h */
	{
		.name = "create_volume",
		.title = "Create a volume",
		.description = "Create an empty persistent volume that create_session with volume "
			       "NAME mounts read-write at /workspace, and that outlives sessions "
			       "and daemon restarts. It holds at most size (default 10G where the "
			       "daemon can make disks; writes past it fail with 'No space left on "
			       "device' inside), or is a plain directory without a limit with size "
			       "\"unlimited\".",
		.input_schema = tools_schema_create_volume_input,
		.output_schema = tools_schema_create_volume_output,
		.handler = tools_create_volume,
		/* Long: it makes a filesystem (mke2fs) for a sized volume. */
		.sessionless = true,
	},
	{
		.name = "list_volumes",
		.title = "List volumes",
		.description = "Every volume with its size on disk and the session using it (null "
			       "when free).",
		.input_schema = tools_schema_list_volumes_input,
		.output_schema = tools_schema_list_volumes_output,
		.handler = tools_list_volumes,
		.read_only = true,
		.sessionless = true,
	},
	{
		.name = "delete_volume",
		.title = "Delete a volume",
		.description = "Remove a volume and its files. A volume a session uses cannot be "
			       "deleted.",
		.input_schema = tools_schema_delete_volume_input,
		.output_schema = tools_schema_delete_volume_output,
		.handler = tools_delete_volume,
		.sessionless = true,
	},
	/* ports.h */
	{
		.name = "expose_port",
		.title = "Reach a service inside a session",
		.description = "Let a service that listens on port inside a local session be "
			       "reached through the daemon, even one bound to the sandbox's own "
			       "127.0.0.1: url opens it in a browser (HTTP and WebSocket), host is "
			       "its host name, and scripts send token in the header named by "
			       "header. Requests without the token get 401. The token is the "
			       "session's; it ends with the session or unexpose_port.",
		.input_schema = tools_schema_expose_port_input,
		.output_schema = tools_schema_expose_port_output,
		.handler = tools_expose_port,
		.quick = true,
	},
	{
		.name = "get_host",
		.title = "A port's host name",
		.description = "The host name <port>-<session>.localhost:<daemon port> under which "
			       "an exposed port is reached (expose_port opens it and gives the "
			       "token).",
		.input_schema = tools_schema_get_host_input,
		.output_schema = tools_schema_get_host_output,
		.handler = tools_get_host,
		.read_only = true,
		.quick = true,
	},
	{
		.name = "unexpose_port",
		.title = "Stop exposing a port",
		.description = "Take back an exposed port: its connections close and requests to "
			       "it get 404.",
		.input_schema = tools_schema_unexpose_port_input,
		.output_schema = tools_schema_unexpose_port_output,
		.handler = tools_unexpose_port,
		.quick = true,
	},
	/* snapshots.h */
	{
		.name = "snapshot_session",
		.title = "Snapshot a session",
		.description =
			"Keep a local session's files as they are now: its whole root (what "
			"it installed or changed), HOME, /tmp and /workspace (not a volume), "
			"with its template, screen, envs and metadata. Its processes are "
			"frozen for the copy and then go on; memory and running programs are "
			"not kept (pause_session keeps those). create_session "
			"template=<snapshot> starts a copy.",
		.input_schema = tools_schema_snapshot_session_input,
		.output_schema = tools_schema_snapshot_session_output,
		.handler = tools_snapshot_session,
	},
	{
		.name = "fork_session",
		.title = "Fork a session",
		.description = "Snapshot a local session and start a new session from the snapshot "
			       "in one call; both then go on independently. A session with a volume "
			       "cannot be forked.",
		.input_schema = tools_schema_fork_session_input,
		.output_schema = tools_schema_fork_session_output,
		.handler = tools_fork_session,
	},
	{
		.name = "list_snapshots",
		.title = "List snapshots",
		.description = "Every snapshot with the session and template it came from and the "
			       "disk space it takes, and the total.",
		.input_schema = tools_schema_list_snapshots_input,
		.output_schema = tools_schema_list_snapshots_output,
		.handler = tools_list_snapshots,
		.read_only = true,
		.sessionless = true,
	},
	{
		.name = "delete_snapshot",
		.title = "Delete a snapshot",
		.description = "Remove a snapshot and its files. Sessions restored from it keep "
			       "running: they hold copies.",
		.input_schema = tools_schema_delete_snapshot_input,
		.output_schema = tools_schema_delete_snapshot_output,
		.handler = tools_delete_snapshot,
		.sessionless = true,
	},
	/* templates.h */
	{
		.name = "build_template",
		.title = "Build a template",
		.description = "Build a template for create_session: from base (host, the default, "
			       "or a template built before), write files and run commands as root "
			       "with the network on (apt-get install works), and keep the result. "
			       "Its log streams as progress; a failed build leaves nothing. start "
			       "says what runs in its sessions (base, bare or desktop).",
		.input_schema = tools_schema_build_template_input,
		.output_schema = tools_schema_build_template_output,
		.handler = tools_build_template,
		.sessionless = true,
	},
	{
		.name = "list_templates",
		.title = "List templates",
		.description = "The built-in templates and those built with build_template, with "
			       "their base, what starts in them and their disk space.",
		.input_schema = tools_schema_list_templates_input,
		.output_schema = tools_schema_list_templates_output,
		.handler = tools_list_templates,
		.read_only = true,
		.sessionless = true,
	},
	{
		.name = "delete_template",
		.title = "Delete a template",
		.description = "Remove a built template; refused while a session or a snapshot "
			       "uses it.",
		.input_schema = tools_schema_delete_template_input,
		.output_schema = tools_schema_delete_template_output,
		.handler = tools_delete_template,
		.sessionless = true,
	},
};

const struct bridge_tool *bridge_tools_catalog(size_t *count)
{
	*count = sizeof(catalog) / sizeof(catalog[0]);
	return catalog;
}

static const struct bridge_tool *find_tool(const char *name)
{
	for (size_t i = 0; i < sizeof(catalog) / sizeof(catalog[0]); i++)
		if (strcmp(catalog[i].name, name) == 0)
			return &catalog[i];
	return NULL;
}

/* What the MCP server hands each call of a tool: the tool and the context
 * it was registered with. Kept for the life of the process (the server
 * keeps pointers to them); registering the same tool with the same
 * context again reuses its binding. */
struct binding {
	const struct bridge_tool *tool;
	struct bridge_tools_context *context;
};
#define MAX_BINDINGS 128
static struct binding bindings[MAX_BINDINGS];
static size_t binding_count;

static struct binding *binding_for(const struct bridge_tool *tool,
				   struct bridge_tools_context *context)
{
	for (size_t i = 0; i < binding_count; i++)
		if (bindings[i].tool == tool && bindings[i].context == context)
			return &bindings[i];
	if (binding_count == MAX_BINDINGS)
		return NULL;
	bindings[binding_count] = (struct binding){ tool, context };
	return &bindings[binding_count++];
}

/* Every call runs through here, so the sessions it took are released
 * however it returns, and an answer that breaks the tool's word (data
 * without an outputSchema, which clients would not check, or none with
 * one, which the official SDK rejects) is a failed call, not a reply a
 * client trips over. */
static void dispatch(struct mcp_call *call, const cJSON *args, void *userdata)
{
	const struct binding *binding = userdata;
	const struct bridge_tool *tool = binding->tool;
	tool->handler(call, args, binding->context);
	bool data = tools_call_end();
	bool declared = tool->output_schema != NULL;
	if (mcp_call_failed(call) || data == declared)
		return;
	const char *what = data ? "answered with data but declares no outputSchema"
				: "declares an outputSchema but answered without data";
	log_error("tool %s %s", tool->name, what);
	mcp_call_fail(call, "internal error: tool %s %s", tool->name, what);
}

bool bridge_tools_register_table(struct mcp_server *server, struct bridge_tools_context *context,
				 const struct bridge_tool *tools, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct binding *binding = binding_for(&tools[i], context);
		if (!binding) {
			log_error("more than %d tool registrations", MAX_BINDINGS);
			return false;
		}
		struct mcp_tool tool = {
			.name = tools[i].name,
			.title = tools[i].title,
			.description = tools[i].description,
			.input_schema = tools[i].input_schema,
			.output_schema = tools[i].output_schema,
			.handler = dispatch,
			.read_only = tools[i].read_only,
			.ordered = tools[i].ordered,
			.quick = tools[i].quick,
		};
		if (!mcp_server_add_tool(server, &tool, binding))
			return false;
	}
	return true;
}

bool bridge_tools_register(struct mcp_server *server, struct bridge_tools_context *context)
{
	return bridge_tools_register_table(server, context, catalog,
					   sizeof(catalog) / sizeof(catalog[0]));
}

bool bridge_tools_group(const char *tool, const cJSON *args, char *group, size_t size,
			void *userdata)
{
	/* Tools about no one session count against none. */
	const struct bridge_tool *entry = find_tool(tool);
	if (entry && entry->sessionless)
		return false;
	struct bridge_tools_context *c = userdata;
	return bridge_registry_lane(c->registry, tools_string(args, "session", NULL), group, size);
}
