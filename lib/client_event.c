/* Cross-process ordering through CUDA IPC events: the producer records an interprocess
 * event after its writes and publishes the event handle in the user xattr
 * "user.tensorfs.event" of the tensor's file (stored by the daemon like any user
 * attribute); a consumer makes its stream wait on it. On the host backend the bytes are
 * shared memory, so a fence is all that is needed. */
#include <errno.h>
#include <string.h>
#include <sys/xattr.h>

#include "client_internal.h"


int tfs_mark_written(tfs_tensor *t, void *stream)
{
	const struct tfs_cudart *cu;
	tfs_cuda_ipc_handle h;
	void *ev = NULL;
	int rc, prev, err;

	if (!t)
		return tfs_seterr(-EINVAL, "tfs_mark_written: NULL tensor");
	if (tfs_tensor_on_host(t)) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return 0;
	}
	if (t->fd < 0)
		return tfs_seterr(-EBADF, "tfs_mark_written: tensor not opened by path");
	if (!(cu = tfs_cudart_get(&rc)))
		return rc;
	if ((rc = tfs_cuda_enter(cu, t->meta.device, &prev)))
		return rc;
	err = cu->EventCreateWithFlags(&ev, TFS_CUDA_EVENT_DISABLE_TIMING |
				       TFS_CUDA_EVENT_INTERPROCESS);
	if (err) {
		rc = tfs_seterr(-EIO, "cudaEventCreateWithFlags: %s", cu->GetErrorString(err));
		goto restore;
	}
	if ((err = cu->EventRecord(ev, stream)) || (err = cu->IpcGetEventHandle(&h, ev))) {
		rc = tfs_seterr(-EIO, "recording the IPC event: %s", cu->GetErrorString(err));
		goto destroy;
	}
	if (fsetxattr(t->fd, TFS_EVENT_XATTR, &h, sizeof(h), 0)) {
		rc = tfs_seterr(-errno, "setting %s: %s", TFS_EVENT_XATTR, tfs_strerror(errno));
		goto destroy;
	}
	/* Keep the event alive until the next mark or the close, so consumers can still
	 * open its handle; the previous one is no longer published. */
	ev = __atomic_exchange_n(&t->event, ev, __ATOMIC_ACQ_REL);
	rc = 0;
destroy:
	if (ev)
		cu->EventDestroy(ev);
restore:
	if (prev != t->meta.device)
		cu->SetDevice(prev);
	return rc;
}

int tfs_wait_written(tfs_tensor *t, void *stream)
{
	const struct tfs_cudart *cu;
	tfs_cuda_ipc_handle h;
	void *ev = NULL;
	ssize_t n;
	int rc, prev, err;

	if (!t)
		return tfs_seterr(-EINVAL, "tfs_wait_written: NULL tensor");
	if (tfs_tensor_on_host(t)) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return 0;
	}
	if (t->fd < 0)
		return tfs_seterr(-EBADF, "tfs_wait_written: tensor not opened by path");
	n = fgetxattr(t->fd, TFS_EVENT_XATTR, &h, sizeof(h));
	if (n < 0)
		return errno == ENODATA ? tfs_seterr(-ENODATA, "nothing marked written yet")
				       : tfs_seterr(-errno, "reading %s: %s", TFS_EVENT_XATTR,
						    tfs_strerror(errno));
	if (n != (ssize_t)sizeof(h))
		return tfs_seterr(-EBADMSG, "%s is not a 64-byte event handle", TFS_EVENT_XATTR);
	if (!(cu = tfs_cudart_get(&rc)))
		return rc;
	if ((rc = tfs_cuda_enter(cu, t->meta.device, &prev)))
		return rc;
	if ((err = cu->IpcOpenEventHandle(&ev, h))) {
		rc = tfs_seterr(-ESTALE, "cudaIpcOpenEventHandle: %s (producer gone?)",
				cu->GetErrorString(err));
		goto restore;
	}
	if ((err = cu->StreamWaitEvent(stream, ev, 0)))
		rc = tfs_seterr(-EIO, "cudaStreamWaitEvent: %s", cu->GetErrorString(err));
	cu->EventDestroy(ev);
restore:
	if (prev != t->meta.device)
		cu->SetDevice(prev);
	return rc;
}
