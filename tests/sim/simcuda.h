/* simcuda.h: the only simulator-specific API. Test programs use it to give the simulated device kernels to run and
 * to make those kernels fail the way real ones do. Everything else a test program does goes through the real CUDA
 * driver, runtime and CUPTI C ABI that libcuda.so.1, libcudart.so.13 and libcupti.so.13 of tests/sim implement. */
#ifndef SIMCUDA_H
#define SIMCUDA_H

#include <stddef.h>
#include <vector_types.h> /* dim3, from the CUDA toolkit */

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel body runs once per launch on the simulated device (its stream's worker thread), not once per thread.
 * args holds copies of the launch arguments, taken when the launch was enqueued, as the real driver does. */
typedef void (*simcuda_kernel_fn)(void** args, dim3 grid, dim3 block);

/* Registers a kernel under its host stub (what cudaLaunchKernel receives) and its mangled name (what
 * cuModuleGetFunction and CUPTI's symbolName use). Argument sizes are read from the mangled signature; a kernel
 * whose parameters are not all scalars or pointers, or whose name is not mangled, needs
 * simcuda_register_kernel_with_params. host_stub may be NULL for driver-only kernels. */
void simcuda_register_kernel(const void* host_stub, const char* mangled_name, simcuda_kernel_fn body);
void simcuda_register_kernel_with_params(const void* host_stub, const char* name, simcuda_kernel_fn body,
                                         unsigned param_count, const size_t* param_sizes);

/* Device code for a family of kernels: every kernel whose function, demangled and without its template arguments,
 * parameters and anonymous namespaces, is function_name (e.g. "at::native::nll_loss_forward_reduce_cuda_kernel_2d"),
 * unless a body is registered for that very kernel. A body tells the family's members apart by
 * simcuda_running_kernel_name(). Families are matched when a kernel is first launched, so they may be registered
 * after the program registered its kernels (__cudaRegisterFunction). */
void simcuda_register_kernel_family(const char* function_name, simcuda_kernel_fn body);

/* The same for a family whose parameters are not all scalars or pointers (structs passed by value): param_sizes
 * writes the sizes of mangled_name's parameters into sizes (at most max_count) and returns their number, or -1 when
 * it cannot size that member (its launches then fail with CUDA_ERROR_NOT_SUPPORTED and one line on stderr), or
 * SIMCUDA_NOT_MODELLED when the body does not model that member at all.
 *
 * Several families may be registered under one function name, for kernels that every op of a library shares (ATen's
 * at::native::vectorized_elementwise_kernel runs each elementwise op's lambda) when a body models only some of its
 * members. A kernel takes the body of the first family, in registration order, that claims it: one registered
 * without param_sizes claims every member, one with param_sizes each member it does not answer SIMCUDA_NOT_MODELLED
 * for. A kernel that no family claims runs as a no-op, as if none were registered. Registering a function name again
 * with a body it already has replaces that registration's param_sizes. */
typedef int (*simcuda_param_sizes_fn)(const char* mangled_name, size_t* sizes, unsigned max_count);
#define SIMCUDA_NOT_MODELLED (-2)
void simcuda_register_kernel_family_with_params(const char* function_name, simcuda_kernel_fn body,
                                                simcuda_param_sizes_fn param_sizes);

/* Inside a body: the mangled name of the kernel it runs for. */
const char* simcuda_running_kernel_name(void);

/* A kernel without a body (none registered for it or its family) runs as a no-op that keeps its stream busy for
 * SIMCUDA_KERNEL_US microseconds (environment, read once; default 10), so that queues fill as on a GPU. Its
 * arguments need not be sizable: nothing reads them.
 *
 * SIMCUDA_DEVICE_CODE (environment): a colon-separated list of libraries that cuInit loads (RTLD_NOW); their
 * constructors register kernel bodies and families, as a program's own fatbinaries bring their device code.
 *
 * SIMCUDA_DEVICES (environment, read once at cuInit; default 1): how many GPUs the simulated machine has, 1 to 16
 * (another value: one line on stderr, and 1). Each is an H100 with its own UUID and PCI bus, its own primary context,
 * streams, memory and sticky error; CUDA_VISIBLE_DEVICES selects and renumbers them as the driver does. A kernel
 * body runs on the device whose stream it was launched into: its simcuda_device_assert loses that device's context
 * only; a sticky simcuda_device_fault (700 and the others whose documentation says the process is left inconsistent)
 * every device's. */

/* Inside a body: the kernel keeps its stream busy this long (returns early once the device has faulted or this
 * body raised a device-side assert). */
void simcuda_sleep_us(unsigned us);

/* Inside a body: one failing device-side assert, as thread thread_idx of block block_idx would raise it. The kernel
 * stops (later simcuda_sleep_us calls return at once); when the body returns, queued work on every stream is dropped
 * and 710 becomes the context's sticky error. The driver's assertion lines reach stderr when the host next observes
 * the error. May be called several times by one body, one line per failing thread: the host learns of the fault only
 * after the body returned, so it prints all of them together, as a device's printf buffer is read at once. */
void simcuda_device_assert(const char* file, unsigned line, const char* function, const char* condition,
                           dim3 block_idx, dim3 thread_idx);

/* Inside a body: a device fault with this CUDA error code (e.g. 700 illegal address). Sticky codes corrupt the
 * context as an assert does; any other code is reported once, asynchronously, by the next synchronizing call. */
void simcuda_device_fault(int cuda_error);

#ifdef __cplusplus
}
#endif
#endif
