//! Word splitting of a variant's `mkfs=` value, exactly as a POSIX shell splits a command
//! line, for the subset of the shell that means the same without one.
//!
//! The words go to mkfs as an argv, never through a shell, so anything a shell would
//! *expand* or *interpret* would silently mean something else here. Those are refused, with
//! the fix (quote it), instead of kept literal: `$HOME`, `` `cmd` ``, `$(cmd)` (unquoted or
//! inside `"…"`), unquoted globs `*`, `?`, `[`, a leading `~` or `#`, the operators
//! `| & ; < > ( )`, and an unquoted newline (it would end the command). Inside `'…'`
//! everything is literal, as in the shell, so `'$x'` reaches mkfs as the two characters.
//! Only space, tab and (quoted-away) newline separate words; other Unicode spaces are
//! literal, as in `sh`. A test (`tests/fuzz_words.rs`) checks every accepted input against
//! `/bin/sh`'s own splitting.

/// Split `text` into argv words; `Err` says what a shell would have done differently and how
/// to write it instead.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let at_start = cur.is_none();
        match c {
            ' ' | '\t' => words.extend(cur.take()),
            '\0' => return Err("a NUL byte cannot be part of an argument".into()),
            '\n' => {
                return Err(
                    "an unquoted newline would end the command in a shell; put the words on one line"
                        .into(),
                );
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some('\0') => {
                            return Err("a NUL byte cannot be part of an argument".into());
                        }
                        Some(ch) => w.push(ch),
                        None => return Err("unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => w.push(ch),
                            // Line continuation: a shell drops both characters.
                            Some('\n') => {}
                            Some('\0') => {
                                return Err("a NUL byte cannot be part of an argument".into());
                            }
                            Some(ch) => {
                                w.push('\\');
                                w.push(ch);
                            }
                            None => return Err("unterminated \" quote".into()),
                        },
                        Some(ch @ ('$' | '`')) => return Err(expansion(ch)),
                        Some('\0') => {
                            return Err("a NUL byte cannot be part of an argument".into());
                        }
                        Some(ch) => w.push(ch),
                        None => return Err("unterminated \" quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some('\0') => return Err("a NUL byte cannot be part of an argument".into()),
                Some(ch) => cur.get_or_insert_with(String::new).push(ch),
                None => return Err("trailing \\ (escape nothing); remove it or quote it".into()),
            },
            '$' | '`' => return Err(expansion(c)),
            '*' | '?' | '[' => {
                return Err(format!(
                    "'{c}' unquoted would be a filename pattern in a shell; fsbench runs mkfs \
                     without one, so write '{c}' in quotes if you mean the character"
                ));
            }
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => {
                return Err(format!(
                    "'{c}' is shell syntax (pipes, redirections, lists) and mkfs runs without a \
                     shell; quote it ('{c}') if it is part of an argument"
                ));
            }
            '~' | '#' if at_start => {
                return Err(format!(
                    "a word starting with '{c}' is {} in a shell; quote it ('{c}…') to pass it as is",
                    if c == '~' {
                        "a home directory"
                    } else {
                        "a comment"
                    }
                ));
            }
            c => cur.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(cur);
    Ok(words)
}

fn expansion(c: char) -> String {
    let what = if c == '$' {
        "a variable or command substitution ($…)"
    } else {
        "a command substitution (`…`)"
    };
    format!(
        "'{c}' starts {what} in a shell, and mkfs runs without one; write it in single quotes \
         ('{c}…') to pass it literally"
    )
}

/// Quote `w` so that [`split`] (and a shell) give it back as one word.
pub fn quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.,:/+@%^".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_sh() {
        let w = split("-L 'my label' -E \"a b\" x\\ y").unwrap();
        assert_eq!(w, ["-L", "my label", "-E", "a b", "x y"]);
        assert_eq!(split("  -m\t1 ").unwrap(), ["-m", "1"]);
        assert_eq!(split("''").unwrap(), [""]);
        assert_eq!(
            split("'$HOME' \"\\$x\" a\\\nb").unwrap(),
            ["$HOME", "$x", "ab"]
        );
        assert_eq!(split("a\u{a0}b").unwrap(), ["a\u{a0}b"]);
        assert_eq!(
            split("-O ^has_journal x~ y#").unwrap(),
            ["-O", "^has_journal", "x~", "y#"]
        );
    }

    #[test]
    fn refuses_what_a_shell_would_expand_or_interpret() {
        for (text, needle) in [
            ("-L $HOSTNAME", "variable"),
            ("-L \"$(id)\"", "variable"),
            ("-L `id`", "command substitution"),
            ("-d *", "filename pattern"),
            ("x; rm -rf /", "shell syntax"),
            ("~/journal", "home directory"),
            ("#x", "comment"),
            ("-m 1\n-E x", "newline"),
            ("'a", "unterminated"),
            ("x\\", "trailing"),
        ] {
            let e = split(text).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn quote_round_trips() {
        for w in ["plain", "", "a b", "it's", "$HOME", "*", "~x", "a\nb", "\\"] {
            assert_eq!(split(&quote(w)).unwrap(), [w], "{w:?}");
        }
    }
}
