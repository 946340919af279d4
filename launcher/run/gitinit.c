/*
 * The repository a command made at the project directory ("git init",
 * an agent's first command in a new project).  The guard allows a .git
 * there when there was none (guard_init_top); unlike a repository in a
 * directory the command made, this one is where the user's own git, the
 * shell prompt and the editor run next, unasked.  So at exit the parent
 * reads it like any repository made during the run (gitnew_check), and
 * when it holds more than git init and clone make -- a hook, a setting
 * that runs a program, a .git that is a file or a link -- it moves the
 * .git aside under a name git does not look for, and says where: no git
 * outside runs what the command planted, and nothing is deleted.
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/git/git.h"
#include "launcher/fs/fs.h"
#include "launcher/guard/guard.h"
#include "launcher/run/run.h"

#define GITINIT_TRIES	64	/* names tried for the held .git */

static int	gitinit_hold(int topfd, char *name, size_t len);

/* Before the sandbox starts: whether the guard will allow a git init. */
void
gitinit_start(const struct fs_plan *plan, struct gitinit *gi)
{
	gitnew_run_started();
	gi->ok = guard_init_top(plan, &gi->top);
	gi->path = plan->project;
}

/*
 * Move topfd's .git to a new name ".git.pisbx-held-XXXXXX" (written to
 * name), never over anything: the command could have prepared any
 * fixed name.  0, or -1 with errno.
 */
static int
gitinit_hold(int topfd, char *name, size_t len)
{
	static const char	 set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char		 r[6];
	size_t			 i;
	int			 t;

	for (t = 0; t < GITINIT_TRIES; t++) {
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		for (i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)set[r[i] % (sizeof(set) - 1)];
		(void)snprintf(name, len, ".git.pisbx-held-%.6s", r);
		if (renameat2(topfd, ".git", topfd, name,
		    RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/*
 * After the sandbox is gone (nothing of the command runs any more), and
 * before anything runs on the host in its place (host-IPC): read the
 * repository at the project directory, if the command made one, and
 * hold it aside when git would run anything of it.  Once.
 */
void
gitinit_finish(struct gitinit *gi)
{
	struct gitnew_found	 f;
	struct stat		 st;
	char			 name[64];
	int			 fd;

	if (!gi->ok || gi->path == NULL)
		return;
	gi->ok = 0;
	if ((fd = open(gi->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;
	if (fstat(fd, &st) == -1 || st.st_dev != gi->top.st_dev ||
	    st.st_ino != gi->top.st_ino ||
	    fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == -1)
		goto done;
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	if (f.n == 0)
		goto done;
	if (gitinit_hold(fd, name, sizeof(name)) == -1) {
		log_warn("the command made a git repository at the project "
		    "directory %s with more than git init makes, which git may "
		    "run: %s; it could not be moved aside: do not run git "
		    "there before you have looked at %s/.git", gi->path,
		    f.text, gi->path);
		goto done;
	}
	log_warnx("the command made a git repository at the project "
	    "directory %s with more than git init makes, which git may run: "
	    "%s; it was moved to %s/%s so that no git runs it: look at it, "
	    "and move it back (mv %s .git) only if it is safe", gi->path,
	    f.text, gi->path, name, name);
done:
	close(fd);
}
