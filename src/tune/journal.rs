//! The journal of a tune's finished stages (`OUT/tune-journal.json`), so that `fsbench tune
//! --resume OUT` after Ctrl-C skips them.
//!
//! The search is a function of its stages' results: the same flags and the same results give
//! the same next stage. So a resumed tune runs the search again from the start with the flags
//! it was started with (kept in the journal), and each stage that the journal holds as
//! finished, with the same setups and rounds, is read back from its results.json instead of
//! run. The first stage that differs or was not finished runs for real, in a directory of its
//! own (the interrupted one is kept as it is). The budget counts the recorded seconds of the
//! stages read back, so a resumed tune does not get a fresh hour.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The journal's file name in OUT.
pub const FILE: &str = "tune-journal.json";

/// One finished stage.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// Its name (`screening`, `race-1`, `confirmation`).
    pub stage: String,
    /// The setups it ran, as `--fs` variants.
    pub variants: Vec<String>,
    /// Its rounds.
    pub rounds: u32,
    /// Its output directory (results.json).
    pub out: PathBuf,
    /// Its wall time, seconds.
    pub seconds: f64,
}

/// The journal: the command line the tune was started with, and the stages it finished.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Journal {
    /// The arguments after `fsbench` (`tune --fs ext4 …`), without `--resume`.
    pub args: Vec<String>,
    /// The finished stages, in order.
    pub stages: Vec<Entry>,
}

impl Journal {
    /// Read OUT's journal; bad input (exit 2) when OUT holds none.
    pub fn load(out: &Path) -> crate::Result<Journal> {
        let path = out.join(FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            crate::Error::invalid(
                "--resume",
                format!(
                    "{} holds no tune journal ({}: {e}); resume the OUT of an interrupted \
                     fsbench tune",
                    out.display(),
                    FILE
                ),
            )
        })?;
        serde_json::from_str(&text)
            .map_err(|e| crate::Error::invalid("--resume", format!("{}: {e}", path.display())))
    }

    /// Write it to OUT (after each finished stage, so Ctrl-C loses at most the stage running).
    pub fn save(&self, out: &Path) -> crate::Result<()> {
        std::fs::create_dir_all(out).map_err(|e| crate::Error::io("cannot create", out, e))?;
        let path = out.join(FILE);
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| crate::Error::Other(format!("cannot serialize the journal: {e}")))?;
        std::fs::write(&path, text + "\n").map_err(|e| crate::Error::io("cannot write", &path, e))
    }

    /// The finished stage a resumed search's `n`-th stage (0-based) can be read back from:
    /// the same name, setups and rounds (the caller stops reading back at the first stage
    /// that runs for real).
    pub fn replay(
        &self,
        n: usize,
        stage: &str,
        variants: &[String],
        rounds: u32,
    ) -> Option<&Entry> {
        self.stages
            .get(n)
            .filter(|e| e.stage == stage && e.variants == variants && e.rounds == rounds)
    }

    /// The seconds the finished stages took (the budget already spent).
    pub fn seconds(&self) -> f64 {
        self.stages.iter().map(|e| e.seconds).sum()
    }
}

/// The command line to keep: the process's arguments after the program, `--resume` dropped.
pub fn args_of(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in argv.iter().skip(1) {
        if skip {
            skip = false;
            continue;
        }
        if a == "--resume" {
            skip = true;
            continue;
        }
        if a.starts_with("--resume=") {
            continue;
        }
        out.push(a.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(stage: &str, v: &[&str]) -> Entry {
        Entry {
            stage: stage.into(),
            variants: v.iter().map(|s| s.to_string()).collect(),
            rounds: 2,
            out: PathBuf::from(format!("/o/{stage}")),
            seconds: 10.0,
        }
    }

    #[test]
    fn a_stage_is_read_back_only_with_the_same_name_setups_and_rounds() {
        let j = Journal {
            args: vec!["tune".into()],
            stages: vec![
                entry("screening", &["ext4", "ext4-noatime"]),
                entry("race-1", &["a", "b"]),
            ],
        };
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(
            j.replay(0, "screening", &v(&["ext4", "ext4-noatime"]), 2)
                .is_some()
        );
        assert!(j.replay(0, "screening", &v(&["ext4"]), 2).is_none());
        assert!(
            j.replay(0, "screening", &v(&["ext4", "ext4-noatime"]), 3)
                .is_none()
        );
        assert!(j.replay(1, "race-1", &v(&["a", "b"]), 2).is_some());
        assert!(j.replay(2, "confirmation", &v(&["a"]), 2).is_none());
        assert_eq!(j.seconds(), 20.0);
        let dir = tempfile::tempdir().unwrap();
        j.save(dir.path()).unwrap();
        assert_eq!(Journal::load(dir.path()).unwrap(), j);
        let e = Journal::load(&dir.path().join("nothing")).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
    }

    #[test]
    fn the_kept_command_line_drops_resume() {
        let argv: Vec<String> = [
            "fsbench",
            "tune",
            "--fs",
            "ext4",
            "--resume",
            "o",
            "--resume=p",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(args_of(&argv), ["tune", "--fs", "ext4"]);
    }
}
