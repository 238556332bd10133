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
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/guard.h"

static __thread sigjmp_buf *recover;   /* non-NULL while this thread copies */
static __thread int unblocked;          /* SIGBUS unblocked in this thread */
static struct sigaction prev;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The spans lent out: state 0 free, 1 being filled or emptied, 2 registered (read by the
 * handler). */
static struct {
	int state;
	int hit;
	char *lo, *hi;          /* [lo, hi): the span */
} spans[TFS_GUARD_SPANS];

/* A fault at addr inside a lent span: anonymous memory over its page, the spans over the
 * page marked. 1 when addr was inside one. mmap is a plain system call, safe here. */
static int span_fault(char *addr)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *page = (char *)((uintptr_t)addr & ~(uintptr_t)(pg - 1));
	int found = 0;

	for (int i = 0; i < TFS_GUARD_SPANS; i++) {
		if (__atomic_load_n(&spans[i].state, __ATOMIC_ACQUIRE) != 2)
			continue;
		if (spans[i].lo < page + pg && spans[i].hi > page) {
			__atomic_store_n(&spans[i].hit, 1, __ATOMIC_RELEASE);
			found = 1;
		}
	}
	if (found && mmap(page, pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		found = 0;
	return found;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = recover;

	if (jb && si && si->si_code > 0) {
		recover = NULL;
		siglongjmp(*jb, 1);
	}
	if (si && si->si_code > 0 && span_fault(si->si_addr))
		return;
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

void tfs_guard_thread(void)
{
	pthread_once(&once, install);
	if (!unblocked) {
		sigset_t bus;

		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		unblocked = 1;
	}
}

int tfs_guard_span_add(struct tfs_guard_span *s)
{
	pthread_once(&once, install);
	for (int i = 0; i < TFS_GUARD_SPANS; i++) {
		int z = 0;

		if (!__atomic_compare_exchange_n(&spans[i].state, &z, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		spans[i].lo = s->p;
		spans[i].hi = s->p + s->len;
		spans[i].hit = 0;
		s->slot = i;
		__atomic_store_n(&spans[i].state, 2, __ATOMIC_RELEASE);
		return 0;
	}
	return -EAGAIN;
}

int tfs_guard_span_del(struct tfs_guard_span *s)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int i = s->slot, hit;

	__atomic_store_n(&spans[i].state, 1, __ATOMIC_RELEASE);
	hit = __atomic_load_n(&spans[i].hit, __ATOMIC_ACQUIRE);
	__atomic_store_n(&spans[i].state, 0, __ATOMIC_RELEASE);
	if (hit && s->len) {
		/* The object mapped back: its pages past the end fault again, and a guarded copy
		 * answers EIO for them, as for any truncated tensor. */
		uintptr_t lo = (uintptr_t)s->p & ~(uintptr_t)(pg - 1);
		uintptr_t hi = ((uintptr_t)s->p + s->len + pg - 1) & ~(uintptr_t)(pg - 1);

		(void)mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			   s->fd, (off_t)(lo - (uintptr_t)s->map));
	}
	return hit ? -EIO : 0;
}

int tfs_guarded_copy(void *dst, const void *src, size_t len)
{
	sigjmp_buf jb;

	if (len == 0)
		return 0;
	tfs_guard_thread();
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
