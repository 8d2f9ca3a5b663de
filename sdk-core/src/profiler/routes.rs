//! Snapshot maintenance: the routes producers read (each domain's
//! entries), rebuilt on every configuration change and frozen when the
//! configuration locks.

use super::*;

impl Profiler {
    pub(super) fn rebuild(&self, cfg: &Config) {
        let mut domains: Vec<Vec<Entry>> = Domain::ALL.iter().map(|_| Vec::new()).collect();
        for (state, services) in cfg.contexts.values() {
            for &d in Domain::ALL {
                let (b, c, e) = d.kinds();
                let buffer = b
                    .and_then(|b| services.buffer.get(&b))
                    .and_then(|(f, id)| Some((f.clone(), cfg.buffers.get(id)?.clone())));
                let callback = c
                    .and_then(|c| services.callback.get(&c))
                    .map(|(f, s)| (f.clone(), Arc::clone(s)));
                // Dispatch counting needs the dispatches (their ids, times
                // and external ids) without buffering or calling back any.
                let counting = (d == Domain::KernelDispatch && !services.counters.is_empty())
                    .then(|| services.counting.flatten())
                    .flatten()
                    .and_then(|id| cfg.buffers.get(&id))
                    .map(|b| (Arc::clone(b), Arc::from(services.counters.as_slice())));
                let tool_counting = d == Domain::KernelDispatch && services.tool_counting();
                if buffer.is_none() && callback.is_none() && counting.is_none() && !tool_counting {
                    continue;
                }
                let request = services
                    .external
                    .as_ref()
                    .filter(|(kinds, _)| e.is_some_and(|e| kinds.contains(&e)))
                    .map(|(_, s)| Arc::clone(s));
                domains[d.index()].push(Entry {
                    ctx: Arc::clone(state),
                    buffer_kind: b.map_or(0, |k| k.raw()),
                    buffer,
                    callback,
                    request,
                    counting,
                    tool_counting,
                });
            }
        }
        let contexts = cfg.contexts.values().map(|(s, _)| Arc::clone(s)).collect();
        *self.live.write().unwrap_or_else(|e| e.into_inner()) =
            Arc::new(Routes::new(domains, contexts));
        self.update_mask(cfg);
    }

    pub(super) fn update_mask(&self, _cfg: &Config) {
        let routes = self.routes();
        let mut mask = 0;
        for &d in Domain::ALL {
            if routes.domains[d.index()].iter().any(|e| e.ctx.is_active()) {
                mask |= d.bit();
            }
        }
        self.active.store(mask, Release);
    }

    #[inline]
    pub(super) fn routes(&self) -> RoutesRef<'_> {
        match self.frozen.get() {
            Some(r) => RoutesRef::Frozen(r),
            None => RoutesRef::Live(self.live.read().unwrap_or_else(|e| e.into_inner()).clone()),
        }
    }
}
