/* rocprofiler-sdk/defines.h -- rocwasm's re-implementation of the rocprofiler-sdk 1.0
 * public C API: attribute, linkage and versioning helper macros.
 *
 * Macro names and their expansions follow AMD's published API so that tool sources
 * written against rocprofiler-sdk compile unchanged.
 */
#pragma once

#include <stdint.h>

/* Symbol-version tag for everything introduced in interface version 0.0. */
#define ROCPROFILER_SDK_VERSION_0_0

/* ---- attributes and visibility ------------------------------------------------------- */

#if !defined(ROCPROFILER_ATTRIBUTE)
#    if defined(_MSC_VER)
#        define ROCPROFILER_ATTRIBUTE(...) __declspec(__VA_ARGS__)
#    else
#        define ROCPROFILER_ATTRIBUTE(...) __attribute__((__VA_ARGS__))
#    endif
#endif

#if !defined(ROCPROFILER_PUBLIC_API)
#    if defined(_MSC_VER)
#        define ROCPROFILER_PUBLIC_API ROCPROFILER_ATTRIBUTE(dllexport)
#    else
#        define ROCPROFILER_PUBLIC_API ROCPROFILER_ATTRIBUTE(visibility("default"))
#    endif
#endif

#if !defined(ROCPROFILER_HIDDEN_API)
#    if defined(_MSC_VER)
#        define ROCPROFILER_HIDDEN_API
#    else
#        define ROCPROFILER_HIDDEN_API ROCPROFILER_ATTRIBUTE(visibility("hidden"))
#    endif
#endif

#if !defined(ROCPROFILER_EXPORT_DECORATOR)
#    define ROCPROFILER_EXPORT_DECORATOR ROCPROFILER_PUBLIC_API
#endif

#if !defined(ROCPROFILER_IMPORT_DECORATOR)
#    if defined(_MSC_VER)
#        define ROCPROFILER_IMPORT_DECORATOR ROCPROFILER_ATTRIBUTE(dllimport)
#    else
#        define ROCPROFILER_IMPORT_DECORATOR
#    endif
#endif

#define ROCPROFILER_EXPORT ROCPROFILER_EXPORT_DECORATOR
#define ROCPROFILER_IMPORT ROCPROFILER_IMPORT_DECORATOR

/* The library itself is built with rocprofiler_EXPORTS defined (exported symbols);
 * tools see the import form. */
#if !defined(ROCPROFILER_API)
#    if defined(rocprofiler_EXPORTS)
#        define ROCPROFILER_API ROCPROFILER_EXPORT
#    else
#        define ROCPROFILER_API ROCPROFILER_IMPORT
#    endif
#endif

/* Argument positions (1-based) that must not be NULL. */
#if defined(__has_attribute)
#    if __has_attribute(nonnull)
#        define ROCPROFILER_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#    else
#        define ROCPROFILER_NONNULL(...)
#    endif
#elif defined(__GNUC__)
#    define ROCPROFILER_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#else
#    define ROCPROFILER_NONNULL(...)
#endif

/* Build a handle struct value in an expression (compound literal / braced init). */
#if __cplusplus >= 201103L
#    define ROCPROFILER_HANDLE_LITERAL(type, value) (type{value})
#elif __STDC_VERSION__ >= 199901L
#    define ROCPROFILER_HANDLE_LITERAL(type, value) ((type){value})
#else
#    define ROCPROFILER_HANDLE_LITERAL(type, value) {value}
#endif

/* ---- C / C++ linkage ----------------------------------------------------------------- */

#ifdef __cplusplus
#    define ROCPROFILER_EXTERN_C_INIT extern "C" {
#    define ROCPROFILER_EXTERN_C_FINI }
#    define ROCPROFILER_CXX_CODE(...) __VA_ARGS__
#else
#    define ROCPROFILER_EXTERN_C_INIT
#    define ROCPROFILER_EXTERN_C_FINI
#    define ROCPROFILER_CXX_CODE(...)
#endif

#if __cplusplus
#    define ROCPROFILER_UINT64_C(value) uint64_t(value)
#else
#    define ROCPROFILER_UINT64_C(value) UINT64_C(value)
#endif

/* ---- deprecation / experimental markers ---------------------------------------------- */

#if defined(__cplusplus) && __cplusplus >= 201402L
#    define ROCPROFILER_SDK_DEPRECATED_MESSAGE(...) [[deprecated(__VA_ARGS__)]]
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L
#    define ROCPROFILER_SDK_DEPRECATED_MESSAGE(...) [[deprecated(__VA_ARGS__)]]
#else
#    define ROCPROFILER_SDK_DEPRECATED_MESSAGE(...) ROCPROFILER_ATTRIBUTE(deprecated)
#endif

/* Both warning classes are off unless the tool asks for them. */
#if !defined(ROCPROFILER_SDK_DEPRECATED_WARNINGS)
#    define ROCPROFILER_SDK_DEPRECATED_WARNINGS 0
#endif

#if !defined(ROCPROFILER_SDK_EXPERIMENTAL_WARNINGS)
#    define ROCPROFILER_SDK_EXPERIMENTAL_WARNINGS 0
#endif

#if ROCPROFILER_SDK_DEPRECATED_WARNINGS > 0
#    define ROCPROFILER_SDK_DEPRECATED(...) ROCPROFILER_SDK_DEPRECATED_MESSAGE(__VA_ARGS__)
#else
#    define ROCPROFILER_SDK_DEPRECATED(...)
#endif

#define ROCPROFILER_SDK_EXPERIMENTAL_MESSAGE                                                       \
    ROCPROFILER_SDK_DEPRECATED_MESSAGE(                                                            \
        "experimental rocprofiler-sdk API (may change between releases); "                         \
        "build with ROCPROFILER_SDK_EXPERIMENTAL_WARNINGS=0 to hide this warning")

#if ROCPROFILER_SDK_EXPERIMENTAL_WARNINGS > 0
#    define ROCPROFILER_SDK_EXPERIMENTAL ROCPROFILER_SDK_EXPERIMENTAL_MESSAGE
#else
#    define ROCPROFILER_SDK_EXPERIMENTAL
#endif

/* Pre-1.0 ("beta") spelling compatibility: on by default in 1.0. */
#if !defined(ROCPROFILER_SDK_BETA_COMPAT)
#    define ROCPROFILER_SDK_BETA_COMPAT 1
#endif

#if defined(ROCPROFILER_SDK_BETA_COMPAT) && ROCPROFILER_SDK_BETA_COMPAT > 0
#    define ROCPROFILER_SDK_BETA_COMPAT_SUPPORTED 1
#endif

/* ---- version arithmetic -------------------------------------------------------------- */

/* Pack major/minor/patch into one integer, each component in [0, MAX_VERSION_VALUE). */
#define ROCPROFILER_SDK_COMPUTE_VERSION_VALUE(MAX_VERSION_VALUE, MAJOR, MINOR, PATCH)              \
    (((MAX_VERSION_VALUE * MAX_VERSION_VALUE) * MAJOR) + (MAX_VERSION_VALUE * MINOR) + (PATCH))

/* The encoding rocprofiler_configure() receives: 10000*major + 100*minor + patch. */
#define ROCPROFILER_SDK_COMPUTE_VERSION(MAJOR, MINOR, PATCH)                                       \
    ROCPROFILER_SDK_COMPUTE_VERSION_VALUE(100, MAJOR, MINOR, PATCH)
