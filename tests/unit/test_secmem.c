/*
 * Unit tests for common/secmem.c (the comparison sees every byte, the
 * wipe zeroes exactly what it is given, randomness fills large buffers)
 * and for policy/env.c (a secret taken from the environment leaves its
 * bytes nowhere there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/secmem.h"
#include "policy/policy.h"

static void
test_cmp(void **state)
{
	char	a[64], b[64];
	size_t	i;

	(void)state;
	memset(a, 'x', sizeof(a));
	memcpy(b, a, sizeof(b));
	assert_int_equal(secmem_cmp(a, b, sizeof(a)), 0);
	assert_int_equal(secmem_cmp(a, b, 0), 0);
	/* A difference anywhere, including the first and last byte. */
	for (i = 0; i < sizeof(b); i++) {
		b[i] ^= 0x01;
		assert_int_equal(secmem_cmp(a, b, sizeof(a)), 1);
		assert_int_equal(secmem_cmp(b, a, sizeof(a)), 1);
		b[i] = a[i];
	}
	b[10] = (char)0x80;
	assert_int_equal(secmem_cmp(a, b, 10), 0);
	assert_int_equal(secmem_cmp(a, b, 11), 1);
}

static void
test_wipe(void **state)
{
	char	buf[16];
	size_t	i;

	(void)state;
	memset(buf, 'S', sizeof(buf));
	secmem_wipe(buf + 4, 8);
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], i >= 4 && i < 12 ? 0 : 'S');
}

static void
test_random(void **state)
{
	unsigned char	a[4096], b[4096];
	size_t		i, zero = 0;

	(void)state;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	assert_int_equal(secmem_random(a, sizeof(a)), 0);
	assert_int_equal(secmem_random(b, sizeof(b)), 0);
	assert_int_equal(secmem_random(a, 0), 0);
	assert_int_not_equal(memcmp(a, b, sizeof(a)), 0);
	/* The last bytes were written too (no short read taken for all). */
	for (i = sizeof(a) - 64; i < sizeof(a); i++)
		zero += a[i] == 0;
	assert_true(zero < 16);
}

extern char **environ;

static void
test_env(void **state)
{
	static char	 e1[] = "PISBX_TEST_SECRET=hunter2";
	static char	 e2[] = "PISBX_TEST_SECRET=dup-value";
	static char	 e3[] = "PISBX_TEST_OTHER=stays";
	char		*env[] = { e3, e1, e2, NULL };
	char		**saved = environ;
	const char	*v;

	(void)state;
	/* An environment block as execve leaves it, with a duplicate. */
	environ = env;
	v = policy_env_take("PISBX_TEST_SECRET");
	assert_non_null(v);
	assert_string_equal(v, "hunter2");
	/* Every entry's value overwritten in place, the variable gone. */
	assert_memory_equal(e1 + 18, "\0\0\0\0\0\0\0", 7);
	assert_memory_equal(e2 + 18, "\0\0\0\0\0\0\0\0\0", 9);
	assert_null(getenv("PISBX_TEST_SECRET"));
	assert_string_equal(getenv("PISBX_TEST_OTHER"), "stays");
	/* Kept: a reload reads it again. */
	v = policy_env_take("PISBX_TEST_SECRET");
	assert_non_null(v);
	assert_string_equal(v, "hunter2");
	/* Set again: taken anew. */
	assert_int_equal(setenv("PISBX_TEST_SECRET", "again", 1), 0);
	assert_string_equal(policy_env_take("PISBX_TEST_SECRET"), "again");
	assert_null(getenv("PISBX_TEST_SECRET"));
	assert_null(policy_env_take("PISBX_TEST_UNSET"));
	environ = saved;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmp),
		cmocka_unit_test(test_wipe),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
