/* Calls a few HIP functions against whatever libamdhip64 is loaded and
 * prints what they returned; exits with 7 so the test can check that the
 * exit status survives the tool. */
#include <hip/hip_runtime_api.h>
#include <stdio.h>

int main(void) {
    int n = -1;
    hipError_t e = hipGetDeviceCount(&n);
    printf("hipGetDeviceCount %d\n", e);
    void* p = 0;
    e = hipMalloc(&p, 1024);
    printf("hipMalloc %d\n", e);
    e = hipSetDevice(0);
    printf("hipSetDevice %d\n", e);
    return 7;
}
