#!/usr/bin/env python3
"""Generate capi/include/rocprofiler-sdk/cxx/serialization/{save,load}.hpp: cereal-style
`save` / `load` function templates for every struct (and the few value-like unions) that
our C headers declare, so that a tool can write any record, callback payload, agent, ...
with any cereal archive, e.g.

    cereal::JSONOutputArchive ar{out};
    ar(cereal::make_nvp("record", *record));   // a rocprofiler_buffer_tracing_*_record_t

The types and their members are read from OUR headers (pycparser, as gen_abi_facts.py
does), so the functions follow the headers whenever they change: re-run this script.
Each member is written under its C name, in declaration order:

  * integers, enums, floats, fixed arrays          the value (cereal's own rules)
  * bit-fields                                     copied to a temporary, then written
  * `const char*` / `char*`                        a string ("" for NULL)
  * a nested struct / value-like union             its own save (an object)
  * `rocprofiler_user_data_t`                      its 64-bit `value`
  * `T* X` (or `T** X`) with a sibling `X_count`   an array of the `X_count` elements
  * a pointer to an `hsa_queue_t` (`queue`)        `queue_id`: the queue's id
  * other pointers, function pointers, the API
    argument unions and `reserved*` padding        left out
  * hsakmt-style unions { Value; struct ui32 }     the bit-fields of `ui32`

with these exceptions, which follow AMD's JSON keys: the memory-allocation `address` is a
hex string (utility::as_hex(handle, 16)), rocprofiler_counter_info_v1_t's
`dimensions_instances` is written as `instances`.

`load` reads back what `save` wrote, but for pointers other than strings and const members
(loaded strings are allocated with new[] and owned by the caller).

usage: python3 capi/abi/gen_cxx_serialization.py   (from anywhere; needs gcc, pycparser)
"""
import os
import sys

from pycparser import c_ast, c_parser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_abi_facts  # noqa: E402  (shares the preprocessing of our headers)

HERE = os.path.dirname(os.path.abspath(__file__))
CAPI = os.path.dirname(HERE)
OUT_DIR = os.path.join(CAPI, "include", "rocprofiler-sdk", "cxx", "serialization")

HEADERS = ["rocprofiler-sdk/registration.h", "rocprofiler-sdk/rocprofiler.h"]

# (type, member) -> JSON key where AMD's key is not the member's name
KEY_RENAMES = {("rocprofiler_counter_info_v1_t", "dimensions_instances"): "instances"}
# (type suffix, member): written as a hex string of the handle
HEX_ADDRESS = {"address"}

INTEGRAL = {
    "char", "signed", "unsigned", "short", "int", "long", "_Bool", "bool", "float", "double",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "size_t", "uintptr_t",
}


class Types:
    """Every typedef of the headers: name -> ('record', Struct|Union node) | ('enum',)
    | ('alias', target name) | ('scalar',) | ('func',)."""

    def __init__(self, ast):
        self.kind = {}
        self.order = []  # record typedef names in declaration order
        self.tags = {}
        for ext in ast.ext:
            if isinstance(ext, c_ast.Decl) and isinstance(ext.type, (c_ast.Struct, c_ast.Union)):
                if ext.type.decls is not None and ext.type.name:
                    self.tags[ext.type.name] = ext.type
            if not isinstance(ext, c_ast.Typedef):
                continue
            t = ext.type
            if isinstance(t, c_ast.TypeDecl):
                inner = t.type
                if isinstance(inner, (c_ast.Struct, c_ast.Union)):
                    body = inner if inner.decls is not None else self.tags.get(inner.name)
                    if inner.decls is not None and inner.name:
                        self.tags[inner.name] = inner
                    if body is None:
                        continue
                    if any(self.kind.get(n, (None, None))[0] == "record"
                           and self.kind[n][1] is body for n in self.order):
                        self.kind[ext.name] = ("alias", None)
                        continue
                    self.kind[ext.name] = ("record", body)
                    self.order.append(ext.name)
                elif isinstance(inner, c_ast.Enum):
                    self.kind[ext.name] = ("enum",)
                elif isinstance(inner, c_ast.IdentifierType):
                    target = inner.names[-1]
                    k = self.kind.get(target)
                    if k and k[0] == "record":
                        self.kind[ext.name] = ("alias", target)
                    elif k and k[0] == "enum":
                        self.kind[ext.name] = ("enum",)
                    else:
                        self.kind[ext.name] = ("scalar",)
            elif isinstance(t, c_ast.PtrDecl):
                self.kind[ext.name] = ("func",) if isinstance(t.type, c_ast.FuncDecl) \
                    else ("pointer",)

    def resolve(self, name):
        k = self.kind.get(name)
        while k and k[0] == "alias" and k[1]:
            name = k[1]
            k = self.kind.get(name)
        return name, k


def type_name(node):
    """The identifier a TypeDecl names (or None)."""
    if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
        names = node.type.names
        return "unsigned" if names[0] == "unsigned" else names[-1]
    return None


def is_value_union(types, name):
    """How a union is written: ('member', m) one member, ('ui32', [bits]) hsakmt style,
    None: not at all."""
    _, k = types.resolve(name)
    body = k[1]
    members = [d for d in body.decls or [] if d.name]
    names = [d.name for d in members]
    for d in members:
        if d.name == "ui32" and isinstance(d.type, c_ast.TypeDecl) \
                and isinstance(d.type.type, c_ast.Struct) and d.type.type.decls:
            return ("ui32", [b.name for b in d.type.type.decls if b.name])
    for pick in ("handle", "value", "uint64_t_retval", "int64_t_retval"):
        if pick in names:
            return ("member", pick)
    for d in members:
        if d.name.endswith("_retval") and type_name(d.type) in INTEGRAL | {"int32_t"}:
            return ("member", d.name)
    return None


def field_plan(types, owner, decls, out):
    """[(how, member, key, extra)] for the members of one record."""
    names = {d.name for d in decls if d.name}
    for d in decls:
        if d.name is None:
            if isinstance(d.type, (c_ast.Struct, c_ast.Union)) and d.type.decls:
                field_plan(types, owner, d.type.decls, out)
            continue
        m = d.name
        if m.startswith("reserved") or m.startswith("rocprofiler_opaque_") or m == "padding":
            continue
        key = KEY_RENAMES.get((owner, m), m)
        if d.bitsize is not None:
            out.append(("bitfield", m, key, None))
            continue
        t = d.type
        if isinstance(t, c_ast.ArrayDecl):
            out.append(("value", m, key, None))
            continue
        if isinstance(t, c_ast.PtrDecl):
            inner = t.type
            if isinstance(inner, c_ast.FuncDecl):
                continue
            tn = type_name(inner)
            if tn == "char":
                out.append(("cstr", m, key, None))
            elif m + "_count" in names:
                if isinstance(inner, c_ast.PtrDecl):
                    out.append(("ptrarray", m, key, m + "_count"))
                elif tn and types.resolve(tn)[1] and types.resolve(tn)[1][0] == "record":
                    out.append(("array", m, key, m + "_count"))
            elif tn == "hsa_queue_t":
                out.append(("queue", m, "queue_id", None))
            continue
        tn = type_name(t)
        if tn is None:
            continue  # inline struct/union member
        # a const member is written but never loaded
        const = "const" if "const" in (t.quals or []) else None
        rname, k = types.resolve(tn)
        if k is None or k[0] in ("enum", "scalar") or tn in INTEGRAL:
            out.append(("value", m, key, const))
        elif k[0] == "record":
            body = k[1]
            if rname == "rocprofiler_user_data_t":
                out.append(("user_data", m, key, None))
            elif isinstance(body, c_ast.Union):
                if rname.endswith("_api_args_t") or is_value_union(types, rname) is None:
                    continue
                if m in HEX_ADDRESS and rname == "rocprofiler_address_t" \
                        and "memory_allocation" in owner:
                    out.append(("hex", m, key, None))
                else:
                    out.append(("value", m, key, None))
            else:
                out.append(("value", m, key, const))
    return out


def records(types):
    """(name, how: 'struct'|'union', plan) for every type that gets functions."""
    result = []
    for name in types.order:
        body = types.kind[name][1]
        if isinstance(body, c_ast.Union):
            if name.endswith("_api_args_t"):
                continue
            how = is_value_union(types, name)
            if how is None:
                continue
            result.append((name, "union", how))
        else:
            result.append((name, "struct", field_plan(types, name, body.decls or [], [])))
    return result


PREAMBLE = """// GENERATED by capi/abi/gen_cxx_serialization.py from capi/include -- do not edit by hand.
//
// rocprofiler-sdk/cxx/serialization/{file} -- {what}
// (rocwasm's own implementation of the names AMD's rocprofiler-sdk provides here).
//
// Every function is a template over the archive, in namespace cereal (or the namespace
// ROCPROFILER_SDK_CEREAL_NAMESPACE_BEGIN / _END open, when a tool defines them first),
// where cereal's archives find them. Members are written under their C names.
#pragma once
"""

SAVE_HEAD = """
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>
#include <rocprofiler-sdk/cxx/name_info.hpp>
#include <rocprofiler-sdk/cxx/utility.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/common.hpp>
#include <cereal/types/deque.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// `ar(make_nvp("FIELD", data.FIELD))` and its variants, as tools write their own saves.
#define ROCP_SDK_SAVE_DATA_FIELD(FIELD)       ar(make_nvp(#FIELD, data.FIELD))
#define ROCP_SDK_SAVE_DATA_VALUE(NAME, VALUE) ar(make_nvp(NAME, data.VALUE))
#define ROCP_SDK_SAVE_VALUE(NAME, VALUE)      ar(make_nvp(NAME, VALUE))
#define ROCP_SDK_SAVE_DATA_CSTR(FIELD)                                                             \\
    ar(make_nvp(#FIELD, std::string{data.FIELD ? data.FIELD : ""}))
#define ROCP_SDK_SAVE_DATA_BITFIELD(NAME, VALUE)                                                   \\
    {                                                                                              \\
        auto rocp_sdk_bits_ = data.VALUE;                                                          \\
        ar(make_nvp(NAME, rocp_sdk_bits_));                                                        \\
    }

#if !defined(ROCPROFILER_SDK_CEREAL_NAMESPACE_BEGIN)
#    define ROCPROFILER_SDK_CEREAL_NAMESPACE_BEGIN                                                 \\
        namespace cereal                                                                           \\
        {
#endif
#if !defined(ROCPROFILER_SDK_CEREAL_NAMESPACE_END)
#    define ROCPROFILER_SDK_CEREAL_NAMESPACE_END }
#endif

namespace rocprofiler
{
namespace sdk
{
namespace serialization
{
/// One argument of a buffered API record, as rocprofiler_iterate_buffer_tracing_record_args
/// reports it.
struct buffer_tracing_args
{
    std::string type  = {};
    std::string name  = {};
    std::string value = {};
};

/// The arguments of a buffered API record (`*_api_ext` records carry them), in order.
template <typename RecordT>
std::vector<buffer_tracing_args>
get_buffer_tracing_args(const RecordT& data)
{
    auto args   = std::vector<buffer_tracing_args>{};
    auto header = rocprofiler_record_header_t{};
    header.hash = rocprofiler_record_header_compute_hash(ROCPROFILER_BUFFER_CATEGORY_TRACING,
                                                         static_cast<uint32_t>(data.kind));
    header.payload = const_cast<RecordT*>(&data);
    rocprofiler_iterate_buffer_tracing_record_args(
        header,
        [](rocprofiler_buffer_tracing_kind_t,
           rocprofiler_tracing_operation_t,
           uint32_t    arg_number,
           const void* const,
           int32_t,
           const char* arg_type,
           const char* arg_name,
           const char* arg_value_str,
           void*       user) -> int {
            auto* out = static_cast<std::vector<buffer_tracing_args>*>(user);
            if(out->size() <= arg_number) out->resize(arg_number + 1);
            (*out)[arg_number] = buffer_tracing_args{arg_type ? arg_type : "",
                                                     arg_name ? arg_name : "",
                                                     arg_value_str ? arg_value_str : ""};
            return 0;
        },
        &args);
    return args;
}

/// The `count` elements at `items` (none when NULL), copied.
template <typename Tp>
std::vector<Tp>
copy_array(const Tp* items, uint64_t count)
{
    return (items == nullptr) ? std::vector<Tp>{} : std::vector<Tp>(items, items + count);
}

/// The elements the `count` pointers at `items` point to (NULL pointers skipped), copied.
template <typename Tp>
std::vector<Tp>
copy_array(const Tp* const* items, uint64_t count)
{
    auto out = std::vector<Tp>{};
    for(uint64_t i = 0; items != nullptr && i < count; ++i)
        if(items[i] != nullptr) out.push_back(*items[i]);
    return out;
}
}  // namespace serialization
}  // namespace sdk
}  // namespace rocprofiler

ROCPROFILER_SDK_CEREAL_NAMESPACE_BEGIN

template <typename ArchiveT>
void
save(ArchiveT& ar, const ::rocprofiler::sdk::serialization::buffer_tracing_args& data)
{
    ROCP_SDK_SAVE_DATA_FIELD(type);
    ROCP_SDK_SAVE_DATA_FIELD(name);
    ROCP_SDK_SAVE_DATA_FIELD(value);
}

/// A name table (rocprofiler::sdk::get_buffer_tracing_names() and friends): an array of
/// {"kind": name, "operations": [names]}.
template <typename ArchiveT, typename EnumT, typename ValueT>
void
save(ArchiveT& ar, const ::rocprofiler::sdk::utility::name_info_impl<EnumT, ValueT>& data)
{
    auto ops = std::vector<std::string>{};
    for(const auto& op : data.operations)
        ops.emplace_back(op);
    ar(make_nvp("kind", std::string{data.name}));
    ar(make_nvp("operations", ops));
}

template <typename ArchiveT, typename EnumT, typename ValueT>
void
save(ArchiveT& ar, const ::rocprofiler::sdk::utility::name_info<EnumT, ValueT>& data)
{
    ar(make_size_tag(static_cast<size_type>(data.size())));
    for(const auto& entry : data)
        ar(entry);
}
"""

SAVE_TAIL = """
/// An `*_api_ext` record with its arguments (`args`: [{type, name, value}]).
template <typename ArchiveT>
void
save(ArchiveT& ar, const rocprofiler_buffer_tracing_hip_api_ext_record_t& data)
{
    save_fields(ar, data);
    ROCP_SDK_SAVE_VALUE("args", ::rocprofiler::sdk::serialization::get_buffer_tracing_args(data));
}

ROCPROFILER_SDK_CEREAL_NAMESPACE_END
"""

LOAD_HEAD = """
#include <rocprofiler-sdk/cxx/serialization/save.hpp>

#include <cstring>
#include <string>

// `ar(make_nvp("FIELD", data.FIELD))` into a member, and its variants.
#define ROCP_SDK_LOAD_DATA_FIELD(FIELD)       ar(make_nvp(#FIELD, data.FIELD))
#define ROCP_SDK_LOAD_DATA_VALUE(NAME, VALUE) ar(make_nvp(NAME, data.VALUE))
#define ROCP_SDK_LOAD_VALUE(NAME, VALUE)      ar(make_nvp(NAME, VALUE))
#define ROCP_SDK_LOAD_DATA_CSTR(FIELD)                                                             \\
    {                                                                                              \\
        auto rocp_sdk_text_ = std::string{};                                                       \\
        ar(make_nvp(#FIELD, rocp_sdk_text_));                                                      \\
        auto* rocp_sdk_copy_ = new char[rocp_sdk_text_.size() + 1];                                \\
        std::memcpy(rocp_sdk_copy_, rocp_sdk_text_.c_str(), rocp_sdk_text_.size() + 1);            \\
        data.FIELD = rocp_sdk_copy_;                                                               \\
    }
#define ROCP_SDK_LOAD_DATA_BITFIELD(NAME, VALUE)                                                   \\
    {                                                                                              \\
        auto rocp_sdk_bits_ = data.VALUE;                                                          \\
        ar(make_nvp(NAME, rocp_sdk_bits_));                                                        \\
        data.VALUE = rocp_sdk_bits_;                                                               \\
    }

ROCPROFILER_SDK_CEREAL_NAMESPACE_BEGIN
"""


def render_save(recs):
    o = [PREAMBLE.format(file="save.hpp", what="writing every rocprofiler-sdk struct a tool "
                         "receives to a cereal archive."), SAVE_HEAD]
    # `save_fields` writes the members; `save` calls it (so a type's members can be
    # written inside another object, as the *_api_ext record does).
    for name, kind, plan in recs:
        o.append("\ntemplate <typename ArchiveT>\nvoid\nsave_fields(ArchiveT& ar, const %s& data)"
                 "\n{\n" % name)
        if kind == "union":
            how, what = plan
            if how == "ui32":
                for b in what:
                    o.append('    ROCP_SDK_SAVE_DATA_BITFIELD("%s", ui32.%s);\n' % (b, b))
            else:
                o.append("    ROCP_SDK_SAVE_DATA_FIELD(%s);\n" % what)
        else:
            if not plan:
                o.append("    (void) ar;\n    (void) data;\n")
            for how, m, key, extra in plan:
                o.append(save_line(how, m, key, extra))
        o.append("}\n")
        if name == "rocprofiler_buffer_tracing_hip_api_ext_record_t":
            continue
        o.append("\ntemplate <typename ArchiveT>\nvoid\nsave(ArchiveT& ar, const %s& data)\n{\n"
                 "    save_fields(ar, data);\n}\n" % name)
    o.append(SAVE_TAIL)
    return "".join(o)


def save_line(how, m, key, extra):
    if how == "value":
        if key == m:
            return "    ROCP_SDK_SAVE_DATA_FIELD(%s);\n" % m
        return '    ROCP_SDK_SAVE_DATA_VALUE("%s", %s);\n' % (key, m)
    if how == "bitfield":
        return '    ROCP_SDK_SAVE_DATA_BITFIELD("%s", %s);\n' % (key, m)
    if how == "cstr":
        return "    ROCP_SDK_SAVE_DATA_CSTR(%s);\n" % m
    if how == "user_data":
        return '    ROCP_SDK_SAVE_DATA_VALUE("%s", %s.value);\n' % (key, m)
    if how == "hex":
        return ('    ROCP_SDK_SAVE_VALUE("%s", ::rocprofiler::sdk::utility::as_hex(data.%s.handle, '
                '16));\n' % (key, m))
    if how in ("array", "ptrarray"):
        return ('    ROCP_SDK_SAVE_VALUE("%s", ::rocprofiler::sdk::serialization::copy_array('
                'data.%s, data.%s));\n' % (key, m, extra))
    if how == "queue":
        return ('    ROCP_SDK_SAVE_VALUE("%s", static_cast<uint64_t>(data.%s ? data.%s->id : 0));\n'
                % (key, m, m))
    raise ValueError(how)


def render_load(recs):
    o = [PREAMBLE.format(file="load.hpp", what="reading back, from a cereal archive, what "
                         "save.hpp writes."), LOAD_HEAD]
    for name, kind, plan in recs:
        o.append("\ntemplate <typename ArchiveT>\nvoid\nload(ArchiveT& ar, %s& data)\n{\n" % name)
        if kind == "union":
            how, what = plan
            if how == "ui32":
                for b in what:
                    o.append('    ROCP_SDK_LOAD_DATA_BITFIELD("%s", ui32.%s);\n' % (b, b))
            else:
                o.append("    ROCP_SDK_LOAD_DATA_FIELD(%s);\n" % what)
        else:
            lines = []
            for how, m, key, extra in plan:
                if extra == "const":
                    continue
                if how == "value":
                    lines.append("    ROCP_SDK_LOAD_DATA_FIELD(%s);\n" % m if key == m else
                                 '    ROCP_SDK_LOAD_DATA_VALUE("%s", %s);\n' % (key, m))
                elif how == "bitfield":
                    lines.append('    ROCP_SDK_LOAD_DATA_BITFIELD("%s", %s);\n' % (key, m))
                elif how == "cstr":
                    lines.append("    ROCP_SDK_LOAD_DATA_CSTR(%s);\n" % m)
                elif how == "user_data":
                    lines.append('    ROCP_SDK_LOAD_DATA_VALUE("%s", %s.value);\n' % (key, m))
            if not lines:
                lines = ["    (void) ar;\n    (void) data;\n"]
            o.extend(lines)
        o.append("}\n")
    o.append("\nROCPROFILER_SDK_CEREAL_NAMESPACE_END\n")
    return "".join(o)


def main():
    saved = gen_abi_facts.HEADERS
    gen_abi_facts.HEADERS = HEADERS
    try:
        text = gen_abi_facts.preprocess()
    finally:
        gen_abi_facts.HEADERS = saved
    ast = c_parser.CParser().parse(text, filename="<capi>")
    types = Types(ast)
    recs = records(types)
    os.makedirs(OUT_DIR, exist_ok=True)
    for file, body in (("save.hpp", render_save(recs)), ("load.hpp", render_load(recs))):
        with open(os.path.join(OUT_DIR, file), "w") as f:
            f.write(body)
    print("wrote %s/{save,load}.hpp: %d types (%d members)"
          % (os.path.relpath(OUT_DIR), len(recs),
             sum(len(p) for _, k, p in recs if k == "struct")))


if __name__ == "__main__":
    sys.exit(main())
