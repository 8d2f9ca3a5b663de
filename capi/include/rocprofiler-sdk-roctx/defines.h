/* rocprofiler-sdk-roctx/defines.h -- linkage/attribute macros of the ROCTx marker API
 * (rocwasm re-implementation of AMD's roctx 1.0 interface). */
#pragma once

/* Symbol-version tag for interface version 0.0. */
#define ROCPROFILER_SDK_ROCTX_VERSION_0_0

#if !defined(ROCTX_ATTRIBUTE)
#    if defined(_MSC_VER)
#        define ROCTX_ATTRIBUTE(...) __declspec(__VA_ARGS__)
#    else
#        define ROCTX_ATTRIBUTE(...) __attribute__((__VA_ARGS__))
#    endif
#endif

#if !defined(ROCTX_PUBLIC_API)
#    if defined(_MSC_VER)
#        define ROCTX_PUBLIC_API ROCTX_ATTRIBUTE(dllexport)
#    else
#        define ROCTX_PUBLIC_API ROCTX_ATTRIBUTE(visibility("default"))
#    endif
#endif

#if !defined(ROCTX_HIDDEN_API)
#    if defined(_MSC_VER)
#        define ROCTX_HIDDEN_API
#    else
#        define ROCTX_HIDDEN_API ROCTX_ATTRIBUTE(visibility("hidden"))
#    endif
#endif

#if !defined(ROCTX_EXPORT_DECORATOR)
#    define ROCTX_EXPORT_DECORATOR ROCTX_PUBLIC_API
#endif

#if !defined(ROCTX_IMPORT_DECORATOR)
#    if defined(_MSC_VER)
#        define ROCTX_IMPORT_DECORATOR ROCTX_ATTRIBUTE(dllimport)
#    else
#        define ROCTX_IMPORT_DECORATOR
#    endif
#endif

#define ROCTX_EXPORT ROCTX_EXPORT_DECORATOR
#define ROCTX_IMPORT ROCTX_IMPORT_DECORATOR

/* libroctx itself is built with roctx_EXPORTS defined. */
#if !defined(ROCTX_API)
#    if defined(roctx_EXPORTS)
#        define ROCTX_API ROCTX_EXPORT
#    else
#        define ROCTX_API ROCTX_IMPORT
#    endif
#endif

#if defined(__has_attribute)
#    if __has_attribute(nonnull)
#        define ROCTX_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#    else
#        define ROCTX_NONNULL(...)
#    endif
#elif defined(__GNUC__)
#    define ROCTX_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#else
#    define ROCTX_NONNULL(...)
#endif

#ifdef __cplusplus
#    define ROCTX_EXTERN_C_INIT extern "C" {
#    define ROCTX_EXTERN_C_FINI }
#else
#    define ROCTX_EXTERN_C_INIT
#    define ROCTX_EXTERN_C_FINI
#endif
