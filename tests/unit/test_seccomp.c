/*
 * The command's seccomp filter is compiled at build time (launcher/
 * sandbox/seccomp_gen.c) and loaded as is (launcher/sandbox/
 * seccomp_load.c): each compiled program must be, instruction for
 * instruction, what the rules of launcher/sandbox/seccomp.c build with
 * this libseccomp, and the loader must pick the variant the config asks
 * for.  What the programs answer is checked by running them (a small
 * classic-BPF interpreter, run_prog): where sends go to the kernel,
 * which Unix socket types reach the guard, whatever the upper bits.
 */
#include <sys/mman.h>

#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

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

/*
 * The program a variant shares with another: without namespaces
 * allowAllUnixSockets is the guard's to apply, and sends go to the
 * kernel only with namespaces and Unix sockets through the guard.
 */
static int
canonical(int v)
{
	if (v & SECCOMP_NONS)
		v &= ~(SECCOMP_UNIX_ALL | SECCOMP_SENDS_KERNEL);
	if (v & SECCOMP_UNIX_ALL)
		v &= ~SECCOMP_SENDS_KERNEL;
	return v;
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
	/* No two the same, but those canonical() says are. */
	for (v = 0; v < SECCOMP_NVARIANTS; v++)
		for (w = v + 1; w < SECCOMP_NVARIANTS; w++)
			if (canonical(v) == canonical(w))
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

/*
 * Run variant v's compiled program on a call as the kernel would: its
 * action (SECCOMP_RET_ACTION_FULL bits).  Only the instructions
 * libseccomp emits; any other fails the test.
 */
static uint32_t
run_prog(int v, int nr, const uint64_t args[6])
{
	const struct sock_filter	*p = seccomp_progs[v].insns;
	struct seccomp_data		 d;
	uint32_t			 a = 0, x = 0, mem[BPF_MEMWORDS], w;
	size_t				 pc = 0, n = seccomp_progs[v].len;
	int				 i;

	memset(&d, 0, sizeof(d));
	memset(mem, 0, sizeof(mem));
	d.nr = nr;
	d.arch = seccomp_arch_native();
	for (i = 0; i < 6; i++)
		d.args[i] = args[i];
	while (pc < n) {
		const struct sock_filter *f = &p[pc++];

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			assert_true(f->k % 4 == 0 && f->k < sizeof(d));
			memcpy(&a, (const char *)&d + f->k, 4);
			break;
		case BPF_LD | BPF_IMM:
			a = f->k;
			break;
		case BPF_LD | BPF_MEM:
			assert_true(f->k < BPF_MEMWORDS);
			a = mem[f->k];
			break;
		case BPF_LDX | BPF_W | BPF_MEM:
			assert_true(f->k < BPF_MEMWORDS);
			x = mem[f->k];
			break;
		case BPF_ST:
			assert_true(f->k < BPF_MEMWORDS);
			mem[f->k] = a;
			break;
		case BPF_STX:
			assert_true(f->k < BPF_MEMWORDS);
			mem[f->k] = x;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= f->k;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= f->k;
			break;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_K:
			w = BPF_OP(f->code);
			pc += (w == BPF_JEQ ? a == f->k : w == BPF_JGT ?
			    a > f->k : w == BPF_JGE ? a >= f->k :
			    (a & f->k) != 0) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return f->k & SECCOMP_RET_ACTION_FULL;
		default:
			fail_msg("variant %d: instruction 0x%04x at %zu not "
			    "understood here", v, f->code, pc - 1);
		}
	}
	fail_msg("variant %d ran off its end", v);
	return 0;
}

/* The action of variant v for nr with three arguments (the rest 0). */
static uint32_t
call3(int v, int nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t	args[6] = { a0, a1, a2, 0, 0, 0 };

	return run_prog(v, nr, args);
}

/*
 * Where sends go: with SECCOMP_SENDS_KERNEL (namespaces, Unix sockets
 * through the guard) straight to the kernel, and every AF_UNIX socket
 * but a stream or seqpacket one to the guard, whatever flags and upper
 * bits its type or domain carries; otherwise as before.
 */
static void
test_sends(void **state)
{
	static const uint64_t	hi[] = { 0, 0xdead000000000000ULL,
				    0xffffffff00000000ULL };
	static const uint64_t	flags[] = { 0, SOCK_NONBLOCK, SOCK_CLOEXEC,
				    SOCK_NONBLOCK | SOCK_CLOEXEC };
	uint64_t		sendto_addr[6] = { 3, 0x1000, 1, 0, 0x2000, 16 };
	uint64_t		sendto_null[6] = { 3, 0x1000, 1, 0, 0, 0 };
	const uint32_t		allow = SECCOMP_RET_ALLOW;
	const uint32_t		notify = SECCOMP_RET_USER_NOTIF;
	int			base[] = { 0, SECCOMP_USERNS }, k, v, nr;
	size_t			i, j, t, h;

	(void)state;
	for (k = 0; k < 2; k++) {
		v = base[k] | SECCOMP_SENDS_KERNEL;
		for (t = 0; t < 16; t++)
			for (j = 0; j < 4; j++)
				for (h = 0; h < 3; h++) {
					uint64_t ty = (t | flags[j]) | hi[h];
					uint32_t want = t == SOCK_STREAM ||
					    t == SOCK_SEQPACKET ? allow : notify;

					assert_int_equal(call3(v, SYS_socket,
					    AF_UNIX | hi[h], ty, 0), want);
					assert_int_equal(call3(v,
					    SYS_socketpair, AF_UNIX | hi[h],
					    ty, 0), want);
				}
		/* Other families: as the allow-list says, types free. */
		assert_int_equal(call3(v, SYS_socket, AF_INET, SOCK_DGRAM, 0),
		    allow);
		assert_int_equal(call3(v, SYS_socket, AF_INET6, SOCK_RAW, 0),
		    allow);
		assert_int_equal(call3(v, SYS_socket, AF_INET | (1ULL << 32),
		    SOCK_DGRAM, 0), allow);
		assert_int_equal(call3(v, SYS_socket, AF_PACKET, SOCK_DGRAM,
		    0) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_ERRNO);
		assert_int_equal(call3(v, SYS_socketpair, AF_INET,
		    SOCK_DGRAM, 0) & SECCOMP_RET_ACTION_FULL,
		    SECCOMP_RET_ERRNO);
		/* Sends to the kernel; connect still the guard's. */
		assert_int_equal(call3(v, SYS_sendmsg, 3, 0x1000, 0), allow);
		assert_int_equal(call3(v, SYS_sendmmsg, 3, 0x1000, 1), allow);
		assert_int_equal(run_prog(v, SYS_sendto, sendto_addr), allow);
		assert_int_equal(run_prog(v, SYS_sendto, sendto_null), allow);
		assert_int_equal(call3(v, SYS_connect, 3, 0x1000, 16), notify);
	}
	/* Without the bit, or where it has no effect: the guard's sends. */
	for (v = 0; v < SECCOMP_NVARIANTS; v++) {
		if (canonical(v) & SECCOMP_SENDS_KERNEL)
			continue;
		for (i = 0; i < 3; i++) {
			nr = i == 0 ? SYS_sendmsg : i == 1 ? SYS_sendmmsg :
			    SYS_connect;
			assert_int_equal(call3(v, nr, 3, 0x1000, 1),
			    (v & SECCOMP_UNIX_ALL) && !(v & SECCOMP_NONS) ?
			    allow : notify);
		}
		assert_int_equal(run_prog(v, SYS_sendto, sendto_addr),
		    (v & SECCOMP_UNIX_ALL) && !(v & SECCOMP_NONS) ? allow :
		    notify);
		assert_int_equal(run_prog(v, SYS_sendto, sendto_null), allow);
		assert_int_equal(call3(v, SYS_socketpair, AF_UNIX,
		    SOCK_DGRAM, 0), allow);
		if (!(v & SECCOMP_NONS))
			assert_int_equal(call3(v, SYS_socket, AF_UNIX,
			    SOCK_DGRAM, 0), allow);
	}
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
	/* Sends to the kernel: only with namespaces and the guard's Unix. */
	sb.sends_kernel = 1;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_NONS);
	sb.nons = 0;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_UNIX_ALL);
	sb.allow_all_unix = 0;
	assert_int_equal(seccomp_variant(&sb), SECCOMP_SENDS_KERNEL);
	sb.allow_userns = 1;
	assert_int_equal(seccomp_variant(&sb),
	    SECCOMP_SENDS_KERNEL | SECCOMP_USERNS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compiled_equals_rules),
		cmocka_unit_test(test_sends),
		cmocka_unit_test(test_variant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
