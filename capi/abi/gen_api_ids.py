#!/usr/bin/env python3
"""Regenerate the operation-id headers under capi/include from AMD's published
rocprofiler-sdk headers.

Only enumerator *names and values* are carried over; the files are written in
our own format (one explicit `NAME = value,` per line).  AMD's headers select
some enumerators with `#if <runtime table step version>`; we run the C++
preprocessor over them with the ROCm 7.0 runtime headers on the include path,
so the result is the ROCm 7.0 list (HIP runtime table step 13, HSA AMD
extension table step 7, rocDecode table step 1).

usage: gen_api_ids.py --cxx-flags "<flags for g++ -E>" --out capi/include

The flags must make <rocprofiler-sdk/...> resolve to AMD's (configured) headers
and <hip/...>, <hsa/...> to the matching runtime headers.  See
capi/include/README.md for how the checked-in files were produced.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

# (output header, amd header to preprocess, [enum type names], title)
TARGETS = [
    ("rocprofiler-sdk/hip/runtime_api_id.h", "rocprofiler-sdk/hip/runtime_api_id.h",
     ["rocprofiler_hip_runtime_api_id_t"], "HIP runtime API operation ids"),
    ("rocprofiler-sdk/hip/compiler_api_id.h", "rocprofiler-sdk/hip/compiler_api_id.h",
     ["rocprofiler_hip_compiler_api_id_t"], "HIP compiler (kernel launch glue) API operation ids"),
    ("rocprofiler-sdk/hip/table_id.h", "rocprofiler-sdk/hip/table_id.h",
     ["rocprofiler_hip_table_id_t"], "HIP dispatch table ids"),
    ("rocprofiler-sdk/hsa/core_api_id.h", "rocprofiler-sdk/hsa/core_api_id.h",
     ["rocprofiler_hsa_core_api_id_t"], "HSA core API operation ids"),
    ("rocprofiler-sdk/hsa/amd_ext_api_id.h", "rocprofiler-sdk/hsa/amd_ext_api_id.h",
     ["rocprofiler_hsa_amd_ext_api_id_t"], "HSA AMD extension API operation ids"),
    ("rocprofiler-sdk/hsa/image_ext_api_id.h", "rocprofiler-sdk/hsa/image_ext_api_id.h",
     ["rocprofiler_hsa_image_ext_api_id_t"], "HSA image extension API operation ids"),
    ("rocprofiler-sdk/hsa/finalize_ext_api_id.h", "rocprofiler-sdk/hsa/finalize_ext_api_id.h",
     ["rocprofiler_hsa_finalize_ext_api_id_t"], "HSA finalizer extension API operation ids"),
    ("rocprofiler-sdk/hsa/table_id.h", "rocprofiler-sdk/hsa/table_id.h",
     ["rocprofiler_hsa_table_id_t"], "HSA dispatch table ids"),
    ("rocprofiler-sdk/marker/api_id.h", "rocprofiler-sdk/marker/api_id.h",
     ["rocprofiler_marker_core_api_id_t", "rocprofiler_marker_control_api_id_t",
      "rocprofiler_marker_name_api_id_t", "rocprofiler_marker_core_range_api_id_t"],
     "ROCTx marker API operation ids"),
    ("rocprofiler-sdk/marker/table_id.h", "rocprofiler-sdk/marker/table_id.h",
     ["rocprofiler_marker_table_id_t"], "ROCTx dispatch table ids"),
    ("rocprofiler-sdk/rccl/api_id.h", "rocprofiler-sdk/rccl/api_id.h",
     ["rocprofiler_rccl_api_id_t"], "RCCL API operation ids"),
    ("rocprofiler-sdk/rccl/table_id.h", "rocprofiler-sdk/rccl/table_id.h",
     ["rocprofiler_rccl_table_id_t"], "RCCL dispatch table ids"),
    ("rocprofiler-sdk/rocdecode/api_id.h", "rocprofiler-sdk/rocdecode/api_id.h",
     ["rocprofiler_rocdecode_api_id_t"], "rocDecode API operation ids"),
    ("rocprofiler-sdk/rocdecode/table_id.h", "rocprofiler-sdk/rocdecode/table_id.h",
     ["rocprofiler_rocdecode_table_id_t"], "rocDecode dispatch table ids"),
    ("rocprofiler-sdk/rocjpeg/api_id.h", "rocprofiler-sdk/rocjpeg/api_id.h",
     ["rocprofiler_rocjpeg_api_id_t"], "rocJPEG API operation ids"),
    ("rocprofiler-sdk/rocjpeg/table_id.h", "rocprofiler-sdk/rocjpeg/table_id.h",
     ["rocprofiler_rocjpeg_table_id_t"], "rocJPEG dispatch table ids"),
    ("rocprofiler-sdk/ompt/api_id.h", "rocprofiler-sdk/ompt/api_id.h",
     ["rocprofiler_ompt_operation_t"], "OpenMP tools (OMPT) callback operation ids"),
    ("rocprofiler-sdk/kfd/kfd_id.h", "rocprofiler-sdk/kfd/kfd_id.h",
     ["rocprofiler_kfd_event_page_migrate_operation_t",
      "rocprofiler_kfd_event_page_fault_operation_t",
      "rocprofiler_kfd_event_queue_operation_t",
      "rocprofiler_kfd_event_unmap_from_gpu_operation_t",
      "rocprofiler_kfd_event_dropped_events_operation_t",
      "rocprofiler_kfd_page_migrate_operation_t",
      "rocprofiler_kfd_page_fault_operation_t",
      "rocprofiler_kfd_queue_operation_t"],
     "KFD (kernel driver) event operation ids"),
]


def preprocess(header, flags):
    src = "#include <%s>\n" % header
    cmd = ["g++", "-std=c++17", "-E", "-P", "-x", "c++", "-"] + shlex.split(flags)
    return subprocess.run(cmd, input=src, capture_output=True, text=True, check=True).stdout


def strip_attrs(text):
    # drop __attribute__((...)) and [[...]] noise the preprocessor leaves behind
    text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", text)
    return re.sub(r"\[\[[^\]]*\]\]", "", text)


def parse_enum(text, name):
    m = re.search(r"typedef\s+enum\s+%s\s*\{([^{}]*)\}\s*%s\s*;" % (re.escape(name), re.escape(name)),
                  text, re.S)
    if not m:
        raise SystemExit("enum %s not found" % name)
    body = m.group(1)
    items = []
    known = {}
    nxt = 0
    for part in body.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" in part:
            ename, expr = [p.strip() for p in part.split("=", 1)]
            expr_py = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expr)
            value = int(eval(expr_py, {"__builtins__": {}}, dict(known)))
        else:
            ename, value = part, nxt
        known[ename] = value
        items.append((ename, value))
        nxt = value + 1
    return items


def render(out_rel, title, enums):
    guard_comment = ("/* %s.\n"
                     " *\n"
                     " * GENERATED by capi/abi/gen_api_ids.py -- do not edit by hand.\n"
                     " * Enumerator names and values are those of AMD rocprofiler-sdk 1.0\n"
                     " * (ROCm 7.0); the values are part of the tool ABI.\n"
                     " */\n") % title
    lines = [guard_comment, "#pragma once\n", "#include <rocprofiler-sdk/defines.h>\n"]
    for name, items in enums:
        lines.append("\ntypedef enum %s\n{\n" % name)
        width = max(len(n) for n, _ in items)
        for n, v in items:
            lines.append("    %s = %d,\n" % (n.ljust(width), v))
        lines.append("} %s;\n" % name)
    return "".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx-flags", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    # the id headers are not all self-contained in AMD's tree, so preprocess
    # the umbrella header once and pick every enum out of that
    text = strip_attrs(preprocess("rocprofiler-sdk/rocprofiler.h", args.cxx_flags))
    for out_rel, _amd_hdr, names, title in TARGETS:
        enums = [(n, parse_enum(text, n)) for n in names]
        path = os.path.join(args.out, out_rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(render(out_rel, title, enums))
        print("%-45s %s" % (out_rel, ", ".join("%s[%d]" % (n, len(i)) for n, i in enums)))


if __name__ == "__main__":
    sys.exit(main())
