"""Which roctx range each kernel dispatch belongs to: the pure logic of
`range-kernel-time` (no host calls, so it runs under plain CPython too).

The rule
--------
A dispatch belongs to the **innermost roctx push/pop range open on its
launching thread when it was launched**.

Records give us, per thread, marker calls (`roctxRangePushA`,
`roctxRangePop`: thread id, correlation id) and kernel dispatches (the
launching thread's id and the correlation id of the launching API call).
Internal correlation ids are handed out at API entry from one
process-wide counter, so on one thread they increase in program order.
The rule therefore needs no clock: on thread T, replay T's pushes, pops
and launches in correlation-id order with a stack of open ranges; a
launch falls in the range on top of the stack. GPU timestamps say nothing
about *where in the program* a kernel was launched (it may run long after
the range closed), and CPU timestamps of different tables come from
different sources in replayed traces; correlation ids are exact.

Details:

- a pop with no open range on its thread is ignored (roctx returns -1)
  and counted;
- a range still open at the end of the trace stays open to the end;
- only push/pop ranges nest per thread; `roctxRangeStartA`/`Stop` ranges
  and `roctxMarkA` marks are ignored;
- a dispatch's GPU time is `end - start` (0 if end < start); it counts
  toward its innermost range (`SelfNs`) and toward every enclosing range
  (`TotalNs`);
- records may arrive in any order and in any batch: everything is sorted
  at `fini`.

Ranges are named by their roctx message when the plugin saw it (live runs:
callback tracing of `roctxRangePushA` gives the `message` argument), else
`range@<correlation id of the push>`. A row is a *path* of names from the
outermost range (`outer > inner`); ranges with the same path (a loop body
pushed 100 times, on any thread) are summed into one row.
"""

from array import array

NO_RANGE = "(no range)"
SEP = " > "


class Attribution:
    """Collects marker calls and dispatches; `report()` attributes them."""

    def __init__(self):
        # Per thread: marker events as signed correlation ids (+push, -pop),
        # and dispatches as parallel arrays. 8-16 bytes a record.
        self._events = {}
        self._dispatch_corr = {}
        self._dispatch_ns = {}
        self.messages = {}

    def push(self, thread, corr):
        self._events.setdefault(thread, array("q")).append(corr)

    def pop(self, thread, corr):
        self._events.setdefault(thread, array("q")).append(-corr)

    def dispatch(self, thread, corr, start, end):
        self._dispatch_corr.setdefault(thread, array("Q")).append(corr)
        self._dispatch_ns.setdefault(thread, array("Q")).append(end - start if end > start else 0)

    def name(self, push_corr):
        return self.messages.get(push_corr) or f"range@{push_corr}"

    def report(self):
        """`(rows, unmatched_pops)`; rows map a path (tuple of names, `()`
        outside any range) to `[instances, kernels, self_ns, total_ns]`."""
        paths = {}
        unmatched = 0

        def row(path):
            return paths.setdefault(path, [0, 0, 0, 0])

        for thread in set(self._events) | set(self._dispatch_corr):
            events = sorted(self._events.get(thread, ()), key=abs)
            corrs = self._dispatch_corr.get(thread, array("Q"))
            nss = self._dispatch_ns.get(thread, array("Q"))
            launches = sorted(range(len(corrs)), key=corrs.__getitem__)
            stack = []  # names of the open ranges, outermost first
            e = 0
            for i in launches:
                corr = corrs[i]
                # Markers before this launch (a tie, which valid traces
                # never have, counts the marker first).
                while e < len(events) and abs(events[e]) <= corr:
                    unmatched += _apply(events[e], stack, self, row)
                    e += 1
                path = tuple(stack)
                r = row(path)
                r[1] += 1
                r[2] += nss[i]
                for depth in range(1, len(path)):  # strict ancestors
                    row(path[:depth])[3] += nss[i]
            while e < len(events):
                unmatched += _apply(events[e], stack, self, row)
                e += 1
        # A path's total: its own time plus its descendants' (added above).
        for r in paths.values():
            r[3] += r[2]
        return paths, unmatched


def _apply(event, stack, attribution, row):
    """One marker event on `stack`; 1 for an unmatched pop, else 0."""
    if event > 0:
        stack.append(attribution.name(event))
        row(tuple(stack))[0] += 1
        return 0
    if stack:
        stack.pop()
        return 0
    return 1
