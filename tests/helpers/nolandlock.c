/*
 * nolandlock: run a program as on a kernel without Landlock: every
 * landlock_* system call fails with ENOSYS, as on Linux before 5.13, and
 * the signal scoping of Landlock ABI 6 (Linux 6.12) is gone with it
 * (tests/integration/run-jobs.sh).
 *
 *   nolandlock PROGRAM [ARG...]
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

int
main(int argc, char *argv[])
{
	static const int	 calls[] = {
		SCMP_SYS(landlock_create_ruleset),
		SCMP_SYS(landlock_add_rule),
		SCMP_SYS(landlock_restrict_self),
	};
	scmp_filter_ctx		 ctx;
	size_t			 i;

	if (argc < 2) {
		fprintf(stderr, "usage: nolandlock PROGRAM [ARG...]\n");
		return 2;
	}
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return 1;
	for (i = 0; i < sizeof(calls) / sizeof(*calls); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), calls[i],
		    0) != 0) {
			fprintf(stderr, "nolandlock: seccomp rule\n");
			return 1;
		}
	if (seccomp_load(ctx) != 0) {
		fprintf(stderr, "nolandlock: seccomp_load failed\n");
		return 1;
	}
	seccomp_release(ctx);
	execv(argv[1], argv + 1);
	fprintf(stderr, "nolandlock: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
