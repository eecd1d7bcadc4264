//! The verdicts at the end of a `--preset seeds` run, as text. By default
//! the answer on one screen ([`render`]): per seed a line with its word,
//! a line per group of places that got the same word from the same test
//! (its values as a range beside the threshold, and what the layout costs
//! a reader where the claim is about one), then what the seed itself
//! reported, in the same figures. `show RUN --why` prints every place's
//! evidence instead ([`render_why`]). Every line fits [`WIDTH`] columns,
//! wrapped under its own indent.
//!
//! The design decision: places share a line by word and deciding test,
//! never by file system alone, so a place that reads otherwise (marginal,
//! mixed, not judged) keeps a line of its own however many places agree
//! around it; a line whose places ran on a busy machine says how many.

mod full;
mod grouped;

use std::fmt::Write as _;

use crate::record::{Case, Verdict};

/// The widest line printed.
pub const WIDTH: usize = 120;

/// The question the verdicts answer, their block's first line.
const QUESTION: &str = "verdicts: does this kernel still show what each seed reported, and where?";

/// The verdicts block on one screen (empty for a run without verdicts):
/// `cases` are the run's, to say which places ran on a busy machine.
pub fn render(verdicts: &[Verdict], cases: &[Case]) -> String {
    let mut s = String::new();
    if verdicts.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\n{QUESTION} (fslab show RUN --why: every place)");
    for v in verdicts {
        s.push_str(&grouped::render(v, cases));
    }
    s
}

/// The verdicts block with a row per place and all its evidence (`show
/// --why`); empty for a run without verdicts.
pub fn render_why(verdicts: &[Verdict]) -> String {
    full::render(verdicts)
}

/// `line` broken at spaces into lines of at most [`WIDTH`] columns, the
/// continuations indented by `indent`; a word longer than a line stands
/// alone. Ends with a newline.
pub(super) fn wrap(line: &str, indent: usize) -> String {
    let mut out = String::new();
    let mut current = String::new();
    let lead: String = line.chars().take_while(|c| *c == ' ').collect();
    for word in line[lead.len()..].split(' ') {
        let start = if out.is_empty() && current.is_empty() { lead.clone() } else { String::new() };
        if current.is_empty() {
            current = start + word;
        } else if current.chars().count() + 1 + word.chars().count() <= WIDTH {
            current.push(' ');
            current.push_str(word);
        } else {
            out.push_str(&current);
            out.push('\n');
            current = " ".repeat(indent) + word;
        }
    }
    out.push_str(&current);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests;
