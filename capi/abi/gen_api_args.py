#!/usr/bin/env python3
"""Generate the per-function argument unions of traced API calls:
capi/include/rocprofiler-sdk/hip/api_args.h (`rocprofiler_hip_api_args_t`) and
capi/include/rocprofiler-sdk/hsa/api_args.h (`rocprofiler_hsa_api_args_t`), one member
struct per function that rocwasm intercepts, its fields the function's parameters in
order. (The marker union, eight functions, is written by hand in marker/api_args.h.)

The functions and parameters come from the interposer lists the tool library is built
from (host/process/intercept/src/hip/generated.rs and hsa/generated.rs, ROCm 5.2's
declarations), so the headers describe exactly the bytes the tool library captures.
The headers must compile without HIP's headers and, for HSA, without the system HSA
headers, so the runtimes' own types are replaced by types of the same size and
alignment: HIP handles and pointers to runtime structs by `void*`, enums by `int`,
`dim3` by `rocprofiler_dim3_t`, the few HIP structs passed by value by anonymous
structs with HIP's field names, HSA handles by the compat types (`hsa_agent_t`, ...)
or an anonymous `struct { uint64_t handle; }`.

A member is declared only where AMD's header (rocprofiler-sdk 1.0 against HIP 7.0 and
ROCm 7.0's HSA) has the same function with the same parameters: the ABI table
(capi/abi/amd-rocprofiler-sdk-1.0.tsv, measured from AMD's header) then pins every
field's offset and size, and capi/tests/abi.rs fails if one differs. Functions AMD
lacks are listed in EXCLUDED, parameters AMD names differently in RENAMED (both found
by compiling capi/abi/abi_facts.c against AMD's headers); an excluded function's
arguments still reach tools through argument iteration.

usage: python3 capi/abi/gen_api_args.py     (from the repository root; then re-run
       gen_abi_facts.py and re-measure AMD's table, see capi/include/README.md)
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INTERCEPT = os.path.join(ROOT, "host", "intercept", "src")
INCLUDE = os.path.join(ROOT, "capi", "include", "rocprofiler-sdk")

# ROCm 5.2 HIP functions AMD's 1.0 header does not have (hiprtc, the old activity/API
# callback registry, two internals): no member.
HIP_EXCLUDED = {
    "__hipGetPCH", "hipEnableActivityCallback", "hipGetCmdName", "hipInitActivityCallback",
    "hipRegisterActivityCallback", "hipRegisterApiCallback", "hipRemoveActivityCallback",
    "hipRemoveApiCallback", "hiprtcAddNameExpression", "hiprtcCompileProgram",
    "hiprtcCreateProgram", "hiprtcDestroyProgram", "hiprtcGetCode", "hiprtcGetCodeSize",
    "hiprtcGetErrorString", "hiprtcGetLoweredName", "hiprtcGetProgramLog",
    "hiprtcGetProgramLogSize", "hiprtcVersion",
}

# Parameters AMD's header names differently (same position and type): its names are
# the member's field names. (Measured by comparing the two headers' members.)
RENAMED = {
    (fn, "f"): "func"
    for fn in (
        "hipKernelNameRef", "hipLaunchCooperativeKernel", "hipLaunchCooperativeKernel_spt",
        "hipModuleLaunchKernel", "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        "hipModuleOccupancyMaxPotentialBlockSize",
        "hipModuleOccupancyMaxPotentialBlockSizeWithFlags",
        "hipOccupancyMaxActiveBlocksPerMultiprocessor",
        "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        "hipOccupancyMaxPotentialBlockSize",
    )
}
RENAMED[("hipLaunchCooperativeKernel_spt", "hStream")] = "stream"

# ROCm 5.2 HSA functions whose member AMD's 1.0 header lacks or declares differently.
HSA_EXCLUDED = set()

# C scalar types that need no HIP header.
SCALARS = {
    "void", "char", "signed char", "unsigned char", "short", "unsigned short", "int",
    "unsigned int", "unsigned", "long", "unsigned long", "long long", "unsigned long long",
    "float", "double", "bool", "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t",
    "int32_t", "uint32_t", "int64_t", "uint64_t", "uintptr_t",
}

# Rust types of by-value parameters that are neither scalars nor pointers.
BY_VALUE = {
    "types::Dim3": "rocprofiler_dim3_t",
    "types::HipExtent": "struct { size_t width; size_t height; size_t depth; }",
    "types::HipPitchedPtr": "struct { void* ptr; size_t pitch; size_t xsize; size_t ysize; }",
    "types::HipIpcHandle": "struct { char reserved[64]; }",
}

# C types for Rust scalars when the C spelling is a HIP typedef or enum.
RUST_SCALARS = {
    "i32": "int", "u32": "unsigned int", "usize": "size_t", "u64": "uint64_t",
    "i64": "int64_t", "f32": "float", "bool": "bool", "u8": "unsigned char",
    "u16": "unsigned short",
}

# HSA handle structs (`{ uint64_t handle; }`) that compat/hsa_types.h declares; the
# others become an anonymous struct of the same shape.
HSA_COMPAT = {"hsa_agent_t", "hsa_signal_t", "hsa_region_t", "hsa_executable_t",
              "hsa_amd_memory_pool_t"}

HIP_LINE = re.compile(r"^\s*(?:runtime|compiler) fn (\w+)\((.*)\) -> .*;\s*$")
HSA_LINE = re.compile(r"^\s*\d+ fn (\w+)\((.*)\) -> .*;\s*$")
PARAM = re.compile(r'\s*(?:r#)?(\w+): ([^=]+?) = "([^"]*)"\s*$')


def split_params(text):
    """Parameters separated by commas outside quotes."""
    out, cur, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def parse(source, line_re):
    functions = []
    with open(source) as f:
        for line in f:
            m = line_re.match(line)
            if not m:
                continue
            params = []
            for p in split_params(m.group(2)):
                pm = PARAM.match(p)
                if not pm:
                    sys.exit("cannot read parameter %r of %s" % (p, m.group(1)))
                params.append((pm.group(1), pm.group(2).strip(), pm.group(3).strip()))
            functions.append((m.group(1), params))
    return functions


def base_of(c_type):
    """(const?, base name, pointer depth) of a C type spelling."""
    stars = c_type.count("*")
    words = c_type.replace("*", " ").split()
    const = "const" in words
    words = [w for w in words if w not in ("const", "struct", "enum", "volatile")]
    return const, " ".join(words), stars


def handles(functions):
    """Typedef names that are pointers themselves (passed as a Rust pointer with no
    `*` in the C spelling): `hipStream_t`, `hipEvent_t`, ..."""
    out = set()
    for _, params in functions:
        for _, rust, c in params:
            const, base, stars = base_of(c)
            if rust.startswith("*") and stars == 0 and base not in SCALARS:
                out.add(base)
    return out


def c_decl(rust, c, handle_names):
    """The field type for a parameter of Rust type `rust` and C spelling `c`."""
    if rust in BY_VALUE:
        return BY_VALUE[rust]
    const, base, stars = base_of(c)
    if "(" in c:
        return "void*"  # a function pointer
    if rust.startswith("*"):
        if base in SCALARS or base in HSA_COMPAT:
            return ("const " if const else "") + base + "*" * stars
        if stars == 0:
            return "void*"  # a handle typedef
        depth = stars + (1 if base in handle_names else 0)
        return ("const " if const and depth == 1 else "") + "void" + "*" * depth
    if base in SCALARS:
        return base
    if rust == "u64" and base.startswith("hsa_"):
        return base if base in HSA_COMPAT else "struct { uint64_t handle; }"
    return RUST_SCALARS[rust]


def member(name, params, handle_names, no_args):
    lines = ["    struct", "    {"]
    if not params:
        lines.append("        %s no_args;" % no_args)
    for pname, rust, c in params:
        decl = c_decl(rust, c, handle_names)
        const, base, stars = base_of(c)
        plain = ("const " if const else "") + base + "*" * stars
        field = RENAMED.get((name, pname), pname)
        note = "" if decl == plain or "(" in c else "  /* %s */" % c
        lines.append("        %s %s;%s" % (decl, field, note))
    lines.append("    } %s;" % name)
    return "\n".join(lines)


HIP_HEADER = """/* rocprofiler-sdk/hip/api_args.h -- argument and return-value storage of traced HIP calls.
 *
 * GENERATED by capi/abi/gen_api_args.py from the tool library's interposer list -- do
 * not edit by hand.
 *
 * rocprofiler_hip_api_args_t holds the arguments of one HIP call, one member struct per
 * function (named after it), the parameters in declaration order; the tool library
 * fills the member of the traced function in every HIP callback's payload (values as
 * passed at ENTER: an output parameter is a pointer whose target the call writes).
 *
 * This header does not include HIP's: HIP's own types are declared as types of the
 * same size and alignment (the original C type follows each such field in a comment):
 * handles and pointers to HIP structs as void pointers, enums as int, dim3 as
 * rocprofiler_dim3_t (as AMD's header does), hipExtent / hipPitchedPtr / IPC handles
 * as anonymous structs with HIP's field names.  Every member's offsets and sizes are
 * those of AMD's header (checked by the ABI table, capi/abi/).  Functions of this
 * runtime that AMD's header lacks or declares differently have no member (see
 * gen_api_args.py); their arguments reach tools through
 * rocprofiler_iterate_callback_tracing_kind_operation_args.
 *
 * The return-value union is declared member by member; its two HIP-typed members use
 * layout-identical plain C types (hipError_t is an int-sized enum; hipChannelFormatDesc
 * is five ints).
 */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#    include <stdbool.h>
#endif

/* AMD's version reaches these C library headers through the HIP runtime headers, and
 * tool sources (AMD's samples among them) rely on that for assert/memset/printf. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ROCPROFILER_EXTERN_C_INIT

/* Member type of argument-less functions. */
typedef struct rocprofiler_hip_api_no_args
{
    char empty;
} rocprofiler_hip_api_no_args;

typedef union rocprofiler_hip_api_retval_t
{
    uint64_t    uint64_t_retval;
    int         int_retval;
    const char* const_charp_retval;
    int         hipError_t_retval;           /* hipError_t */
    struct
    {
        int x;
        int y;
        int z;
        int w;
        int f;                               /* hipChannelFormatKind */
    } hipChannelFormatDesc_retval;           /* hipChannelFormatDesc */
    void** voidpp_retval;
} rocprofiler_hip_api_retval_t;

typedef union rocprofiler_hip_api_args_t
{
"""

HSA_HEADER = """/* rocprofiler-sdk/hsa/api_args.h -- argument and return-value storage of traced HSA calls.
 *
 * GENERATED by capi/abi/gen_api_args.py from the tool library's interposer list -- do
 * not edit by hand.
 *
 * rocprofiler_hsa_api_args_t holds the arguments of one HSA call, one member struct per
 * function of the core and AMD extension tables (named after it), the parameters in
 * declaration order; the tool library fills the member of the traced function in every
 * HSA callback's payload.
 *
 * Handles passed by value are the compat types of compat/hsa_types.h (the HSA
 * headers' own when those are in use) or an anonymous struct of the same shape
 * (`{ uint64_t handle; }`); enums are int or unsigned int, pointers to HSA structs and
 * function pointers are void pointers; the original C type follows such fields in a
 * comment.  Every member's offsets and sizes are those of AMD's header (checked by the
 * ABI table, capi/abi/).  Functions AMD's header declares differently have no member
 * (see gen_api_args.py); their arguments reach tools through
 * rocprofiler_iterate_callback_tracing_kind_operation_args.
 *
 * The return-value union is declared member by member.  With the real HSA headers in
 * use (see compat/hsa_types.h) its members have the HSA types; otherwise the
 * layout-identical integer types (hsa_signal_value_t is int64_t on 64-bit hosts,
 * hsa_status_t is an int-sized enum).
 */
#pragma once

#include <rocprofiler-sdk/compat/hsa_types.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/ext_version.h>
#include <rocprofiler-sdk/hsa/api_trace_version.h>

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#    include <stdbool.h>
#endif

ROCPROFILER_EXTERN_C_INIT

typedef struct rocprofiler_hsa_api_no_args
{
    char empty;
} rocprofiler_hsa_api_no_args;

typedef union rocprofiler_hsa_api_retval_t
{
    uint64_t uint64_t_retval;
    uint32_t uint32_t_retval;
#if ROCPROFILER_SDK_USE_SYSTEM_HSA > 0
    hsa_signal_value_t hsa_signal_value_t_retval;
    hsa_status_t       hsa_status_t_retval;
#else
    int64_t hsa_signal_value_t_retval;
    int32_t hsa_status_t_retval;
#endif
} rocprofiler_hsa_api_retval_t;

typedef union rocprofiler_hsa_api_args_t
{
"""

FOOTER = """    /* AMD's size and alignment, whatever the members above need. */
    uint8_t  rocprofiler_opaque_bytes[%d];
    uint64_t rocprofiler_opaque_align;
} rocprofiler_%s_api_args_t;

ROCPROFILER_EXTERN_C_FINI

ROCPROFILER_CXX_CODE(static_assert(sizeof(rocprofiler_%s_api_args_t) == %d,
                                   "rocprofiler_%s_api_args_t must match AMD's size");)
"""


TARGETS = [
    # (runtime, interposer list, its line format, excluded, header, AMD's union size)
    ("hip", os.path.join(INTERCEPT, "hip", "generated.rs"), HIP_LINE, HIP_EXCLUDED, HIP_HEADER,
     88),
    ("hsa", os.path.join(INTERCEPT, "hsa", "generated.rs"), HSA_LINE, HSA_EXCLUDED, HSA_HEADER,
     192),
]


def main():
    for runtime, source, line_re, excluded, header, size in TARGETS:
        functions = parse(source, line_re)
        names = handles(functions)
        kept = [(n, p) for n, p in functions if n not in excluded]
        out = os.path.join(INCLUDE, runtime, "api_args.h")
        no_args = "rocprofiler_%s_api_no_args" % runtime
        with open(out, "w") as f:
            f.write(header)
            f.write("\n".join(member(n, p, names, no_args) for n, p in kept))
            f.write("\n" + FOOTER % (size, runtime, runtime, size, runtime))
        print("wrote %s: %d of %d functions (%d excluded)"
              % (os.path.relpath(out, ROOT), len(kept), len(functions),
                 len(functions) - len(kept)))


if __name__ == "__main__":
    sys.exit(main())
