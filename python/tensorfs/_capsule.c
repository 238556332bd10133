/* _capsule.c: the one piece of tensorfs' Python package in C, the destructor of the
 * "dltensor" capsules that Tensor.__dlpack__ returns.
 *
 * Why C: a capsule a consumer refused (numpy.from_dlpack of a dtype it lacks) is freed
 * while the consumer's exception is pending. A destructor written in Python (a ctypes
 * callback) cannot run then without losing that exception; this one touches no Python
 * state but the capsule's own fields.
 *
 * new(address) -> capsule: address is a DLManagedTensor* (from tfs_to_dlpack) whose
 * ownership moves to the capsule. Unconsumed at its end, the capsule calls the tensor's
 * deleter; a consumer that renamed it "used_dltensor" calls the deleter itself. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The head of DLPack's DLManagedTensor (dlpack.h, ABI-stable since v0.2): only the
 * deleter is read here, after the DLTensor of 48 bytes and manager_ctx. */
struct dl_tensor_head {
	void *data;
	int32_t device_type, device_id;
	int32_t ndim;
	uint8_t code, bits;
	uint16_t lanes;
	int64_t *shape, *strides;
	uint64_t byte_offset;
};
struct dl_managed {
	struct dl_tensor_head dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct dl_managed *self);
};

static void destroy(PyObject *capsule)
{
	struct dl_managed *m;

	if (!PyCapsule_IsValid(capsule, "dltensor"))
		return;                 /* consumed, or not ours: nothing to release */
	m = PyCapsule_GetPointer(capsule, "dltensor");
	if (m && m->deleter)
		m->deleter(m);
}

static PyObject *capsule_new(PyObject *self, PyObject *arg)
{
	void *p = PyLong_AsVoidPtr(arg);

	(void)self;
	if (!p) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "NULL DLManagedTensor");
		return NULL;
	}
	return PyCapsule_New(p, "dltensor", destroy);
}

static PyMethodDef methods[] = {
	{ "new", capsule_new, METH_O,
	  "new(address) -> a 'dltensor' capsule owning the DLManagedTensor at address" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "tensorfs._capsule",
	"DLPack capsules whose destructor is safe with an exception pending.", -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__capsule(void)
{
	return PyModule_Create(&module);
}
