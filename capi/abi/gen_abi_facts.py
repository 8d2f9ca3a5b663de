#!/usr/bin/env python3
"""Generate capi/abi/abi_facts.c: a C program that prints the ABI facts
(sizes, alignments, field offsets, bit-field positions, enumerator values and a
few macro values) of every public type declared in capi/include.

The list of names is discovered by parsing OUR headers with pycparser; the
generated program only uses those names, so the very same file compiles against
AMD's headers (which is how capi/abi/amd-rocprofiler-sdk-*.tsv were measured)
and against ours (which is what capi/tests/abi.rs does).

usage: python3 capi/abi/gen_abi_facts.py            (from the repository root)
needs: gcc, pycparser (pip install pycparser)
"""
import os
import subprocess
import sys
import tempfile

from pycparser import c_ast, c_parser

HERE = os.path.dirname(os.path.abspath(__file__))
CAPI = os.path.dirname(HERE)
INCLUDE = os.path.join(CAPI, "include")
OUT = os.path.join(HERE, "abi_facts.c")

HEADERS = [
    "rocprofiler-sdk/registration.h",
    "rocprofiler-sdk/rocprofiler.h",
    "rocprofiler-sdk-roctx/roctx.h",
    "rocprofiler-sdk-roctx/api_trace.h",
]

# integer-valued macros whose values are part of the contract
MACROS = [
    "ROCPROFILER_VERSION_MAJOR", "ROCPROFILER_VERSION_MINOR", "ROCPROFILER_VERSION_PATCH",
    "ROCPROFILER_SDK_VERSION_MAJOR", "ROCPROFILER_SDK_VERSION_MINOR",
    "ROCPROFILER_SDK_VERSION_PATCH", "ROCPROFILER_SDK_SOVERSION", "ROCPROFILER_SOVERSION",
    "ROCPROFILER_SDK_VERSION", "ROCPROFILER_VERSION", "ROCPROFILER_IS_ROCPROFILER_SDK",
    "ROCPROFILER_SDK_BETA_COMPAT", "ROCPROFILER_SDK_BETA_COMPAT_SUPPORTED",
    "ROCPROFILER_SDK_DEPRECATED_WARNINGS", "ROCPROFILER_SDK_EXPERIMENTAL_WARNINGS",
    "ROCPROFILER_CORRELATION_ID_INTERNAL_NONE", "ROCPROFILER_CORRELATION_ID_ANCESTOR_NONE",
    "ROCPROFILER_CODE_OBJECT_ID_NONE",
    "ROCPROFILER_HSA_API_TABLE_MAJOR_VERSION", "ROCPROFILER_HSA_CORE_API_TABLE_MAJOR_VERSION",
    "ROCPROFILER_HSA_AMD_EXT_API_TABLE_MAJOR_VERSION",
    "ROCPROFILER_HSA_FINALIZER_API_TABLE_MAJOR_VERSION",
    "ROCPROFILER_HSA_IMAGE_API_TABLE_MAJOR_VERSION",
    "ROCPROFILER_HSA_AMD_EXT_API_TABLE_STEP_VERSION",
    "ROCPROFILER_HSA_IMAGE_API_TABLE_STEP_VERSION",
    "ROCTX_VERSION_MAJOR", "ROCTX_VERSION_MINOR", "ROCTX_VERSION_PATCH", "ROCTX_VERSION",
    "ROCTX_SOVERSION", "ROCTX_IS_ROCPROFILER_SDK",
    "ROCTX_API_TABLE_VERSION_MAJOR", "ROCTX_API_TABLE_VERSION_STEP",
    "ROCTX_CORE_API_TABLE_VERSION_MAJOR", "ROCTX_CORE_API_TABLE_VERSION_STEP",
    "ROCTX_CONTROL_API_TABLE_VERSION_MAJOR", "ROCTX_CONTROL_API_TABLE_VERSION_STEP",
    "ROCTX_RESOURCE_API_TABLE_VERSION_MAJOR", "ROCTX_RESOURCE_API_TABLE_VERSION_STEP",
]
# string-valued macros
STRING_MACROS = ["ROCPROFILER_SDK_VERSION_STRING", "ROCPROFILER_VERSION_STRING",
                 "ROCTX_VERSION_STRING"]
# handle-valued macros: print .handle
HANDLE_MACROS = ["ROCPROFILER_CONTEXT_NONE"]

# Types we declare but whose layout is not an AMD fact worth pinning member by member
# (opaque placeholders expose only their size/alignment).
OPAQUE_FIELD_PREFIX = "rocprofiler_opaque_"

STUB_LIBC = {
    "stdint.h": """
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long uint64_t; typedef unsigned long uintptr_t;
#define UINT64_MAX 18446744073709551615UL
#define UINT64_C(x) x##UL
""",
    "stddef.h": "typedef unsigned long size_t;\n#define NULL ((void*)0)\n",
    "sched.h": "",
    "assert.h": "",
    "stdio.h": "",
    "stdlib.h": "",
    "string.h": "",
    "stdbool.h": "typedef _Bool bool;\n#define true 1\n#define false 0\n",
}


def preprocess():
    with tempfile.TemporaryDirectory() as stub:
        for name, text in STUB_LIBC.items():
            with open(os.path.join(stub, name), "w") as f:
                f.write(text)
        src = "".join("#include <%s>\n" % h for h in HEADERS)
        cmd = ["gcc", "-E", "-P", "-nostdinc", "-I", stub, "-I", INCLUDE,
               "-DROCPROFILER_SDK_USE_SYSTEM_HSA=0", "-DROCPROFILER_SDK_USE_SYSTEM_HSAKMT=0",
               "-D__attribute__(x)=", "-D__has_include(x)=0", "-x", "c", "-"]
        return subprocess.run(cmd, input=src, capture_output=True, text=True, check=True).stdout


class Collector:
    def __init__(self):
        self.structs = []   # (typedef name, [fact lines])
        self.enums = []     # (typedef name, [enumerator names])
        self.aliases = []   # typedef names of plain aliases to records/enums
        self.tagged = {}    # struct tag -> body node (for typedefs of 'struct X' declared earlier)

    def visit(self, ast):
        for ext in ast.ext:
            if isinstance(ext, c_ast.Typedef):
                self.typedef(ext)

    def typedef(self, td):
        name = td.name
        t = td.type
        if not isinstance(t, c_ast.TypeDecl):
            return
        inner = t.type
        if isinstance(inner, (c_ast.Struct, c_ast.Union)):
            if inner.decls is None:
                return      # forward declaration
            fields = []
            self.walk_fields(inner, "", fields)
            self.structs.append((name, fields))
        elif isinstance(inner, c_ast.Enum):
            if inner.values is None:
                return
            self.enums.append((name, [e.name for e in inner.values.enumerators]))
        elif isinstance(inner, c_ast.IdentifierType):
            target = inner.names[-1]
            known = {n for n, _ in self.structs} | {n for n, _ in self.enums}
            if target in known:
                self.aliases.append(name)

    def walk_fields(self, rec, prefix, out):
        for d in rec.decls or []:
            if d.name is None:
                # anonymous struct/union member: its fields belong to the parent
                if isinstance(d.type, (c_ast.Struct, c_ast.Union)):
                    self.walk_fields(d.type, prefix, out)
                continue
            if d.name.startswith(OPAQUE_FIELD_PREFIX):
                continue
            path = prefix + d.name
            if d.bitsize is not None:
                out.append(("bitfield", path))
                continue
            out.append(("field", path))
            ty = d.type
            if isinstance(ty, c_ast.TypeDecl) and isinstance(ty.type, (c_ast.Struct, c_ast.Union)) \
                    and ty.type.decls is not None:
                # struct/union defined inline: describe its members too
                self.walk_fields(ty.type, path + ".", out)


def render(col):
    o = []
    o.append("""/* GENERATED by capi/abi/gen_abi_facts.py -- do not edit by hand.
 *
 * Prints one ABI fact per line, `kind<TAB>name<TAB>value`, for every public type of
 * the rocprofiler-sdk 1.0 headers as declared in capi/include.  Compiled against
 * AMD's headers it produced capi/abi/amd-rocprofiler-sdk-develop-1b1610f.tsv; compiled against
 * ours (capi/tests/abi.rs) its output must be identical.
 */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>
#include <rocprofiler-sdk-roctx/api_trace.h>
#include <rocprofiler-sdk-roctx/roctx.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
#    define ABI_ALIGNOF(T) alignof(T)
#else
#    define ABI_ALIGNOF(T) _Alignof(T)
#endif

#define SIZE(T) printf("sizeof\\t%s\\t%zu\\nalignof\\t%s\\t%zu\\n", #T, sizeof(T), #T, (size_t) ABI_ALIGNOF(T));
#define FIELD(T, F)                                                                        \\
    printf("offsetof\\t%s.%s\\t%zu\\nfieldsize\\t%s.%s\\t%zu\\n", #T, #F, (size_t) offsetof(T, F), \\
           #T, #F, sizeof(((T*) 0)->F));
/* bit position and width of a bit-field: set it to all ones in a zeroed object and
 * look which bits of the object changed */
#define BITFIELD(T, F)                                                                     \\
    do                                                                                     \\
    {                                                                                      \\
        T              obj_;                                                               \\
        unsigned char* p_ = (unsigned char*) &obj_;                                        \\
        size_t         i_, first_ = (size_t) -1, count_ = 0;                               \\
        memset(&obj_, 0, sizeof(obj_));                                                    \\
        obj_.F = ~0u;                                                                      \\
        for(i_ = 0; i_ < sizeof(obj_) * 8; ++i_)                                           \\
            if(p_[i_ / 8] & (1u << (i_ % 8)))                                              \\
            {                                                                              \\
                if(first_ == (size_t) -1) first_ = i_;                                     \\
                ++count_;                                                                  \\
            }                                                                              \\
        printf("bitfield\\t%s.%s\\t%zu:%zu\\n", #T, #F, first_, count_);                     \\
    } while(0);
#define ENUMV(E) printf("enum\\t%s\\t%lld\\n", #E, (long long) (E));
#define MACRO(M) printf("macro\\t%s\\t%lld\\n", #M, (long long) (M));
#define SMACRO(M) printf("macro\\t%s\\t\\"%s\\"\\n", #M, M);
#define HMACRO(M) printf("macro\\t%s.handle\\t%llu\\n", #M, (unsigned long long) (M).handle);

#if defined(__GNUC__)
#    pragma GCC diagnostic ignored "-Woverflow"
#    pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

""")
    # split into a few functions to keep compile times short
    o.append("static void\nrecords(void)\n{\n")
    for name, fields in col.structs:
        o.append("    SIZE(%s)\n" % name)
        for kind, path in fields:
            o.append("    %s(%s, %s)\n" % ("FIELD" if kind == "field" else "BITFIELD", name, path))
    for name in col.aliases:
        o.append("    SIZE(%s)\n" % name)
    o.append("}\n\nstatic void\nenums(void)\n{\n")
    for name, values in col.enums:
        o.append("    SIZE(%s)\n" % name)
        for v in values:
            o.append("    ENUMV(%s)\n" % v)
    o.append("}\n\nstatic void\nmacros(void)\n{\n")
    for m in MACROS:
        o.append("    MACRO(%s)\n" % m)
    for m in STRING_MACROS:
        o.append("    SMACRO(%s)\n" % m)
    for m in HANDLE_MACROS:
        o.append("    HMACRO(%s)\n" % m)
    o.append("}\n\nint\nmain(void)\n{\n    records();\n    enums();\n    macros();\n    return 0;\n}\n")
    return "".join(o)


def main():
    text = preprocess()
    ast = c_parser.CParser().parse(text, filename="<capi>")
    col = Collector()
    col.visit(ast)
    with open(OUT, "w") as f:
        f.write(render(col))
    nfields = sum(len(f) for _, f in col.structs)
    nenum = sum(len(v) for _, v in col.enums)
    print("wrote %s: %d records (%d members), %d aliases, %d enums (%d enumerators), %d macros"
          % (os.path.relpath(OUT), len(col.structs), nfields, len(col.aliases), len(col.enums),
             nenum, len(MACROS) + len(STRING_MACROS) + len(HANDLE_MACROS)))


if __name__ == "__main__":
    sys.exit(main())
