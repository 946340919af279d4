/*
 * sigcount: count the SIGINTs and SIGCONTs a command gets, one by one
 * (a handler that counts each delivery: Python's or a shell's handler
 * may run once for two signals), for tests/integration/run-jobs.sh.
 * Writes "ready" in the working directory once set up, then:
 *
 *   sigcount int        after the first SIGINT (and a moment for a
 *                       second one), write the counts and die of SIGINT
 *   sigcount stop-self  stop itself with SIGTSTP, as vim and less do
 *                       on ^Z; write the counts once continued
 *   sigcount stop-key   wait for a SIGCONT (^Z typed at the terminal,
 *                       then "fg"); write the counts
 *
 * The counts go to ./result: "INT n CONT n".  Gives up after 30 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t	nint, ncont;

static void	count(int);
static void	pause_ms(long);

static void
count(int sig)
{
	if (sig == SIGINT)
		nint++;
	else
		ncont++;
}

static void
pause_ms(long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int
main(int argc, char *argv[])
{
	struct sigaction	 sa;
	FILE			*f;
	time_t			 start;
	int			 fd;

	if (argc != 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCONT, &sa, NULL);
	if ((fd = open("ready.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644)) ==
	    -1 || close(fd) == -1 || rename("ready.tmp", "ready") == -1) {
		perror("ready");
		return 1;
	}
	if (strcmp(argv[1], "stop-self") == 0)
		kill(getpid(), SIGTSTP);
	/*
	 * Running, not sleeping, when a signal comes: the first one is
	 * handled at once, so a second one sent a moment later is counted
	 * too instead of merging with the first while pending.
	 */
	start = time(NULL);
	while (nint == 0 && ncont == 0 && time(NULL) - start < 30)
		;
	pause_ms(1000);
	if ((f = fopen("result", "w")) == NULL)
		return 1;
	fprintf(f, "INT %d CONT %d\n", (int)nint, (int)ncont);
	fclose(f);
	if (strcmp(argv[1], "int") == 0) {
		signal(SIGINT, SIG_DFL);
		kill(getpid(), SIGINT);
	}
	return 0;
}
