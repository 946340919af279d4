/*
 * The command's seccomp filter at run time: the BPF program compiled at
 * build time for the config's variant (seccomp.c, seccomp_gen.c) is
 * installed with seccomp(2) itself, with a notification listener for the
 * creation guard.  Building it with libseccomp at each start cost about
 * 1.5 ms, most of the command's start; loading it costs the kernel's
 * check and JIT only.
 */
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <unistd.h>

#include "launcher/sandbox/sandbox.h"

enum seccomp_variant
seccomp_variant(const struct sandbox *sb)
{
	/* Without namespaces the guard applies allowAllUnixSockets. */
	if (sb->nons)
		return (enum seccomp_variant)(SECCOMP_NONS |
		    (sb->allow_userns ? SECCOMP_USERNS : 0));
	return (enum seccomp_variant)((sb->allow_all_unix ? SECCOMP_UNIX_ALL :
	    SECCOMP_UNIX_LISTED) | (sb->allow_userns ? SECCOMP_USERNS : 0));
}

int
seccomp_apply(const struct sandbox *sb)
{
	const struct seccomp_prog	*p = &seccomp_progs[seccomp_variant(sb)];
	struct sock_fprog		 prog;

	prog.len = p->len;
	prog.filter = (struct sock_filter *)p->insns;
	/* The listener comes close-on-exec: the command never holds it. */
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}
