//! `fsbench record --pid`: the process attached to and every process it had already started
//! (PostgreSQL's checkpointer, WAL writer and background writer are the postmaster's
//! children, forked long before a capture attaches). Recording only the attached process's
//! threads misses what those do: WAL segments recycled by rename, relation files unlinked
//! at a checkpoint, SLRU files grown by the checkpointer, so the replayed end state differs
//! from the recorded one (docs/replay.md, "End state").

/// `pid` and its descendants now, parents before children (each once; a process that ends
/// while walked is left out).
pub fn processes(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        for k in children(out[i]) {
            if !out.contains(&k) {
                out.push(k);
            }
        }
        i += 1;
    }
    out
}

/// The processes `pid`'s threads have started and that still run, from
/// `/proc/PID/task/TID/children`.
pub fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for t in threads(pid) {
        let kids =
            std::fs::read_to_string(format!("/proc/{pid}/task/{t}/children")).unwrap_or_default();
        out.extend(
            kids.split_whitespace()
                .filter_map(|k| k.parse::<u32>().ok()),
        );
    }
    out
}

/// The threads of process `pid` now (`pid` itself when it cannot be read).
pub fn threads(pid: u32) -> Vec<u32> {
    let mut t: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
                .collect()
        })
        .unwrap_or_default();
    if t.is_empty() {
        t.push(pid);
    }
    t.sort_unstable();
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_tree_holds_the_children_started_before() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let me = std::process::id();
        let tree = processes(me);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(tree[0], me);
        assert!(tree.contains(&child.id()), "{tree:?}");
        assert!(threads(me).contains(&me));
    }
}
