//! A directory's state as trace entries (names, types, sizes, link counts, symlink targets;
//! never contents), and `--anonymize`'s stable name tokens.

use super::trace::{Entry, EntryType};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Most entries a state may hold (a starting tree is kept in memory by replay).
pub const MAX_ENTRIES: usize = 1_000_000;

/// The entries under `root` (not following symlinks), parents before children, sorted by
/// path within a directory. Sockets, FIFOs and devices are skipped and counted.
pub fn scan(root: &Path) -> std::io::Result<(Vec<Entry>, u64)> {
    let mut out = Vec::new();
    let mut skipped = 0;
    let mut inodes: HashMap<(u64, u64), u64> = HashMap::new();
    walk(root, "", &mut out, &mut skipped, &mut inodes)?;
    Ok((out, skipped))
}

fn walk(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<Entry>,
    skipped: &mut u64,
    inodes: &mut HashMap<(u64, u64), u64>,
) -> std::io::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        let Some(n) = name.to_str() else {
            *skipped += 1;
            continue;
        };
        let path = dir.join(n);
        let rel = if prefix.is_empty() {
            n.to_string()
        } else {
            format!("{prefix}/{n}")
        };
        let Ok(md) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if out.len() >= MAX_ENTRIES {
            return Err(std::io::Error::other(format!(
                "more than {MAX_ENTRIES} entries under the directory"
            )));
        }
        let ft = md.file_type();
        if ft.is_dir() {
            out.push(entry(rel.clone(), EntryType::Dir));
            walk(&path, &rel, out, skipped, inodes)?;
        } else if ft.is_file() {
            let mut e = entry(rel, EntryType::File);
            e.size = md.len();
            e.nlink = md.nlink();
            if md.nlink() > 1 {
                let next = inodes.len() as u64 + 1;
                e.ino = *inodes.entry((md.dev(), md.ino())).or_insert(next);
            }
            out.push(e);
        } else if ft.is_symlink() {
            let mut e = entry(rel, EntryType::Symlink);
            e.target = std::fs::read_link(&path)
                .ok()
                .and_then(|t| t.to_str().map(str::to_string));
            out.push(e);
        } else {
            *skipped += 1;
        }
    }
    Ok(())
}

fn entry(p: String, t: EntryType) -> Entry {
    Entry {
        p,
        t,
        size: 0,
        nlink: 0,
        ino: 0,
        target: None,
    }
}

/// Replaces each path component by a stable token (`n1`, `n2`…): the same name always gets
/// the same token within a trace, so the tree's shape and every call's target are kept.
#[derive(Debug, Default)]
pub struct Anonymizer {
    names: HashMap<String, String>,
}

impl Anonymizer {
    /// The path with each component tokenized (`.` stays).
    pub fn path(&mut self, p: &str) -> String {
        if p == "." {
            return p.to_string();
        }
        p.split('/')
            .map(|c| {
                let n = self.names.len() + 1;
                self.names
                    .entry(c.to_string())
                    .or_insert_with(|| format!("n{n}"))
                    .clone()
            })
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// How an end state differs from the expected one: entries missing, extra, or of another
/// type or size (directories' sizes are not compared). Each item is a line for the reader.
pub fn compare(expected: &[Entry], actual: &[Entry]) -> Vec<String> {
    let want: HashMap<&str, &Entry> = expected.iter().map(|e| (e.p.as_str(), e)).collect();
    let have: HashMap<&str, &Entry> = actual.iter().map(|e| (e.p.as_str(), e)).collect();
    let mut out = Vec::new();
    for e in expected {
        match have.get(e.p.as_str()) {
            None => out.push(format!("{} missing", e.p)),
            Some(a) if a.t != e.t => out.push(format!("{} is a {:?}, not a {:?}", e.p, a.t, e.t)),
            Some(a) if e.t == EntryType::File && a.size != e.size => {
                out.push(format!("{} has {} bytes, not {}", e.p, a.size, e.size))
            }
            _ => {}
        }
    }
    for a in actual {
        if !want.contains_key(a.p.as_str()) {
            out.push(format!("{} not in the recorded end state", a.p));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_scans_parents_first_with_sizes_links_and_symlinks() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::fs::write(d.path().join("a/f"), vec![0u8; 1234]).unwrap();
        std::fs::hard_link(d.path().join("a/f"), d.path().join("h")).unwrap();
        std::os::unix::fs::symlink("a/f", d.path().join("s")).unwrap();
        let (es, skipped) = scan(d.path()).unwrap();
        assert_eq!(skipped, 0);
        let ps: Vec<&str> = es.iter().map(|e| e.p.as_str()).collect();
        assert_eq!(ps, vec!["a", "a/f", "h", "s"]);
        assert_eq!(es[1].size, 1234);
        assert_eq!(es[1].nlink, 2);
        assert_eq!(es[1].ino, es[2].ino);
        assert_eq!(es[3].target.as_deref(), Some("a/f"));
        assert!(compare(&es, &es).is_empty());
        let mut other = es.clone();
        other[1].size = 1;
        other.pop();
        assert_eq!(compare(&es, &other).len(), 2);
    }

    #[test]
    fn anonymized_names_are_stable_tokens() {
        let mut a = Anonymizer::default();
        assert_eq!(a.path("db/base/x"), "n1/n2/n3");
        assert_eq!(a.path("x/db"), "n3/n1");
        assert_eq!(a.path("."), ".");
    }
}
