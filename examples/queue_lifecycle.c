/* Creates, gets and deletes a tensor through the Redis lifecycle queue.
 *
 *   queue_lifecycle redis://localhost:6379 weights/x
 *   (TFS_NODE=name when the daemon runs with --node name, TFS_QUEUE=key with --queue key)
 *
 * Build: cc queue_lifecycle.c $(pkg-config --cflags --libs tensorfs) */
#include <stdio.h>
#include <stdlib.h>

#include <tensorfs.h>

int main(int argc, char **argv)
{
	const int64_t shape[2] = { 2, 2 };
	float in[4] = { 1, 2, 3, 4 }, out[4];
	tfs_client *c = NULL;
	tfs_tensor *t = NULL;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s REDIS_URL NAME\n", argv[0]);
		return 2;
	}
	if ((rc = tfs_connect(argv[1], 3000, &c)))
		goto fail;
	if (getenv("TFS_NODE") && (rc = tfs_client_set_node(c, getenv("TFS_NODE"))))
		goto fail;
	if (getenv("TFS_QUEUE") && (rc = tfs_client_set_queue(c, getenv("TFS_QUEUE"))))
		goto fail;
	if ((rc = tfs_create(c, argv[2], TFS_F32, 2, shape, -1)))
		goto fail;
	printf("created %s\n", argv[2]);
	if ((rc = tfs_get(c, argv[2], &t)))      /* this process is now a holder */
		goto fail;
	if ((rc = tfs_write(t, 0, in, sizeof(in))) || (rc = tfs_read(t, 0, out, sizeof(out))))
		goto fail;
	printf("got %s: %g %g %g %g\n", argv[2], out[0], out[1], out[2], out[3]);
	tfs_close(t);
	t = NULL;
	if ((rc = tfs_delete(c, argv[2])))       /* releases the hold */
		goto fail;
	if ((rc = tfs_delete(c, argv[2])))       /* drops the name: the tensor is freed */
		goto fail;
	printf("deleted %s\n", argv[2]);
	tfs_disconnect(c);
	return 0;
fail:
	fprintf(stderr, "%s: %s (%s)\n", argv[2], tfs_errmsg(), tfs_strerror(rc));
	tfs_close(t);
	tfs_disconnect(c);
	return 1;
}
