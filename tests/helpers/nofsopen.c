/*
 * nofsopen: run a program where fsopen(2) is refused (EPERM) and
 * mount(2) is not, as some container seccomp profiles do: the sandbox
 * then hides each private directory with a tmpfs of its own
 * (tests/integration/run-private.sh).
 *
 *   nofsopen PROGRAM [ARG...]
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

int
main(int argc, char *argv[])
{
	scmp_filter_ctx	ctx;

	if (argc < 2) {
		fprintf(stderr, "usage: nofsopen PROGRAM [ARG...]\n");
		return 2;
	}
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return 1;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fsopen),
	    0) != 0 || seccomp_load(ctx) != 0) {
		fprintf(stderr, "nofsopen: seccomp\n");
		return 1;
	}
	seccomp_release(ctx);
	execv(argv[1], argv + 1);
	fprintf(stderr, "nofsopen: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
