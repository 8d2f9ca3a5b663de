/* rocprofiler-sdk-roctx/version.h -- ROCTx interface version (AMD generates this; ours
 * is fixed at 1.0.0). */
#pragma once

#define ROCTX_IS_ROCPROFILER_SDK 1

#define ROCTX_VERSION_MAJOR   1
#define ROCTX_VERSION_MINOR   0
#define ROCTX_VERSION_PATCH   0
#define ROCTX_SOVERSION       (10000 * 1)
#define ROCTX_VERSION_STRING  "1.0.0"
#define ROCTX_GIT_DESCRIBE    "rocwasm"
#define ROCTX_GIT_REVISION    ""
#define ROCTX_LIBRARY_ARCH     ""
#define ROCTX_SYSTEM_NAME      "Linux"
#define ROCTX_SYSTEM_PROCESSOR ""
#define ROCTX_SYSTEM_VERSION   ""
#define ROCTX_COMPILER_ID      ""
#define ROCTX_COMPILER_VERSION ""

#define ROCTX_VERSION ((10000 * ROCTX_VERSION_MAJOR) + (100 * ROCTX_VERSION_MINOR) + ROCTX_VERSION_PATCH)
