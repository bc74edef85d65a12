//! The option spaces as the one table of docs/tune.md, generated from the data
//! ([`crate::fs::options::SPACES`]); the test fails when the document and the data differ and
//! prints the table to paste.

use crate::fs::options::{Place, SPACES};

/// The table: one row per factor, default first among its values, weakening values marked.
pub fn table() -> String {
    let mut o = String::from(
        "| Filesystem | Option | Where | Default, then values tried | Durability | Why it might matter | Seeds |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for s in SPACES {
        for f in s.factors {
            let values: Vec<String> = f
                .values
                .iter()
                .map(|v| {
                    let n = format!("`{}`", v.name());
                    if v.weakens { format!("{n} ⚠") } else { n }
                })
                .collect();
            let weakens = f.values.iter().any(|v| v.weakens);
            let place = match f.place {
                Place::Mkfs => "mkfs",
                Place::Mount => "mount",
                Place::Prop => "property",
            };
            o.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                s.fs,
                f.name,
                place,
                values.join(", "),
                if weakens { "⚠ weakens" } else { "safe" },
                f.why.split_whitespace().collect::<Vec<_>>().join(" "),
                if f.seeds.is_empty() { "—" } else { f.seeds }
            ));
        }
    }
    o
}

/// The invalid combinations and the options left out, as a list.
pub fn exclusions() -> String {
    let mut o = String::new();
    for s in SPACES {
        for c in s.conflicts {
            o.push_str(&format!(
                "- {}: `{}` with `{}` is refused: {}\n",
                s.fs,
                c.a.1,
                c.b.1,
                c.why.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
    }
    for s in SPACES {
        for (opt, why) in s.left_out {
            o.push_str(&format!(
                "- {}: `{opt}` is left out: {}\n",
                s.fs,
                why.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    #[test]
    fn docs_tune_md_holds_the_option_table_and_exclusions_of_the_data() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tune.md"))
            .expect("docs/tune.md");
        for (what, text) in [
            ("table", super::table()),
            ("exclusions", super::exclusions()),
        ] {
            assert!(
                doc.contains(&text),
                "docs/tune.md's option {what} differs from src/fs/options; paste:\n{text}"
            );
        }
    }
}
