/*
 * launcher/agent/: the coding agents' own formats, read and written on
 * the host before the sandbox starts: Claude Code's wrapper line around a
 * command and the two files it needs from outside (agent.c), and the
 * PreToolUse hook that wraps an agent's Bash command in pisbx-sh
 * (hook.c).
 */
#ifndef PISBX_LAUNCHER_AGENT_H
#define PISBX_LAUNCHER_AGENT_H

#include <sys/types.h>

#include <stddef.h>

/* agent.c */
/*
 * What Claude Code's wrapper around a command needs from outside the
 * sandbox: its shell snapshot (read-only) and its cwd file (writable).
 */
struct agent_files {
	char		*snapshot;	/* absolute, or NULL */
	char		*cwd_file;	/* absolute, or NULL */
	int		 cwd_created;	/* we made it: removed if still empty */
};
/*
 * Recognise Claude Code's wrapper in line: a snapshot exactly in
 * claude_dir/shell-snapshots, a cwd file exactly in tmp_dir (either
 * directory may be NULL: nothing recognised there).  -1 on no memory.
 */
int	 agent_line_parse(const char *line, const char *claude_dir,
	    const char *tmp_dir, struct agent_files *);
/* Claude Code's config dir ($CLAUDE_CONFIG_DIR, ~/.claude), or NULL. */
const char *agent_claude_dir(char *buf, size_t len);
/* Claude Code's temp dir ($CLAUDE_CODE_TMPDIR, $TMPDIR, ...), or NULL. */
const char *agent_tmp_dir(void);
/*
 * Check both files on the host (creating the cwd file empty when it does
 * not exist); drop what cannot be granted safely, saying why.  The paths
 * become real paths.  -1 on no memory.
 */
int	 agent_files_prepare(struct agent_files *, uid_t);
/* After the run: remove a cwd file we made that is still empty; free. */
void	 agent_files_done(struct agent_files *);
void	 agent_files_free(struct agent_files *);

/* hook.c */
/*
 * pisbx-run --hook AGENT: answer a PreToolUse hook (JSON on stdin) with
 * the Bash command wrapped in pisbx-sh from exe_dir.  Returns the exit
 * status (0, or 2: the command is blocked, stderr says why).
 */
int	 hook_main(const char *agent, const char *exe_dir);

#endif
