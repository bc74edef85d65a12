//! The order a concurrent replay keeps: ARTC's resource rules (SOSP'13). Each recorded thread
//! keeps its own order; across threads a call waits only for the earlier calls it shares a
//! resource with: the same handle or path, a namespace change (create, rename, unlink, mkdir,
//! rmdir, link, symlink) against a path above or below it, and so an fsync after the writes on
//! its handle. [`depends`] states the rule for one pair of calls; [`Order`] applies it to a
//! stream of calls without comparing pairs.
//!
//! **Why it is cheap.** [`Order`] keeps, per resource, the last call that touched it, so a
//! call's waits are found with a few map lookups per component of its path (O(depth)), never
//! by scanning earlier calls. Calls on one handle or one path are all ordered with each other,
//! so waiting for the last one covers the ones before it. Calls *below* a directory are not
//! ordered with each other (two files in one directory), so for those the index keeps the
//! last call per lane: a lane runs its calls in order, so waiting for a lane's last call below
//! the directory covers all of that lane's earlier ones. Memory: the distinct paths times the
//! lanes, not the trace's length.

use super::trace::{Call, Event, open_flags};
use std::collections::HashMap;

/// Whether `e` changes the namespace (creates, removes or renames a name).
fn changes_names(e: &Event) -> bool {
    matches!(
        e.c,
        Call::Mkdir | Call::Rmdir | Call::Unlink | Call::Rename | Call::Link | Call::Symlink
    ) || (e.c == Call::Open && e.fl & open_flags::CREATE != 0)
}

/// The paths `e` names (its path and its second path).
fn paths(e: &Event) -> impl Iterator<Item = &str> {
    [&e.p, &e.p2].into_iter().flatten().map(String::as_str)
}

/// The directories above `p`, nearest last (`a`, `a/b` for `a/b/c`); none for `.`.
fn ancestors(p: &str) -> impl Iterator<Item = &str> {
    p.match_indices('/').map(move |(i, _)| &p[..i])
}

/// ARTC's rules for one pair: whether `later` must wait for `earlier`. A thread's own order is
/// always kept; across threads two calls are ordered when they act on the same handle or path,
/// or when either changes the namespace and the other names a path above or below the changed
/// one. [`Order`] keeps exactly these (its tests check it against this function).
pub fn depends(earlier: &Event, later: &Event) -> bool {
    if earlier.tid == later.tid {
        return true;
    }
    if earlier.h.is_some() && earlier.h == later.h {
        return true;
    }
    if paths(earlier).any(|p| paths(later).any(|q| p == q)) {
        return true;
    }
    let nested = |p: &str, q: &str| ancestors(q).any(|a| a == p) || ancestors(p).any(|a| a == q);
    (changes_names(earlier) || changes_names(later))
        && paths(earlier).any(|p| paths(later).any(|q| nested(p, q)))
}

/// A call a lane waits for: lane `lane` has finished its call number `seq` (trace order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// The lane.
    pub lane: usize,
    /// The call's number in the trace.
    pub seq: u64,
}

/// The last call per lane: lane → call number.
type PerLane = HashMap<usize, u64>;

/// The per-resource index of last calls (see the module's doc).
#[derive(Debug, Default)]
pub struct Order {
    /// Last call on each handle.
    handle: HashMap<u32, Wait>,
    /// Last call naming each path.
    path: HashMap<String, Wait>,
    /// Last namespace change of each path.
    change: HashMap<String, Wait>,
    /// Per lane, the last call naming the path or a path below it.
    any_below: HashMap<String, PerLane>,
    /// Per lane, the last namespace change of the path or of a path below it.
    change_below: HashMap<String, PerLane>,
}

impl Order {
    /// An empty index.
    pub fn new() -> Order {
        Order::default()
    }

    /// The calls of other lanes that call `seq` (`e`, run on `lane`) must wait for: at most
    /// one per lane, the latest. Then `e` is entered as its resources' last call.
    pub fn waits(&mut self, seq: u64, lane: usize, e: &Event) -> Vec<Wait> {
        let mut w: Vec<Wait> = Vec::new();
        let mut add = |x: Wait| {
            if x.lane == lane {
                return;
            }
            match w.iter_mut().find(|y| y.lane == x.lane) {
                Some(y) => y.seq = y.seq.max(x.seq),
                None => w.push(x),
            }
        };
        let change = changes_names(e);
        if let Some(h) = e.h {
            self.handle.get(&h).copied().into_iter().for_each(&mut add);
        }
        for p in paths(e) {
            self.path.get(p).copied().into_iter().for_each(&mut add);
            for (&l, &s) in self.change_below.get(p).into_iter().flatten() {
                add(Wait { lane: l, seq: s });
            }
            for a in ancestors(p) {
                self.change.get(a).copied().into_iter().for_each(&mut add);
                if change {
                    self.path.get(a).copied().into_iter().for_each(&mut add);
                }
            }
            if change {
                for (&l, &s) in self.any_below.get(p).into_iter().flatten() {
                    add(Wait { lane: l, seq: s });
                }
            }
        }
        let me = Wait { lane, seq };
        if let Some(h) = e.h {
            self.handle.insert(h, me);
        }
        for p in paths(e) {
            self.path.insert(p.to_string(), me);
            if change {
                self.change.insert(p.to_string(), me);
            }
            for a in ancestors(p).chain(std::iter::once(p)) {
                mark(&mut self.any_below, a, me);
                if change {
                    mark(&mut self.change_below, a, me);
                }
            }
        }
        w
    }
}

/// Enter `me` as its lane's last call at or below `a`.
fn mark(map: &mut HashMap<String, PerLane>, a: &str, me: Wait) {
    match map.get_mut(a) {
        Some(m) => {
            m.insert(me.lane, me.seq);
        }
        None => {
            map.insert(a.to_string(), HashMap::from([(me.lane, me.seq)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::exec::tests::ev;

    #[test]
    fn two_threads_sharing_a_file_are_ordered_and_unrelated_ones_are_not() {
        let w = ev(0, Call::Write, Some(1), None);
        let f = ev(1, Call::Fsync, Some(1), None);
        assert!(depends(&w, &f), "an fsync waits for the writes on its file");
        let other = ev(1, Call::Write, Some(2), None);
        assert!(!depends(&w, &other), "writes to two files are independent");
        let mk = ev(0, Call::Mkdir, None, Some("d"));
        let create = {
            let mut e = ev(1, Call::Open, Some(3), Some("d/f"));
            e.fl = open_flags::CREATE | open_flags::WRITE;
            e
        };
        assert!(depends(&mk, &create), "a create waits for its directory");
        let stat_elsewhere = ev(1, Call::Stat, None, Some("e/g"));
        assert!(!depends(&mk, &stat_elsewhere));
        assert!(
            !depends(&mk, &ev(1, Call::Stat, None, Some("dd/x"))),
            "a name that merely starts like the directory is not below it"
        );
        let same_thread = ev(0, Call::Stat, None, Some("z"));
        assert!(depends(&w, &same_thread), "a thread's own order is kept");

        let mut o = Order::new();
        assert!(o.waits(0, 0, &w).is_empty());
        assert!(o.waits(1, 1, &other).is_empty(), "unrelated: no wait");
        assert_eq!(o.waits(2, 1, &f), vec![Wait { lane: 0, seq: 0 }]);
    }

    /// Random small traces: every pair `depends` orders is ordered by the index's waits,
    /// directly or through other waits (vector clocks over the lanes), and the waits add no
    /// order beyond the rule (each wait is on a call the waiting one depends on).
    #[test]
    fn the_index_keeps_exactly_the_order_the_rule_states() {
        const LANES: usize = 4;
        let names = ["a", "a/b", "a/b/c", "a/bc", "d", "d/e", "."];
        let calls = [
            Call::Write,
            Call::Read,
            Call::Fsync,
            Call::Stat,
            Call::Open,
            Call::Mkdir,
            Call::Unlink,
            Call::Rename,
            Call::Rmdir,
        ];
        let mut rng = crate::engine::rng::Xoshiro::new(7);
        let mut pick = |n: usize| rng.below(n as u64) as usize;
        for _ in 0..200 {
            let mut events = Vec::new();
            for _ in 0..40 {
                let tid = pick(LANES) as u32;
                let c = calls[pick(calls.len())];
                let mut e = Event::new(tid, 0, c);
                match c.class() {
                    crate::workload::replay::trace::Class::Namespace => {
                        e.p = Some(names[pick(names.len())].into());
                        if c == Call::Rename {
                            e.p2 = Some(names[pick(names.len())].into());
                        }
                    }
                    _ if c == Call::Open => {
                        e.p = Some(names[pick(names.len())].into());
                        e.h = Some(pick(3) as u32);
                        if pick(2) == 0 {
                            e.fl = open_flags::CREATE;
                        }
                    }
                    _ => e.h = Some(pick(3) as u32),
                }
                events.push(e);
            }
            let mut o = Order::new();
            let mut clocks: Vec<[i64; LANES]> = Vec::new();
            let mut last: [Option<usize>; LANES] = [None; LANES];
            for (seq, e) in events.iter().enumerate() {
                let lane = e.tid as usize;
                let mut vc = last[lane].map_or([-1; LANES], |i| clocks[i]);
                for w in o.waits(seq as u64, lane, e) {
                    assert!(
                        depends(&events[w.seq as usize], e),
                        "a wait the rule does not ask for: {:?} before {e:?}",
                        events[w.seq as usize]
                    );
                    let theirs = clocks[w.seq as usize];
                    for l in 0..LANES {
                        vc[l] = vc[l].max(theirs[l]);
                    }
                }
                vc[lane] = seq as i64;
                for (i, earlier) in events[..seq].iter().enumerate() {
                    if depends(earlier, e) {
                        assert!(
                            vc[earlier.tid as usize] >= i as i64,
                            "{earlier:?} (call {i}) not ordered before {e:?} (call {seq})"
                        );
                    }
                }
                clocks.push(vc);
                last[lane] = Some(seq);
            }
        }
    }
}
