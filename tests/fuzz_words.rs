//! `mkfs=` word splitting against POSIX word splitting (issue 30, item 3): random hostile
//! inputs (quotes, backslashes, newlines, `$`, backticks, globs, operators, Unicode spaces);
//! every input `fsbench::plan::words::split` accepts must give exactly the words `/bin/sh`
//! gives for the same command line, and every input it refuses says why. Runs without root.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::io::Write;
use std::process::{Command, Stdio};

const ALPHABET: &[&str] = &[
    "a", "b", "-m", "1", "=", " ", " ", "\t", "\n", "'", "'", "\"", "\"", "\\", "\\", "$", "`",
    "*", "?", "[", "]", "~", "#", ";", "|", "&", "(", ")", "<", ">", "é", "\u{a0}", "^", "{", "}",
    "!", "%", ",", ":", "/",
];

/// The words sh makes of `text` as the arguments of a command, for many texts in one sh.
fn sh_words(texts: &[String]) -> Vec<Vec<String>> {
    let mut script = String::new();
    for (i, t) in texts.iter().enumerate() {
        // `set --` takes the words; ` ;` ends the line even after a final line continuation.
        script.push_str(&format!(
            "set -- {t} ;\nprintf '\\036{i}\\037'; for a do printf '%s\\037' \"$a\"; done\n"
        ));
    }
    // On stdin: a long script would exceed the argument-size limit.
    let mut child = Command::new("/bin/sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut result = Vec::new();
    for rec in text.split('\u{1e}').skip(1) {
        let mut parts: Vec<String> = rec.split('\u{1f}').map(str::to_string).collect();
        parts.pop(); // after the last separator
        parts.remove(0); // the index
        result.push(parts);
    }
    result
}

#[test]
fn accepted_words_are_exactly_what_sh_makes_of_them() {
    let n: usize = std::env::var("FSBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let mut r = Xoshiro256PlusPlus::seed_from_u64(303);
    let mut accepted: Vec<(String, Vec<String>)> = Vec::new();
    let mut refused = 0;
    for _ in 0..n {
        let len = r.next_u32() % 12;
        let text: String = (0..len)
            .map(|_| ALPHABET[(r.next_u32() as usize) % ALPHABET.len()])
            .collect();
        match fsbench::plan::words::split(&text) {
            Ok(w) => accepted.push((text, w)),
            Err(why) => {
                assert!(!why.is_empty());
                refused += 1;
            }
        }
    }
    // Hostile inputs that must be accepted and agree.
    for t in [
        "-L 'a b' \"c d\" e\\ f",
        "'$HOME' \"\\$x\" \\$y '`id`'",
        "\"a\\\nb\" c\\\nd",
        "'it'\\''s'",
        "\"\\a\\\\\"",
        "a\u{a0}b é",
        "-O ^has_journal x~ y#",
        "'*' \"?\" \\[",
    ] {
        let w = fsbench::plan::words::split(t).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        accepted.push((t.to_string(), w));
    }
    let texts: Vec<String> = accepted.iter().map(|(t, _)| t.clone()).collect();
    let sh = sh_words(&texts);
    assert_eq!(sh.len(), accepted.len());
    for ((text, ours), theirs) in accepted.iter().zip(&sh) {
        assert_eq!(ours, theirs, "{text:?}");
    }
    eprintln!(
        "words: {} inputs, {} accepted and equal to /bin/sh's words, {refused} refused",
        n + 8,
        accepted.len()
    );
    assert!(accepted.len() > n / 10 && refused > n / 10);
}

/// What a shell would expand is refused, not passed on literally.
#[test]
fn expansions_are_refused_with_the_fix() {
    for t in [
        "-L $USER",
        "-L \"${x}\"",
        "`id`",
        "-d *",
        "~/x",
        "a;b",
        "a|b",
    ] {
        let e = fsbench::plan::words::split(t).unwrap_err();
        assert!(
            e.contains("quote") || e.contains("single quotes"),
            "{t:?}: {e}"
        );
    }
}
