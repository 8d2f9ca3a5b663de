#!/bin/sh
# Regenerates exports.txt (the exported symbols of Debian's
# libhsa-runtime64.so.1, each with the table slot it trampolines through) from
# the ROCm 5.2 header and library on this machine. The slot order itself is
# rocwasm-ids's hsa_table (`cargo xtask gen-names`).
set -eu
cd "$(dirname "$0")"
python3 - <<'PY'
import re, subprocess
src = open('/usr/include/hsa/hsa_api_trace.h').read()
slots = set()
for key, name in [('core', 'CoreApiTable'), ('amd_ext', 'AmdExtTable'),
                  ('finalizer_ext', 'FinalizerExtTable'), ('image_ext', 'ImageExtTable')]:
    body = re.search(r'struct ' + name + r' \{(.*?)\n\};', src, re.S).group(1)
    names = re.findall(r'(\w+)_fn;', body)
    slots.update(names)

syms = subprocess.run(['readelf', '--dyn-syms', '-W', '/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1'],
                      capture_output=True, text=True, check=True).stdout
exports = sorted({l.split()[7].split('@')[0] for l in syms.splitlines()
                  if len(l.split()) >= 8 and l.split()[3] == 'FUNC' and l.split()[6] != 'UND'})
lines = ["# Functions exported by Debian's libhsa-runtime64.so.1 (ROCm 5.2) under ROCR_1.",
         "# `name` trampolines through the table slot of the same name; `name slot` through `slot`;",
         "# `name -` is implemented directly (not in any table). Regenerate: sim/hsa/tables/regen.sh"]
for e in exports:
    if e in slots:
        lines.append(e)
        continue
    alias = re.sub(r'_acq_rel$', '_scacq_screl', e)
    alias = re.sub(r'_acquire$', '_scacquire', alias)
    alias = re.sub(r'_release$', '_screlease', alias)
    lines.append('%s %s' % (e, alias if alias in slots else '-'))
open('exports.txt', 'w').write('\n'.join(lines) + '\n')
PY
