/*
 * pisbx-run --hook claude-code|codex: a PreToolUse hook that rewrites the
 * model's Bash command so it runs inside pisbx, for users who want only
 * the model's commands sandboxed (not the agent's hooks and MCP servers).
 *
 * The agent runs the hook with one JSON object on stdin:
 *
 *   {"hook_event_name":"PreToolUse","tool_name":"Bash",
 *    "tool_input":{"command":"npm test","description":"...",...},...}
 *
 * and reads one JSON object from its stdout.  Both agents document the
 * same answer (Claude Code: https://code.claude.com/docs/en/hooks,
 * "PreToolUse decision control": hookSpecificOutput.updatedInput
 * replaces the whole tool input and takes effect with permissionDecision
 * "allow"; Codex: codex-rs/hooks, PreToolUse output, where updatedInput
 * requires permissionDecision "allow"):
 *
 *   {"hookSpecificOutput":{"hookEventName":"PreToolUse",
 *    "permissionDecision":"allow","permissionDecisionReason":"...",
 *    "updatedInput":{...the tool input, "command":"'/bin/pisbx-sh' -c '...'"}}}
 *
 * "allow" skips the agent's own prompt for this call (deny and ask rules
 * still apply): the command runs in the sandbox, as with Claude Code's
 * own autoAllowBashIfSandboxed.  Anything we cannot wrap is blocked: exit
 * status 2 with the reason on stderr blocks the call in both agents,
 * whereas any other failure of a hook lets the original command run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/log.h"
#include "common/shell.h"
#include "launcher/launcher.h"
#include "launcher/agent/agent.h"

#define HOOK_INPUT_MAX	(4 * 1024 * 1024)
#define HOOK_BLOCK	2

static char	*hook_quote(const char *);
static char	*hook_read(size_t *);

/* s as one word for sh (malloc'ed), or NULL. */
static char *
hook_quote(const char *s)
{
	char	*out;

	if ((out = malloc(SHELL_QUOTE_SIZE(strlen(s)))) == NULL)
		return NULL;
	shell_quote(out, s);
	return out;
}

/* All of stdin, at most HOOK_INPUT_MAX bytes. */
static char *
hook_read(size_t *lenp)
{
	char	*buf = NULL, *nb;
	size_t	 len = 0, cap = 0;
	ssize_t	 r;

	for (;;) {
		if (len == cap) {
			if (cap >= HOOK_INPUT_MAX) {
				errno = EFBIG;
				goto fail;
			}
			cap = cap == 0 ? 8192 : cap * 2;
			if ((nb = realloc(buf, cap)) == NULL)
				goto fail;
			buf = nb;
		}
		r = read(STDIN_FILENO, buf + len, cap - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			goto fail;
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*lenp = len;
	return buf;
fail:
	free(buf);
	return NULL;
}

int
hook_main(const char *agent, const char *exe_dir)
{
	json_t		*in = NULL, *input, *out = NULL, *updated = NULL;
	json_error_t	 jerr;
	const char	*event, *tool, *cmd;
	char		*buf = NULL, *sh = NULL, *qsh = NULL, *qcmd = NULL;
	char		*wrapped = NULL, *text = NULL;
	size_t		 len;
	int		 rc = HOOK_BLOCK;

	if (strcmp(agent, "claude-code") != 0 && strcmp(agent, "codex") != 0) {
		log_warnx("--hook: claude-code or codex, not %s", agent);
		return EXIT_USAGE;
	}
	if ((buf = hook_read(&len)) == NULL) {
		log_warn("--hook: cannot read the hook's input; the command "
		    "was not run");
		goto done;
	}
	/* Without JSON_ALLOW_NUL: a NUL would cut the command we wrap. */
	if ((in = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL || !json_is_object(in)) {
		log_warnx("--hook: the hook's input is not a JSON object (%s); "
		    "the command was not run", in == NULL ? jerr.text :
		    "wrong type");
		goto done;
	}
	event = json_string_value(json_object_get(in, "hook_event_name"));
	tool = json_string_value(json_object_get(in, "tool_name"));
	if (event == NULL || strcmp(event, "PreToolUse") != 0 ||
	    tool == NULL || strcmp(tool, "Bash") != 0) {
		/* Not ours to wrap: let the agent go on as if we were not. */
		log_info("--hook: nothing to wrap in %s %s (configure the "
		    "hook for PreToolUse, matcher \"Bash\")",
		    event != NULL ? event : "(no event)",
		    tool != NULL ? tool : "(no tool)");
		rc = 0;
		goto done;
	}
	input = json_object_get(in, "tool_input");
	if (!json_is_object(input) ||
	    (cmd = json_string_value(json_object_get(input, "command"))) ==
	    NULL) {
		log_warnx("--hook: no tool_input.command string to wrap; the "
		    "command was not run");
		goto done;
	}
	if (asprintf(&sh, "%s/pisbx-sh", exe_dir) == -1)
		goto nomem;
	if (access(sh, X_OK) == -1) {
		log_warn("--hook: %s (install pisbx-sh beside pisbx-run); "
		    "the command was not run", sh);
		goto done;
	}
	/*
	 * Always wrapped, even when it looks wrapped already: the model
	 * writes the command, and "pisbx-sh -c 'x'; curl evil" must not
	 * pass as sandboxed.
	 */
	if ((qsh = hook_quote(sh)) == NULL || (qcmd = hook_quote(cmd)) ==
	    NULL || asprintf(&wrapped, "%s -c %s", qsh, qcmd) == -1)
		goto nomem;
	if ((updated = json_deep_copy(input)) == NULL ||
	    json_object_set_new(updated, "command", json_string(wrapped)) ==
	    -1)
		goto nomem;
	out = json_pack("{s:{s:s, s:s, s:s, s:O}}", "hookSpecificOutput",
	    "hookEventName", "PreToolUse",
	    "permissionDecision", "allow",
	    "permissionDecisionReason", "runs in the pisbx sandbox",
	    "updatedInput", updated);
	if (out == NULL || (text = json_dumps(out, JSON_COMPACT)) == NULL)
		goto nomem;
	if (printf("%s\n", text) < 0 || fflush(stdout) == EOF) {
		log_warn("--hook: write");
		goto done;
	}
	rc = 0;
	goto done;
nomem:
	log_warnx("--hook: out of memory; the command was not run");
done:
	json_decref(in);
	json_decref(out);
	json_decref(updated);
	free(buf);
	free(sh);
	free(qsh);
	free(qcmd);
	free(wrapped);
	free(text);
	return rc;
}
