/* Guarded copies (guard.h): a per-thread recovery point that the SIGBUS handler jumps
 * back to. Only a fault the kernel raised (si_code > 0) while this thread is inside a
 * guarded copy is taken; a SIGBUS sent with kill(), or one in any other code, goes to the
 * handler that was installed before (the sanitizers') or to the default action, as if
 * this one were not there.
 *
 * SA_NODEFER and sigsetjmp without the signal mask: leaving the handler by siglongjmp
 * leaves SIGBUS unblocked without a sigprocmask call on every copy. The daemon starts its
 * request threads with every signal blocked (the main thread takes them), and a fault
 * while SIGBUS is blocked kills whatever the handler: each thread unblocks it at its first
 * guarded copy. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "util/guard.h"

static __thread sigjmp_buf *recover;   /* non-NULL while this thread copies */
static __thread int unblocked;          /* SIGBUS unblocked in this thread */
static struct sigaction prev;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = recover;

	if (jb && si && si->si_code > 0) {
		recover = NULL;
		siglongjmp(*jb, 1);
	}
	if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
		prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
		prev.sa_handler(sig);
		return;
	}
	/* The default action: a fault recurs when the instruction runs again, and kills
	 * with a core as it would have; a sent signal is raised again. */
	signal(SIGBUS, SIG_DFL);
	if (!si || si->si_code <= 0)
		raise(SIGBUS);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* Fails only for an invalid signal or handler. */
	(void)sigaction(SIGBUS, &sa, &prev);
}

int tfs_guarded_copy(void *dst, const void *src, size_t len)
{
	sigjmp_buf jb;

	if (len == 0)
		return 0;
	pthread_once(&once, install);
	if (!unblocked) {
		sigset_t bus;

		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		unblocked = 1;
	}
	if (sigsetjmp(jb, 0)) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return -EIO;
	}
	recover = &jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memmove(dst, src, len);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	recover = NULL;
	return 0;
}
