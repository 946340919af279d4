/*
 * The command's seccomp filter is compiled at build time (launcher/
 * sandbox/seccomp_gen.c) and loaded as is (launcher/sandbox/
 * seccomp_load.c): each compiled program must be, instruction for
 * instruction, what the rules of launcher/sandbox/seccomp.c build with
 * this libseccomp, and the loader must pick the variant the config asks
 * for.
 */
#include <sys/mman.h>

#include <linux/filter.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "policy/policy.h"
#include "launcher/sandbox/sandbox.h"

/* The program libseccomp builds now for variant v, malloc'ed. */
static struct sock_filter *
build_now(enum seccomp_variant v, size_t *len)
{
	struct sock_filter	*prog;
	void			*ctx;
	off_t			 size;
	int			 fd;

	assert_non_null(ctx = seccomp_filter_build(v));
	assert_true((fd = memfd_create("test_seccomp", MFD_CLOEXEC)) != -1);
	assert_int_equal(seccomp_export_bpf(ctx, fd), 0);
	size = lseek(fd, 0, SEEK_END);
	assert_true(size > 0 && size % (off_t)sizeof(*prog) == 0);
	assert_non_null(prog = malloc((size_t)size));
	assert_int_equal(pread(fd, prog, (size_t)size, 0), size);
	close(fd);
	seccomp_release(ctx);
	*len = (size_t)size / sizeof(*prog);
	return prog;
}

static void
test_compiled_equals_rules(void **state)
{
	struct sock_filter	*now;
	size_t			 len, i;
	int			 v, w;

	(void)state;
	for (v = 0; v < SECCOMP_NVARIANTS; v++) {
		now = build_now(v, &len);
		assert_int_equal(seccomp_progs[v].len, len);
		for (i = 0; i < len; i++)
			if (memcmp(&seccomp_progs[v].insns[i], &now[i],
			    sizeof(now[i])) != 0)
				fail_msg("variant %d differs at instruction %zu",
				    v, i);
		free(now);
	}
	/*
	 * No two the same, but that without namespaces allowAllUnixSockets
	 * is the guard's to apply: its filter is the default's.
	 */
	for (v = 0; v < SECCOMP_NVARIANTS; v++)
		for (w = v + 1; w < SECCOMP_NVARIANTS; w++)
			if ((v & SECCOMP_NONS) && (v | SECCOMP_UNIX_ALL) ==
			    (w | SECCOMP_UNIX_ALL))
				assert_memory_equal(seccomp_progs[v].insns,
				    seccomp_progs[w].insns,
				    seccomp_progs[w].len *
				    sizeof(struct sock_filter));
			else
				assert_true(seccomp_progs[v].len !=
			    seccomp_progs[w].len ||
			    memcmp(seccomp_progs[v].insns,
			    seccomp_progs[w].insns, seccomp_progs[w].len *
			    sizeof(struct sock_filter)) != 0);
}

static void
test_variant(void **state)
{
	static const char *const sock[] = { "/run/x.sock" };
	struct sandbox	sb;

	(void)state;
	memset(&sb, 0, sizeof(sb));
	/* The default: Unix sockets through the guard. */
	assert_int_equal(seccomp_variant(&sb), SECCOMP_UNIX_LISTED);
	sb.plan.unix_sockets = (char **)sock;
	sb.plan.nunix = 1;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_UNIX_LISTED);
	/* allowAllUnixSockets wins: nothing to look at. */
	sb.allow_all_unix = 1;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_UNIX_ALL);
	sb.plan.nunix = 0;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_UNIX_ALL);
	/* allowNestedUserNamespaces: the same, with new user namespaces. */
	sb.allow_userns = 1;
	assert_int_equal(seccomp_variant(&sb),
	    SECCOMP_UNIX_ALL | SECCOMP_USERNS);
	sb.allow_all_unix = 0;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_USERNS);
	/* Without namespaces: every socket call the guard's, whatever. */
	sb.nons = 1;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_NONS | SECCOMP_USERNS);
	sb.allow_all_unix = 1;
	sb.allow_userns = 0;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_NONS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compiled_equals_rules),
		cmocka_unit_test(test_variant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
